/*
 * fakecuda: virtual memory management (cuMemAddressReserve/Free, cuMemCreate/Release,
 * cuMemMap/Unmap, cuMemSetAccess, cuMemGetAllocationGranularity).
 *
 * Address ranges come from a separate PROT_NONE reservation (8x the device size, at least
 * 64 GiB, never backed until mapped). cuMemCreate takes its bytes from the device heap, so
 * VMM and cuMemAlloc share one capacity and one out-of-memory point. cuMemMap backs the range
 * with fresh read/write pages: bytes copied there are real, but two mappings of one physical
 * handle do not share contents (a simplification of this test double).
 */
#include "fakecuda.h"

#include <stdlib.h>
#include <sys/mman.h>

#define GRANULARITY ((uint64_t)2 << 20)

typedef struct vmm_handle {
    unsigned long long id;
    CUdeviceptr phys;         /* block taken from the device heap */
    size_t size;
    int maps;
    int released;
    struct vmm_handle *next;
} vmm_handle;

typedef struct vmm_map {
    uintptr_t va;
    size_t size;
    vmm_handle *h;
    struct vmm_map *next;
} vmm_map;

static pthread_mutex_t vmm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t va_once = PTHREAD_ONCE_INIT;
static uint8_t *va_base;
static uint64_t va_size;
static fc_heap va_heap;
static vmm_handle *handles;
static vmm_map *maps;

static void va_init(void)
{
    uint64_t sz = fc_cfg.mem_bytes * 8;
    if (sz < ((uint64_t)64 << 30))
        sz = (uint64_t)64 << 30;
    sz = (sz + GRANULARITY - 1) / GRANULARITY * GRANULARITY;
    /* over-map by one granule so the usable range can start 2 MiB-aligned */
    void *p = mmap(NULL, sz + GRANULARITY, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    uintptr_t a = ((uintptr_t)p + GRANULARITY - 1) & ~(uintptr_t)(GRANULARITY - 1);
    if (fc_heap_init(&va_heap, sz, GRANULARITY) != 0)
        return;
    va_size = sz;
    va_base = (uint8_t *)a;
}

static vmm_handle *handle_find(CUmemGenericAllocationHandle hd)
{
    for (vmm_handle *h = handles; h; h = h->next)
        if ((CUmemGenericAllocationHandle)(uintptr_t)h == hd)
            return h;
    return NULL;
}

static vmm_map *map_at(uintptr_t p)
{
    for (vmm_map *m = maps; m; m = m->next)
        if (p >= m->va && p - m->va < m->size)
            return m;
    return NULL;
}

static int in_va(uintptr_t p)
{
    return va_base && p >= (uintptr_t)va_base && p - (uintptr_t)va_base < va_size;
}

int fc_vmm_lookup(uintptr_t p, size_t n, fc_range_info *info)
{
    if (!in_va(p))
        return 0;
    int ok = 1;
    pthread_mutex_lock(&vmm_lock);
    vmm_map *first = map_at(p);
    for (uintptr_t cur = p; ok && cur < p + n;) {
        vmm_map *m = map_at(cur);
        if (!m)
            ok = 0;
        else
            cur = m->va + m->size;
    }
    if (ok && first) {
        info->kind = FC_MEM_DEVICE;
        info->alloc_kind = FC_ALLOC_VMM;
        info->base = first->va;
        info->size = first->size;
        info->id = first->h->id;
        info->ctx = fc_current_ctx();
    }
    pthread_mutex_unlock(&vmm_lock);
    return ok && first ? 1 : -1;
}

static CUresult check_prop(const CUmemAllocationProp *prop)
{
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    return prop->location.id == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity,
                                               const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!granularity)
        return CUDA_ERROR_INVALID_VALUE;
    r = check_prop(prop);
    if (r != CUDA_SUCCESS)
        return r;
    *granularity = (size_t)GRANULARITY;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                     CUdeviceptr addr, unsigned long long flags)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!ptr || size == 0 || size % GRANULARITY || flags != 0 ||
        (alignment & (alignment - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&va_once, va_init);
    if (!va_base)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&vmm_lock);
    fc_block *b = fc_heap_alloc(&va_heap, size, alignment);   /* addr is only a hint */
    if (b)
        b->kind = FC_ALLOC_VMM;
    pthread_mutex_unlock(&vmm_lock);
    if (!b)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *ptr = (CUdeviceptr)(uintptr_t)(va_base + b->off);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!in_va((uintptr_t)ptr))
        return CUDA_ERROR_INVALID_VALUE;
    r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm_lock);
    fc_block *b = fc_heap_find(&va_heap, (uint64_t)((uint8_t *)(uintptr_t)ptr - va_base));
    int mapped = 0;
    for (vmm_map *m = maps; b && m; m = m->next)
        if (m->va >= (uintptr_t)ptr && m->va < (uintptr_t)ptr + b->size)
            mapped = 1;
    /* this fake insists that the range is unmapped first */
    if (b && b->req == size && !mapped) {
        fc_heap_free(&va_heap, b);
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&vmm_lock);
    return r;
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                             const CUmemAllocationProp *prop, unsigned long long flags)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!handle || size == 0 || size % GRANULARITY || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    r = check_prop(prop);
    if (r != CUDA_SUCCESS)
        return r;
    vmm_handle *h = calloc(1, sizeof *h);
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r = fc_dev_take(size, FC_ALLOC_VMM, h, &h->phys);
    if (r != CUDA_SUCCESS) {
        free(h);
        return r;
    }
    h->size = size;
    h->id = (unsigned long long)fc_next_id();
    pthread_mutex_lock(&vmm_lock);
    h->next = handles;
    handles = h;
    pthread_mutex_unlock(&vmm_lock);
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
    return CUDA_SUCCESS;
}

