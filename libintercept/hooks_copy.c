/* Copies and memsets. The host side of each copy is classified as pinned, managed or
 * pageable from the range registry: pageable copies are what stall the host. */
#include "gpuwatch/trace_format.h"
#include "hooks.h"
#include "ranges.h"

static uint64_t copy_kind(unsigned dir, unsigned host) { return gw_copy_kind(dir, host); }

/* Direction and host kind of a copy, given which side is device memory. */
static uint64_t classify_sides(int dst_dev, uint64_t dst, int src_dev, uint64_t src)
{
    if (dst_dev && src_dev)
        return copy_kind(GW_COPY_DTOD, GW_HOST_NONE);
    if (dst_dev)
        return copy_kind(GW_COPY_HTOD, gw_host_kind(src));
    if (src_dev)
        return copy_kind(GW_COPY_DTOH, gw_host_kind(dst));
    return copy_kind(GW_COPY_HTOH, gw_host_kind(src));
}

/* The same between two unified addresses: the registry says which side is the device. */
static uint64_t classify_unified(uint64_t dst, uint64_t src)
{
    return classify_sides(gw_is_device_pointer(dst), dst, gw_is_device_pointer(src), src);
}

static void record_copy(unsigned api, uint64_t t0, uint64_t t1, CUresult result, uint64_t bytes,
                        uint64_t kind, CUstream stream, uint64_t dst, uint64_t src)
{
    uint64_t words[5] = {bytes, kind, gw_stream_id(stream, api), dst, src};
    gw_rec_call(api, t0, t1, result, words, 5);
}

/* Whether a copy of this kind can keep the host waiting for the GPU: one between host and
 * device memory that is synchronous, or asynchronous from or to pageable memory (staged
 * through the driver's pinned buffers, after the stream's earlier work). */
static int copy_may_wait(int async, uint64_t kind)
{
    unsigned dir = gw_copy_kind_dir(kind), host = gw_copy_kind_host(kind);
    if (dir != GW_COPY_HTOD && dir != GW_COPY_DTOH)
        return 0;
    return !async || host == GW_HOST_PAGEABLE;
}

/* Wrapper skeleton: `call` runs the real function (whether it is an *Async entry point is
 * api_list.h's async column); the rest is what record_copy records, its kind found before
 * the call (only the program's memory is looked up) to know whether the call may wait. */
