/*
 * fakecuda: stream-ordered allocation (cuMemAllocAsync, cuMemAllocFromPoolAsync,
 * cuMemFreeAsync and their _ptsz twins) and memory pools. They share the device heap; the
 * stream order is honoured trivially: memory is taken and given back at the call.
 * Pools keep no cache, so "reserved" equals "used".
 */
#include "fakecuda.h"

#include <stdlib.h>

typedef struct fc_pool {
    uint32_t magic;
    _Atomic int64_t used, high;
    uint64_t release_threshold;
    int reuse[3];
} fc_pool;

static fc_pool default_pool = { .magic = FC_MAGIC_POOL, .reuse = { 1, 1, 1 } };
static fc_pool *_Atomic current_pool = &default_pool;

static int pool_valid(CUmemoryPool p)
{
    return p && ((fc_pool *)p)->magic == FC_MAGIC_POOL;
}

void fc_pool_note_free(void *owner, uint64_t size)
{
    fc_pool *p = owner;
    if (p && p->magic == FC_MAGIC_POOL)
        atomic_fetch_sub(&p->used, (int64_t)size);
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t bytesize, fc_pool *pool, CUstream h,
                            int per_thread)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!pool)
        pool = current_pool;
    r = fc_dev_take(bytesize, FC_ALLOC_ASYNC, pool, dptr);
    if (r == CUDA_SUCCESS) {
        int64_t rounded = (int64_t)((bytesize + 255) / 256 * 256);
        fc_atomic_max(&pool->high, atomic_fetch_add(&pool->used, rounded) + rounded);
    }
    return r;
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return alloc_async(dptr, bytesize, NULL, hStream, 0);
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return alloc_async(dptr, bytesize, NULL, hStream, 1);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                         CUstream hStream)
{
    if (!pool_valid(pool))
        return CUDA_ERROR_INVALID_VALUE;
    return alloc_async(dptr, bytesize, (fc_pool *)pool, hStream, 0);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                              CUmemoryPool pool, CUstream hStream)
{
    if (!pool_valid(pool))
        return CUDA_ERROR_INVALID_VALUE;
    return alloc_async(dptr, bytesize, (fc_pool *)pool, hStream, 1);
}

static CUresult free_async(CUdeviceptr dptr, CUstream h, int per_thread)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    void *owner = NULL;
    uint64_t size = 0;
    r = fc_dev_free_async(dptr, &owner, &size);
    if (r == CUDA_SUCCESS)
        fc_pool_note_free(owner, size);
    return r;
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    fc_copy_engine_drain();  /* the fake reuses freed bytes at once */
    return free_async(dptr, hStream, 0);
}

CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    return free_async(dptr, hStream, 1);
}

/* ---- pools ---- */

CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!pool_out)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *pool_out = (CUmemoryPool)&default_pool;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    CUresult r = cuDeviceGetDefaultMemPool(pool, dev);
    if (r == CUDA_SUCCESS)
        *pool = (CUmemoryPool)current_pool;
    return r;
}

CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!pool_valid(pool))
        return CUDA_ERROR_INVALID_VALUE;
    current_pool = (fc_pool *)pool;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!pool || !poolProps)
        return CUDA_ERROR_INVALID_VALUE;
    fc_pool *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->magic = FC_MAGIC_POOL;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    *pool = (CUmemoryPool)p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
    if (!pool_valid(pool) || (fc_pool *)pool == &default_pool)
        return CUDA_ERROR_INVALID_VALUE;
    if ((fc_pool *)pool == current_pool)
        current_pool = &default_pool;
    /* real pools free outstanding allocations when they are freed; keep the struct so
     * their frees still find it */
    ((fc_pool *)pool)->magic = FC_MAGIC_DEAD;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    return pool_valid(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    if (!pool_valid(pool) || !value)
        return CUDA_ERROR_INVALID_VALUE;
    fc_pool *p = (fc_pool *)pool;
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(int *)value;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        p->release_threshold = *(cuuint64_t *)value;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:      /* only resetting to 0 is allowed */
        if (*(cuuint64_t *)value != 0)
            return CUDA_ERROR_INVALID_VALUE;
        atomic_store(&p->high, atomic_load(&p->used));
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    if (!pool_valid(pool) || !value)
        return CUDA_ERROR_INVALID_VALUE;
    fc_pool *p = (fc_pool *)pool;
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *(int *)value = p->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        *(cuuint64_t *)value = p->release_threshold;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        *(cuuint64_t *)value = (cuuint64_t)atomic_load(&p->used);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        *(cuuint64_t *)value = (cuuint64_t)atomic_load(&p->high);
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}