/* caller holds vmm_lock; frees the physical memory once released and unmapped */
static void handle_maybe_free(vmm_handle *h)
{
    if (!h->released || h->maps)
        return;
    for (vmm_handle **pp = &handles; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    fc_dev_give(h->phys);
    free(h);
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm_lock);
    vmm_handle *h = handle_find(handle);
    if (h && !h->released) {
        h->released = 1;      /* physical memory goes when the last mapping does */
        handle_maybe_free(h);
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&vmm_lock);
    return r;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                          CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    uintptr_t p = (uintptr_t)ptr;
    if (flags != 0 || size == 0 || size % GRANULARITY || offset % GRANULARITY ||
        !in_va(p) || p % GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    vmm_map *m = malloc(sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm_lock);
    vmm_handle *h = handle_find(handle);
    fc_block *res = fc_heap_containing(&va_heap, (uint64_t)(p - (uintptr_t)va_base));
    int overlap = 0;
    for (vmm_map *x = maps; x; x = x->next)
        if (x->va < p + size && p < x->va + x->size)
            overlap = 1;
    if (h && !h->released && offset <= h->size && size <= h->size - offset && res &&
        p + size <= (uintptr_t)va_base + res->off + res->size && !overlap) {
        if (mmap((void *)p, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            *m = (vmm_map){ p, size, h, maps };
            maps = m;
            m = NULL;
            h->maps++;
            r = CUDA_SUCCESS;
        }
    }
    pthread_mutex_unlock(&vmm_lock);
    free(m);
    return r;
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    uintptr_t p = (uintptr_t)ptr;
    if (!in_va(p) || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm_lock);
    /* the range must be exactly covered by whole mappings */
    size_t covered = 0;
    int ok = 1;
    for (uintptr_t cur = p; ok && cur < p + size;) {
        vmm_map *m = map_at(cur);
        if (!m || m->va != cur || m->size > p + size - cur)
            ok = 0;
        else {
            covered += m->size;
            cur += m->size;
        }
    }
    if (ok && covered == size) {
        for (vmm_map **pp = &maps; *pp;) {
            vmm_map *m = *pp;
            if (m->va >= p && m->va < p + size) {
                mmap((void *)m->va, m->size, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
                *pp = m->next;
                m->h->maps--;
                handle_maybe_free(m->h);
                free(m);
            } else {
                pp = &m->next;
            }
        }
        r = CUDA_SUCCESS;
    } else {
        r = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&vmm_lock);
    return r;
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                size_t count)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!desc || count == 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++)
        if (desc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE && desc[i].location.id != 0)
            return CUDA_ERROR_INVALID_DEVICE;
    fc_range_info info;
    return fc_vmm_lookup((uintptr_t)ptr, size, &info) > 0 ? CUDA_SUCCESS
                                                          : CUDA_ERROR_INVALID_VALUE;
}