#define COPY_HOOK(name, call, bytes, kind, stream, dst, src)                        \
    __typeof__(&name) real = GW_REAL(name);                                         \
    if (!real)                                                                      \
        return GW_NO_DRIVER;                                                        \
    if (!gw_enter())                                                                \
        return call;                                                                \
    uint64_t gw_kind = (kind);                                                      \
    int gw_waits = copy_may_wait(GW_ASYNC_##name, gw_kind);                         \
    CUresult result;                                                                \
    GW_WAIT_BEGIN(gw_waits);                                                        \
    GW_TIMED_GPU(result, call);                                                     \
    GW_WAIT_END(gw_waits);                                                          \
    record_copy(GW_API_##name, gw_t0, gw_t1, result, bytes, gw_kind, stream, dst, src); \
    gw_leave();                                                                     \
    errno = gw_saved_errno;                                                         \
    return result

#define COPY_UNIFIED(name)                                                          \
    GW_EXPORT CUresult name(CUdeviceptr dst, CUdeviceptr src, size_t bytes)         \
    {                                                                               \
        COPY_HOOK(name, real(dst, src, bytes), bytes, classify_unified(dst, src), NULL, \
                  dst, src);                                                        \
    }
COPY_UNIFIED(cuMemcpy)
COPY_UNIFIED(cuMemcpy_ptds)

#define COPY_UNIFIED_ASYNC(name)                                                    \
    GW_EXPORT CUresult name(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) \
    {                                                                               \
        COPY_HOOK(name, real(dst, src, bytes, stream), bytes, classify_unified(dst, src), \
                  stream, dst, src);                                                \
    }
COPY_UNIFIED_ASYNC(cuMemcpyAsync)
COPY_UNIFIED_ASYNC(cuMemcpyAsync_ptsz)

#define COPY_HTOD(name)                                                             \
    GW_EXPORT CUresult name(CUdeviceptr dst, const void *src, size_t bytes)         \
    {                                                                               \
        COPY_HOOK(name, real(dst, src, bytes), bytes,                            \
                  copy_kind(GW_COPY_HTOD, gw_host_kind(gw_u64(src))), NULL, dst, gw_u64(src)); \
    }
COPY_HTOD(cuMemcpyHtoD_v2)
COPY_HTOD(cuMemcpyHtoD_v2_ptds)

#define COPY_HTOD_ASYNC(name)                                                       \
    GW_EXPORT CUresult name(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) \
    {                                                                               \
        COPY_HOOK(name, real(dst, src, bytes, stream), bytes,                    \
                  copy_kind(GW_COPY_HTOD, gw_host_kind(gw_u64(src))), stream, dst, gw_u64(src)); \
    }
COPY_HTOD_ASYNC(cuMemcpyHtoDAsync_v2)
COPY_HTOD_ASYNC(cuMemcpyHtoDAsync_v2_ptsz)

#define COPY_DTOH(name)                                                             \
    GW_EXPORT CUresult name(void *dst, CUdeviceptr src, size_t bytes)               \
    {                                                                               \
        COPY_HOOK(name, real(dst, src, bytes), bytes,                            \
                  copy_kind(GW_COPY_DTOH, gw_host_kind(gw_u64(dst))), NULL, gw_u64(dst), src); \
    }
COPY_DTOH(cuMemcpyDtoH_v2)
COPY_DTOH(cuMemcpyDtoH_v2_ptds)

#define COPY_DTOH_ASYNC(name)                                                       \
    GW_EXPORT CUresult name(void *dst, CUdeviceptr src, size_t bytes, CUstream stream) \
    {                                                                               \
        COPY_HOOK(name, real(dst, src, bytes, stream), bytes,                    \
                  copy_kind(GW_COPY_DTOH, gw_host_kind(gw_u64(dst))), stream, gw_u64(dst), src); \
    }
COPY_DTOH_ASYNC(cuMemcpyDtoHAsync_v2)
COPY_DTOH_ASYNC(cuMemcpyDtoHAsync_v2_ptsz)

#define COPY_DTOD(name)                                                             \
    GW_EXPORT CUresult name(CUdeviceptr dst, CUdeviceptr src, size_t bytes)         \
    {                                                                               \
        COPY_HOOK(name, real(dst, src, bytes), bytes,                            \
                  copy_kind(GW_COPY_DTOD, GW_HOST_NONE), NULL, dst, src);           \
    }
COPY_DTOD(cuMemcpyDtoD_v2)
COPY_DTOD(cuMemcpyDtoD_v2_ptds)

#define COPY_DTOD_ASYNC(name)                                                       \
    GW_EXPORT CUresult name(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) \
    {                                                                               \
        COPY_HOOK(name, real(dst, src, bytes, stream), bytes,                    \
                  copy_kind(GW_COPY_DTOD, GW_HOST_NONE), stream, dst, src);         \
    }
COPY_DTOD_ASYNC(cuMemcpyDtoDAsync_v2)
COPY_DTOD_ASYNC(cuMemcpyDtoDAsync_v2_ptsz)

/* The pointer a 2D/3D descriptor names for one side, and whether it is device memory. */
static uint64_t side_pointer(CUmemorytype type, const void *host, CUdeviceptr device, int *is_device)
{
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        *is_device = 0;
        return gw_u64(host);
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_ARRAY:
        *is_device = 1;
        return device;
    default: /* unified: ask the registry */
        *is_device = gw_is_device_pointer(device);
        return device;
    }
}

struct copy_shape { uint64_t bytes, kind, dst, src; };

/* The 2D and 3D descriptors are different structs with the same field names. */
static struct copy_shape shape_sides(CUmemorytype dst_type, const void *dst_host,
                                     CUdeviceptr dst_device, CUmemorytype src_type,
                                     const void *src_host, CUdeviceptr src_device, uint64_t bytes)
{
    struct copy_shape shape = {.bytes = bytes};
    int dst_dev, src_dev;
    shape.dst = side_pointer(dst_type, dst_host, dst_device, &dst_dev);
    shape.src = side_pointer(src_type, src_host, src_device, &src_dev);
    shape.kind = classify_sides(dst_dev, shape.dst, src_dev, shape.src);
    return shape;
}

static struct copy_shape shape_2d(const CUDA_MEMCPY2D *p)
{
    if (!p)
        return (struct copy_shape){0};
    return shape_sides(p->dstMemoryType, p->dstHost, p->dstDevice, p->srcMemoryType, p->srcHost,
                       p->srcDevice, (uint64_t)p->WidthInBytes * p->Height);
}

static struct copy_shape shape_3d(const CUDA_MEMCPY3D *p)
{
    if (!p)
        return (struct copy_shape){0};
    return shape_sides(p->dstMemoryType, p->dstHost, p->dstDevice, p->srcMemoryType, p->srcHost,
                       p->srcDevice,
                       (uint64_t)p->WidthInBytes * p->Height * (p->Depth ? p->Depth : 1));
}

#define COPY_2D(name, type, shaper)                                                 \
    GW_EXPORT CUresult name(const type *p)                                          \
    {                                                                               \
        struct copy_shape s = shaper(p);                                            \
        COPY_HOOK(name, real(p), s.bytes, s.kind, NULL, s.dst, s.src);           \
    }
#define COPY_2D_ASYNC(name, type, shaper)                                           \
    GW_EXPORT CUresult name(const type *p, CUstream stream)                         \
    {                                                                               \
        struct copy_shape s = shaper(p);                                            \
        COPY_HOOK(name, real(p, stream), s.bytes, s.kind, stream, s.dst, s.src); \
    }
COPY_2D(cuMemcpy2D_v2, CUDA_MEMCPY2D, shape_2d)
COPY_2D(cuMemcpy2D_v2_ptds, CUDA_MEMCPY2D, shape_2d)
COPY_2D_ASYNC(cuMemcpy2DAsync_v2, CUDA_MEMCPY2D, shape_2d)
COPY_2D_ASYNC(cuMemcpy2DAsync_v2_ptsz, CUDA_MEMCPY2D, shape_2d)
COPY_2D(cuMemcpy3D_v2, CUDA_MEMCPY3D, shape_3d)
COPY_2D(cuMemcpy3D_v2_ptds, CUDA_MEMCPY3D, shape_3d)
COPY_2D_ASYNC(cuMemcpy3DAsync_v2, CUDA_MEMCPY3D, shape_3d)
COPY_2D_ASYNC(cuMemcpy3DAsync_v2_ptsz, CUDA_MEMCPY3D, shape_3d)

#define COPY_PEER(name)                                                             \
    GW_EXPORT CUresult name(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,    \
                            CUcontext src_ctx, size_t bytes)                        \
    {                                                                               \
        COPY_HOOK(name, real(dst, dst_ctx, src, src_ctx, bytes), bytes,          \
                  copy_kind(GW_COPY_PEER, GW_HOST_NONE), NULL, dst, src);           \
    }
COPY_PEER(cuMemcpyPeer)
COPY_PEER(cuMemcpyPeer_ptds)

#define COPY_PEER_ASYNC(name)                                                       \
    GW_EXPORT CUresult name(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,    \
                            CUcontext src_ctx, size_t bytes, CUstream stream)       \
    {                                                                               \
        COPY_HOOK(name, real(dst, dst_ctx, src, src_ctx, bytes, stream), bytes,  \
                  copy_kind(GW_COPY_PEER, GW_HOST_NONE), stream, dst, src);         \
    }
COPY_PEER_ASYNC(cuMemcpyPeerAsync)
COPY_PEER_ASYNC(cuMemcpyPeerAsync_ptsz)

/* A batch is recorded as one event: total bytes, the first pair's kind, and the count. */
static struct copy_shape shape_batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                     size_t count)
{
    struct copy_shape shape = {0};
    for (size_t i = 0; sizes && i < count; i++)
        shape.bytes += sizes[i];
    if (dsts && srcs && count)
        shape.kind = classify_unified(dsts[0], srcs[0]);
    shape.dst = count;
    return shape;
}

