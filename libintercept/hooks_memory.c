/* Device, stream-ordered, virtual (VMM) and pinned host memory. Every allocation also goes
 * into the range registry so copies can tell device, pinned and pageable memory apart, and
 * carries the STACK of the program's call as its last word (after the call is timed). */
#include "gpuwatch/trace_format.h"
#include "hooks.h"
#include "ranges.h"
#include "stack_capture.h"

/* Shared tail of every wrapper here: time the call, then record words[0..n). */
#define MEMORY_HOOK(name, call, ...)                        \
    GW_HOOK_BEGIN(name, GW_TIMED, call);                    \
    int ok = result == CUDA_SUCCESS;                        \
    (void)ok;                                               \
    __VA_ARGS__;                                            \
    GW_RECORD_AND_RETURN(GW_API_##name, words, sizeof words / sizeof words[0])

static uint64_t out_pointer(int ok, const CUdeviceptr *dptr) { return ok && dptr ? *dptr : 0; }

GW_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    MEMORY_HOOK(cuMemAlloc_v2, real(dptr, bytes),
                uint64_t ptr = out_pointer(ok, dptr);
                gw_ranges_add(GW_RANGE_DEVICE, ptr, bytes);
                uint64_t words[5] = {ptr, bytes, 0, 0, gw_stack_here()});
}

GW_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
                                      size_t height, unsigned int element_bytes)
{
    MEMORY_HOOK(cuMemAllocPitch_v2, real(dptr, pitch, width, height, element_bytes),
                uint64_t ptr = out_pointer(ok, dptr);
                uint64_t row = ok && pitch ? *pitch : 0;
                gw_ranges_add(GW_RANGE_DEVICE, ptr, row * height);
                uint64_t words[5] = {ptr, row * height, 0, row, gw_stack_here()});
}

GW_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    MEMORY_HOOK(cuMemFree_v2, real(dptr),
                if (ok && !gw_ranges_remove(GW_RANGE_DEVICE, dptr))
                    gw_ranges_remove(GW_RANGE_MANAGED, dptr);
                uint64_t words[2] = {dptr, 0});
}

GW_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
    MEMORY_HOOK(cuMemAllocManaged, real(dptr, bytes, flags),
                uint64_t ptr = out_pointer(ok, dptr);
                gw_ranges_add(GW_RANGE_MANAGED, ptr, bytes);
                uint64_t words[5] = {ptr, bytes, 0, flags, gw_stack_here()});
}

#define ALLOC_ASYNC(name)                                                               \
    GW_EXPORT CUresult name(CUdeviceptr *dptr, size_t bytes, CUstream stream)           \
    {                                                                                   \
        MEMORY_HOOK(name, real(dptr, bytes, stream),                                    \
                    uint64_t ptr = out_pointer(ok, dptr);                               \
                    gw_ranges_add(GW_RANGE_DEVICE, ptr, bytes);                         \
                    uint64_t words[5] = {ptr, bytes, gw_stream_id(stream, GW_API_##name), \
                                         0, gw_stack_here()});                          \
    }
ALLOC_ASYNC(cuMemAllocAsync)
ALLOC_ASYNC(cuMemAllocAsync_ptsz)

#define ALLOC_FROM_POOL(name)                                                           \
    GW_EXPORT CUresult name(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,         \
                            CUstream stream)                                            \
    {                                                                                   \
        MEMORY_HOOK(name, real(dptr, bytes, pool, stream),                              \
                    uint64_t ptr = out_pointer(ok, dptr);                               \
                    gw_ranges_add(GW_RANGE_DEVICE, ptr, bytes);                         \
                    uint64_t words[5] = {ptr, bytes, gw_stream_id(stream, GW_API_##name), \
                                         gw_u64(pool), gw_stack_here()});               \
    }
ALLOC_FROM_POOL(cuMemAllocFromPoolAsync)
ALLOC_FROM_POOL(cuMemAllocFromPoolAsync_ptsz)

#define FREE_ASYNC(name)                                                                \
    GW_EXPORT CUresult name(CUdeviceptr dptr, CUstream stream)                          \
    {                                                                                   \
        MEMORY_HOOK(name, real(dptr, stream),                                           \
                    if (ok) gw_ranges_remove(GW_RANGE_DEVICE, dptr);                    \
                    uint64_t words[2] = {dptr, gw_stream_id(stream, GW_API_##name)});   \
    }
FREE_ASYNC(cuMemFreeAsync)
FREE_ASYNC(cuMemFreeAsync_ptsz)

GW_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                       CUdeviceptr addr, unsigned long long flags)
{
    MEMORY_HOOK(cuMemAddressReserve, real(ptr, size, alignment, addr, flags),
                uint64_t words[3] = {out_pointer(ok, ptr), size, alignment});
}

GW_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    MEMORY_HOOK(cuMemAddressFree, real(ptr, size), uint64_t words[3] = {ptr, size, 0});
}

GW_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                               const CUmemAllocationProp *prop, unsigned long long flags)
{
    MEMORY_HOOK(cuMemCreate, real(handle, size, prop, flags),
                uint64_t words[4] = {ok && handle ? *handle : 0, size,
                                     prop ? (uint64_t)(uint32_t)prop->location.id : 0,
                                     gw_stack_here()});
}

GW_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    MEMORY_HOOK(cuMemRelease, real(handle), uint64_t words[3] = {handle, 0, 0});
}

GW_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                            CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    MEMORY_HOOK(cuMemMap, real(ptr, size, offset, handle, flags),
                if (ok) gw_ranges_add(GW_RANGE_DEVICE, ptr, size);
                uint64_t words[3] = {ptr, size, handle});
}

GW_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    MEMORY_HOOK(cuMemUnmap, real(ptr, size),
                if (ok) gw_ranges_remove(GW_RANGE_DEVICE, ptr);
                uint64_t words[3] = {ptr, size, 0});
}

GW_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
    MEMORY_HOOK(cuMemHostAlloc, real(pp, bytes, flags),
                uint64_t ptr = ok && pp ? gw_u64(*pp) : 0;
                gw_ranges_add(GW_RANGE_PINNED, ptr, bytes);
                uint64_t words[4] = {ptr, bytes, flags, gw_stack_here()});
}

GW_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytes)
{
    MEMORY_HOOK(cuMemAllocHost_v2, real(pp, bytes),
                uint64_t ptr = ok && pp ? gw_u64(*pp) : 0;
                gw_ranges_add(GW_RANGE_PINNED, ptr, bytes);
                uint64_t words[4] = {ptr, bytes, 0, gw_stack_here()});
}

GW_EXPORT CUresult cuMemFreeHost(void *p)
{
    MEMORY_HOOK(cuMemFreeHost, real(p),
                uint64_t bytes = ok ? gw_ranges_remove(GW_RANGE_PINNED, gw_u64(p)) : 0;
                uint64_t words[3] = {gw_u64(p), bytes, 0});
}

GW_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)
{
    MEMORY_HOOK(cuMemHostRegister_v2, real(p, bytes, flags),
                if (ok) gw_ranges_add(GW_RANGE_PINNED, gw_u64(p), bytes);
                uint64_t words[3] = {gw_u64(p), bytes, flags});
}

GW_EXPORT CUresult cuMemHostUnregister(void *p)
{
    MEMORY_HOOK(cuMemHostUnregister, real(p),
                uint64_t bytes = ok ? gw_ranges_remove(GW_RANGE_PINNED, gw_u64(p)) : 0;
                uint64_t words[3] = {gw_u64(p), bytes, 0});
}
