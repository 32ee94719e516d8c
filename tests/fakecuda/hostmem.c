/*
 * fakecuda: page-locked ("pinned") host memory. cuMemHostAlloc/cuMemAllocHost hand out real
 * host memory (anonymous mappings) and remember it as pinned; cuMemHostRegister remembers a
 * caller's range. Copies look ranges up here to pick the pinned or the pageable bandwidth.
 */
#include "fakecuda.h"

#include <stdlib.h>
#include <sys/mman.h>

typedef struct host_reg {
    uintptr_t p;
    size_t n;
    size_t mapped;             /* bytes mapped when the fake allocated it, else 0 */
    unsigned flags;
    unsigned long long id;
    void *ctx;
} host_reg;

static host_reg *regs;
static size_t nregs, capregs;
static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;

/* caller holds host_lock */
static host_reg *find_overlap(uintptr_t p, size_t n)
{
    for (size_t i = 0; i < nregs; i++)
        if (p < regs[i].p + regs[i].n && regs[i].p < p + n)
            return &regs[i];
    return NULL;
}

static host_reg *find_start(uintptr_t p)
{
    for (size_t i = 0; i < nregs; i++)
        if (regs[i].p == p)
            return &regs[i];
    return NULL;
}

static CUresult add(uintptr_t p, size_t n, size_t mapped, unsigned flags, void *ctx)
{
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&host_lock);
    if (find_overlap(p, n)) {
        r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    } else {
        if (nregs == capregs) {
            size_t nc = capregs ? capregs * 2 : 64;
            host_reg *nr = realloc(regs, nc * sizeof *nr);
            if (!nr) {
                pthread_mutex_unlock(&host_lock);
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
            regs = nr;
            capregs = nc;
        }
        regs[nregs++] = (host_reg){ p, n, mapped, flags, (unsigned long long)fc_next_id(), ctx };
    }
    pthread_mutex_unlock(&host_lock);
    return r;
}

int fc_host_lookup(uintptr_t p, size_t n, fc_range_info *info)
{
    int found = 0;
    pthread_mutex_lock(&host_lock);
    for (size_t i = 0; i < nregs; i++) {
        host_reg *h = &regs[i];
        if (p >= h->p && p - h->p < h->n) {
            if (n <= h->n - (p - h->p)) {
                found = 1;
                info->kind = FC_MEM_PINNED;
                info->alloc_kind = 0;
                info->base = h->p;
                info->size = h->n;
                info->id = h->id;
                info->ctx = h->ctx;
                info->host_flags = h->flags;
            }
            break;
        }
    }
    pthread_mutex_unlock(&host_lock);
    return found;
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pp || bytesize == 0 ||
        (Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                             CU_MEMHOSTALLOC_WRITECOMBINED)))
        return CUDA_ERROR_INVALID_VALUE;
    void *p = mmap(NULL, bytesize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r = add((uintptr_t)p, bytesize, bytesize, Flags, c);
    if (r != CUDA_SUCCESS) {
        munmap(p, bytesize);
        return r;
    }
    *pp = p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
    fc_copy_engine_drain();  /* a pending copy may still read or write it */
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    size_t mapped = 0;
    pthread_mutex_lock(&host_lock);
    host_reg *h = find_start((uintptr_t)p);
    if (h && h->mapped) {
        mapped = h->mapped;
        *h = regs[--nregs];
    }
    pthread_mutex_unlock(&host_lock);
    if (!mapped)
        return CUDA_ERROR_INVALID_VALUE;
    munmap(p, mapped);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!p || bytesize == 0 ||
        (Flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                             CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY)))
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_is_device_range((uintptr_t)p, 1))
        return CUDA_ERROR_INVALID_VALUE;
    return add((uintptr_t)p, bytesize, 0, Flags, c);
}

CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    return cuMemHostRegister_v2(p, bytesize, Flags);
}

CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    fc_copy_engine_drain();  /* a pending copy may still read or write it */
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    pthread_mutex_lock(&host_lock);
    host_reg *h = find_start((uintptr_t)p);
    if (h && !h->mapped) {
        *h = regs[--nregs];
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&host_lock);
    return r;
}

CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    fc_range_info info;
    if (!pdptr || Flags != 0 || !fc_host_lookup((uintptr_t)p, 1, &info))
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p;      /* unified addressing: the same address */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    fc_range_info info;
    if (!pFlags || !fc_host_lookup((uintptr_t)p, 1, &info))
        return CUDA_ERROR_INVALID_VALUE;
    *pFlags = info.host_flags;
    return CUDA_SUCCESS;
}