#define COPY_BATCH_V1(name)                                                         \
    GW_EXPORT CUresult name(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, \
                            CUmemcpyAttributes *attrs, size_t *attr_idxs, size_t nattrs, \
                            size_t *fail_idx, CUstream stream)                      \
    {                                                                               \
        struct copy_shape s = shape_batch(dsts, srcs, sizes, count);                \
        COPY_HOOK(name,                                                          \
                  real(dsts, srcs, sizes, count, attrs, attr_idxs, nattrs, fail_idx, stream), \
                  s.bytes, s.kind, stream, s.dst, 0);                               \
    }
COPY_BATCH_V1(cuMemcpyBatchAsync)
COPY_BATCH_V1(cuMemcpyBatchAsync_ptsz)

#define COPY_BATCH_V2(name)                                                         \
    GW_EXPORT CUresult name(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, \
                            CUmemcpyAttributes *attrs, size_t *attr_idxs, size_t nattrs, \
                            CUstream stream)                                        \
    {                                                                               \
        struct copy_shape s = shape_batch(dsts, srcs, sizes, count);                \
        COPY_HOOK(name, real(dsts, srcs, sizes, count, attrs, attr_idxs, nattrs, stream), \
                  s.bytes, s.kind, stream, s.dst, 0);                               \
    }
