/*
 * fakecuda: cuMemsetD8/D16/D32 (+_v2_ptds) and their Async forms (+_ptsz). The bytes are
 * written at the call; the simulated op runs at the device-to-device bandwidth. As on real
 * hardware the synchronous forms do not block the host for device memory (they do for pinned
 * host memory).
 */
#include "fakecuda.h"

#include <string.h>

/* Only with an activity sink or while capturing: describe the memset. */
static __attribute__((noinline, cold)) void
report_set(fakecuda_activity_sink_fn sink, fc_stream *s, const fc_range_info *info,
           size_t bytes, unsigned value, int async, int64_t end, int64_t dur, struct fc_graph *g)
{
    struct fakecuda_activity a = {
        .kind = FAKECUDA_ACTIVITY_MEMSET,
        .bytes = bytes,
        .async = (uint32_t)async,
        .mem_kind = fc_activity_mem_kind(info),
        .value = value,
    };
    fc_activity_report(sink, s, &a, end, dur, g);
}

static CUresult set(CUdeviceptr dst, unsigned value, size_t elem, size_t N, CUstream h,
                    int per_thread, int async)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (N == 0)
        return CUDA_SUCCESS;
    if (!dst || dst % elem || N > SIZE_MAX / elem)
        return CUDA_ERROR_INVALID_VALUE;
    size_t bytes = N * elem;
    fc_range_info info;
    if (fc_classify((uintptr_t)dst, bytes, &info) != 0 || info.kind == FC_MEM_PAGEABLE)
        return CUDA_ERROR_INVALID_VALUE;
    int64_t dur = fc_copy_ns(bytes, fc_cfg.d2d_gbps);
    struct fc_graph *g = NULL;
    int64_t end = fc_enqueue_op(s, dur, &g);
    fakecuda_activity_sink_fn sink = fc_sink();
    if (__builtin_expect(sink != NULL || end == FC_CAPTURED, 0))
        report_set(sink, s, &info, bytes, value, async, end, dur, g);
    if (end == FC_CAPTURED)
        return CUDA_SUCCESS;
    void *p = (void *)(uintptr_t)dst;
    fc_copy_engine_drain();  /* a pending copy may write the same bytes */
    if (elem == 1) {
        memset(p, (int)(value & 0xff), N);
    } else if (elem == 2) {
        uint16_t *q = p;
        for (size_t i = 0; i < N; i++)
            q[i] = (uint16_t)value;
    } else {
        uint32_t *q = p;
        for (size_t i = 0; i < N; i++)
            q[i] = value;
    }
    if (!async && info.kind == FC_MEM_PINNED)
        fc_sleep_until(end);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{ return set(dstDevice, uc, 1, N, NULL, 0, 0); }
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{ return set(dstDevice, uc, 1, N, NULL, 1, 0); }
CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N)
{ return set(dstDevice, us, 2, N, NULL, 0, 0); }
CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N)
{ return set(dstDevice, us, 2, N, NULL, 1, 0); }
CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{ return set(dstDevice, ui, 4, N, NULL, 0, 0); }
CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{ return set(dstDevice, ui, 4, N, NULL, 1, 0); }

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{ return set(dstDevice, uc, 1, N, hStream, 0, 1); }
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{ return set(dstDevice, uc, 1, N, hStream, 1, 1); }
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)
{ return set(dstDevice, us, 2, N, hStream, 0, 1); }
CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)
{ return set(dstDevice, us, 2, N, hStream, 1, 1); }
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{ return set(dstDevice, ui, 4, N, hStream, 0, 1); }
CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{ return set(dstDevice, ui, 4, N, hStream, 1, 1); }
