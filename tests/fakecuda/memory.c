/*
 * fakecuda: simulated device memory.
 *
 * The device is one anonymous MAP_NORESERVE mapping of FAKECUDA_MEM_MB: device pointers are
 * real addresses in it, so copies really move bytes and untouched memory costs nothing. A
 * first-fit heap (device_heap.c, 256-byte alignment) hands out ranges of it, so
 * fragmentation and CUDA_ERROR_OUT_OF_MEMORY are reproducible. FAKECUDA_MEM_USED_BY_OTHERS_MB
 * is taken at start, as if another process held it. VMM physical handles (vmm.c) are taken
 * from the same heap.
 */
#include "fakecuda.h"

#include <sys/mman.h>

#define DEV_ALIGN 256
#define RELEASE_AT (64u << 20)     /* give pages of freed blocks this big back to the OS */

static uint8_t *dev_base;
static uint64_t dev_size;
static fc_heap dev_heap;
static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;

CUresult fc_memory_init(void)
{
    dev_size = fc_cfg.mem_bytes;
    void *p = mmap(NULL, dev_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fc_warn("fakecuda: cannot map %llu bytes of simulated device memory",
                (unsigned long long)dev_size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    dev_base = p;
    if (fc_heap_init(&dev_heap, dev_size, DEV_ALIGN) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (fc_cfg.others_bytes) {
        fc_block *b = fc_heap_alloc(&dev_heap, fc_cfg.others_bytes, DEV_ALIGN);
        if (b)
            b->kind = FC_ALLOC_OTHERS;
    }
    return CUDA_SUCCESS;
}

CUresult fc_dev_take(size_t size, int kind, void *owner, CUdeviceptr *out)
{
    pthread_mutex_lock(&dev_lock);
    fc_block *b = fc_heap_alloc(&dev_heap, size, DEV_ALIGN);
    if (b) {
        b->kind = kind;
        b->owner = owner;
        b->id = (unsigned long long)fc_next_id();
    }
    pthread_mutex_unlock(&dev_lock);
    if (!b)
        return CUDA_ERROR_OUT_OF_MEMORY;   /* *out untouched */
    *out = (CUdeviceptr)(uintptr_t)(dev_base + b->off);
    return CUDA_SUCCESS;
}

static void release_pages(uint64_t off, uint64_t size)
{
    if (size < RELEASE_AT)
        return;
    uintptr_t a = (uintptr_t)(dev_base + off), e = a + size;
    a = (a + 4095) & ~(uintptr_t)4095;
    e &= ~(uintptr_t)4095;
    if (e > a)
        madvise((void *)a, e - a, MADV_DONTNEED);
}

void fc_dev_give(CUdeviceptr p)
{
    pthread_mutex_lock(&dev_lock);
    fc_block *b = fc_heap_find(&dev_heap, (uint64_t)((uint8_t *)(uintptr_t)p - dev_base));
    if (b) {
        release_pages(b->off, b->size);
        fc_heap_free(&dev_heap, b);
    }
    pthread_mutex_unlock(&dev_lock);
}

static int in_dev_region(uintptr_t p)
{
    return dev_base && p >= (uintptr_t)dev_base && p - (uintptr_t)dev_base < dev_size;
}

/* Free a device allocation of one of the given kinds; INVALID_VALUE if p is not the start
 * of one. */
static CUresult dev_free_kinds(CUdeviceptr p, int k1, int k2, int k3, void **owner,
                               uint64_t *size)
{
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (!in_dev_region((uintptr_t)p))
        return r;
    pthread_mutex_lock(&dev_lock);
    fc_block *b = fc_heap_find(&dev_heap, (uint64_t)((uint8_t *)(uintptr_t)p - dev_base));
    if (b && (b->kind == k1 || b->kind == k2 || b->kind == k3)) {
        if (owner)
            *owner = b->owner;
        if (size)
            *size = b->size;
        release_pages(b->off, b->size);
        fc_heap_free(&dev_heap, b);
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&dev_lock);
    return r;
}

CUresult fc_dev_free_async(CUdeviceptr p, void **owner, uint64_t *size)
{
    return dev_free_kinds(p, FC_ALLOC_ASYNC, FC_ALLOC_DEVICE, -1, owner, size);
}

int fc_classify(uintptr_t p, size_t n, fc_range_info *info)
{
    info->host_flags = 0;
    info->ctx = NULL;
    if (in_dev_region(p)) {
        int ok = 0;
        pthread_mutex_lock(&dev_lock);
        fc_block *b = fc_heap_containing(&dev_heap, (uint64_t)(p - (uintptr_t)dev_base));
        if (b && b->kind != FC_ALLOC_OTHERS && b->kind != FC_ALLOC_VMM &&
            (p - (uintptr_t)dev_base) + n <= b->off + b->size) {
            ok = 1;
            info->kind = FC_MEM_DEVICE;
            info->alloc_kind = b->kind;
            info->base = (uintptr_t)dev_base + b->off;
            info->size = b->req;
            info->id = b->id;
            info->ctx = b->owner;
        }
        pthread_mutex_unlock(&dev_lock);
        return ok ? 0 : -1;
    }
    int v = fc_vmm_lookup(p, n, info);
    if (v)
        return v > 0 ? 0 : -1;
    if (fc_host_lookup(p, n, info))
        return 0;
    info->kind = FC_MEM_PAGEABLE;
    info->alloc_kind = 0;
    info->base = p;
    info->size = n;
    info->id = 0;
    return 0;
}

int fc_is_device_range(uintptr_t p, size_t n)
{
    fc_range_info info;
    return p && fc_classify(p, n ? n : 1, &info) == 0 && info.kind == FC_MEM_DEVICE;
}

/* ---- entry points ---- */

static CUresult alloc_common(CUdeviceptr *dptr, size_t bytesize, int kind)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_dev_take(bytesize, kind, c, dptr);
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    return alloc_common(dptr, bytesize, FC_ALLOC_DEVICE);
}

CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                    size_t Height, unsigned int ElementSizeBytes)
{
    if (!pPitch || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = (WidthInBytes + 511) / 512 * 512;
    if (Height > SIZE_MAX / pitch)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = alloc_common(dptr, pitch * Height, FC_ALLOC_DEVICE);
    if (r == CUDA_SUCCESS)
        *pPitch = pitch;
    return r;
}

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return alloc_common(dptr, bytesize, FC_ALLOC_MANAGED);
}

/* cuMemFree waits for the context's outstanding work, as cudaFree does on real hardware. */
CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    fc_range_info freed;  /* a pending copy may still move the bytes freed */
    if (fc_classify((uintptr_t)dptr, 1, &freed) == 0)
        fc_copy_engine_drain_range(freed.base, freed.size);
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    void *owner = NULL;
    uint64_t size = 0;
    r = dev_free_kinds(dptr, FC_ALLOC_DEVICE, FC_ALLOC_MANAGED, FC_ALLOC_ASYNC, &owner, &size);
    if (r == CUDA_SUCCESS) {
        fc_pool_note_free(owner, size);
        fc_sleep_until(atomic_load(&c->all_max));
    }
    return r;
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free, size_t *total)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!free || !total)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&dev_lock);
    *free = (size_t)(dev_heap.capacity - dev_heap.used);
    *total = (size_t)dev_heap.capacity;
    pthread_mutex_unlock(&dev_lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    fc_range_info info;
    if (fc_classify((uintptr_t)dptr, 1, &info) != 0 || info.kind != FC_MEM_DEVICE)
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = (CUdeviceptr)info.base;
    if (psize)
        *psize = info.size;
    return CUDA_SUCCESS;
}