COPY_BATCH_V2(cuMemcpyBatchAsync_v2)
COPY_BATCH_V2(cuMemcpyBatchAsync_v2_ptsz)

static void record_set(unsigned api, uint64_t t0, uint64_t t1, CUresult result, uint64_t ptr,
                       uint64_t bytes, CUstream stream)
{
    uint64_t words[3] = {ptr, bytes, gw_stream_id(stream, api)};
    gw_rec_call(api, t0, t1, result, words, 3);
}

#define MEMSET(name, value_type, element_bytes)                                     \
    GW_EXPORT CUresult name(CUdeviceptr dst, value_type value, size_t count)        \
    {                                                                               \
        GW_HOOK_BEGIN(name, GW_TIMED_GPU, real(dst, value, count));                 \
        record_set(GW_API_##name, gw_t0, gw_t1, result, dst, count * (element_bytes), NULL); \
        GW_HOOK_END();                                                              \
    }
#define MEMSET_ASYNC(name, value_type, element_bytes)                               \
    GW_EXPORT CUresult name(CUdeviceptr dst, value_type value, size_t count, CUstream stream) \
    {                                                                               \
        GW_HOOK_BEGIN(name, GW_TIMED_GPU, real(dst, value, count, stream));         \
        record_set(GW_API_##name, gw_t0, gw_t1, result, dst, count * (element_bytes), stream); \
        GW_HOOK_END();                                                              \
    }
MEMSET(cuMemsetD8_v2, unsigned char, 1)
MEMSET(cuMemsetD8_v2_ptds, unsigned char, 1)
MEMSET(cuMemsetD16_v2, unsigned short, 2)
MEMSET(cuMemsetD16_v2_ptds, unsigned short, 2)
MEMSET(cuMemsetD32_v2, unsigned int, 4)
MEMSET(cuMemsetD32_v2_ptds, unsigned int, 4)
MEMSET_ASYNC(cuMemsetD8Async, unsigned char, 1)
MEMSET_ASYNC(cuMemsetD8Async_ptsz, unsigned char, 1)
MEMSET_ASYNC(cuMemsetD16Async, unsigned short, 2)
MEMSET_ASYNC(cuMemsetD16Async_ptsz, unsigned short, 2)
MEMSET_ASYNC(cuMemsetD32Async, unsigned int, 4)
MEMSET_ASYNC(cuMemsetD32Async_ptsz, unsigned int, 4)
