/*
 * fakecuda: memory copies. The bytes move at the call (device memory is host memory here);
 * the simulated copy takes bytes / bandwidth on the stream's timeline:
 *   either side pageable host memory  FAKECUDA_PAGEABLE_GBPS (default 5)
 *   pinned host <-> device            FAKECUDA_PINNED_GBPS (default 20)
 *   device <-> device                 FAKECUDA_D2D_GBPS (default 500)
 * Who waits, as on real hardware: synchronous copies that touch host memory return when the
 * simulated copy has finished; synchronous device-to-device copies do not block the host; an
 * "async" copy from or to pageable memory blocks until it is done (it is staged by the host);
 * other async copies return at once, their bytes moved by the copy engine (copy_engine.c).
 * A copy into a capturing stream is recorded, not run.
 */
#include "fakecuda.h"

#include <string.h>

typedef struct span {           /* a strided region: depth slices of height rows of width */
    uintptr_t base;
    size_t pitch, slice;
} span;

/* Only with an activity sink or while capturing: describe the copy. Copies between
 * contexts (cuMemcpyPeer*) are PTOP; otherwise the kind follows where each side lives. */
static __attribute__((noinline, cold)) void
report_copy(fakecuda_activity_sink_fn sink, fc_stream *s, const fc_range_info *di,
            const fc_range_info *si, size_t bytes, int async, int peer, int cont, int64_t end,
            int64_t dur, struct fc_graph *g)
{
    int ddev = di->kind == FC_MEM_DEVICE, sdev = si->kind == FC_MEM_DEVICE;
    struct fakecuda_activity a = {
        .kind = FAKECUDA_ACTIVITY_MEMCPY,
        .continues_call = (uint32_t)cont,
        .bytes = bytes,
        .async = (uint32_t)async,
        .copy_kind = peer ? FAKECUDA_COPY_PTOP
                     : sdev ? (ddev ? FAKECUDA_COPY_DTOD : FAKECUDA_COPY_DTOH)
                            : (ddev ? FAKECUDA_COPY_HTOD : FAKECUDA_COPY_HTOH),
        .src_kind = fc_activity_mem_kind(si),
        .dst_kind = fc_activity_mem_kind(di),
    };
    fc_activity_report(sink, s, &a, end, dur, g);
}

/* peer: a cuMemcpyPeer* copy; cont: not the first copy of this API call (batches) */
static CUresult run_copy(fc_stream *s, const fc_range_info *di, const fc_range_info *si,
                         size_t bytes, int async, int during_call, span d, span sr,
                         size_t width, size_t height, size_t depth, int peer, int cont)
{
    int pageable = di->kind == FC_MEM_PAGEABLE || si->kind == FC_MEM_PAGEABLE;
    int d2d = di->kind == FC_MEM_DEVICE && si->kind == FC_MEM_DEVICE;
    int blocks = pageable || during_call || (!async && !d2d);
    double bw = pageable ? fc_cfg.pageable_gbps : d2d ? fc_cfg.d2d_gbps : fc_cfg.pinned_gbps;
    int64_t dur = fc_copy_ns(bytes, bw);
    struct fc_graph *g = NULL;
    int64_t end = fc_enqueue_op(s, dur, &g);
    fakecuda_activity_sink_fn sink = fc_sink();
    if (__builtin_expect(sink != NULL || end == FC_CAPTURED, 0))
        report_copy(sink, s, di, si, bytes, async, peer, cont, end, dur, g);
    if (end == FC_CAPTURED)
        return CUDA_SUCCESS;
    struct fc_move m = {d.base, sr.base, d.pitch, d.slice, sr.pitch, sr.slice,
                        width, height, depth, di->kind != FC_MEM_DEVICE, end};
    if (blocks) {
        fc_copy_engine_drain();
        fc_move_run(&m);
        fc_sleep_until(end);
    } else {
        fc_copy_engine_submit(&m);  /* the host is free while the bytes move */
    }
    return CUDA_SUCCESS;
}

static CUresult classify2(uintptr_t dst, uintptr_t src, size_t n, int want_dst_dev,
                          int want_src_dev, fc_range_info *di, fc_range_info *si)
{
    if (!dst || !src)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_classify(dst, n, di) != 0 || fc_classify(src, n, si) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((want_dst_dev && di->kind != FC_MEM_DEVICE) || (want_src_dev && si->kind != FC_MEM_DEVICE))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult copy_1d(void *dst, const void *src, size_t n, CUstream h, int per_thread,
                        int async, int want_dst_dev, int want_src_dev, int peer)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (n == 0)
        return CUDA_SUCCESS;
    fc_range_info di, si;
    r = classify2((uintptr_t)dst, (uintptr_t)src, n, want_dst_dev, want_src_dev, &di, &si);
    if (r != CUDA_SUCCESS)
        return r;
    span d = { (uintptr_t)dst, 0, 0 }, sr = { (uintptr_t)src, 0, 0 };
    return run_copy(s, &di, &si, n, async, 0, d, sr, n, 1, 1, peer, 0);
}

static CUresult fc_copy(void *dst, const void *src, size_t n, CUstream h, int per_thread,
                        int async, int want_dst_dev, int want_src_dev)
{
    return copy_1d(dst, src, n, h, per_thread, async, want_dst_dev, want_src_dev, 0);
}

#define HOST(p) ((void *)(uintptr_t)(p))

/* ---- 1D ---- */

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{ return fc_copy(HOST(dst), HOST(src), ByteCount, NULL, 0, 0, 0, 0); }
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{ return fc_copy(HOST(dst), HOST(src), ByteCount, NULL, 1, 0, 0, 0); }
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{ return fc_copy(HOST(dst), HOST(src), ByteCount, hStream, 0, 1, 0, 0); }
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{ return fc_copy(HOST(dst), HOST(src), ByteCount, hStream, 1, 1, 0, 0); }

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{ return fc_copy(HOST(dstDevice), srcHost, ByteCount, NULL, 0, 0, 1, 0); }
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{ return fc_copy(HOST(dstDevice), srcHost, ByteCount, NULL, 1, 0, 1, 0); }
CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{ return fc_copy(dstHost, HOST(srcDevice), ByteCount, NULL, 0, 0, 0, 1); }
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{ return fc_copy(dstHost, HOST(srcDevice), ByteCount, NULL, 1, 0, 0, 1); }
CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{ return fc_copy(HOST(dstDevice), HOST(srcDevice), ByteCount, NULL, 0, 0, 1, 1); }
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{ return fc_copy(HOST(dstDevice), HOST(srcDevice), ByteCount, NULL, 1, 0, 1, 1); }

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{ return fc_copy(HOST(dstDevice), srcHost, ByteCount, hStream, 0, 1, 1, 0); }
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{ return fc_copy(HOST(dstDevice), srcHost, ByteCount, hStream, 1, 1, 1, 0); }
CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{ return fc_copy(dstHost, HOST(srcDevice), ByteCount, hStream, 0, 1, 0, 1); }
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{ return fc_copy(dstHost, HOST(srcDevice), ByteCount, hStream, 1, 1, 0, 1); }
CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{ return fc_copy(HOST(dstDevice), HOST(srcDevice), ByteCount, hStream, 0, 1, 1, 1); }
CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{ return fc_copy(HOST(dstDevice), HOST(srcDevice), ByteCount, hStream, 1, 1, 1, 1); }

/* ---- peer: one device, so both contexts are on it; a device-to-device copy ---- */

static CUresult peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                     size_t n, CUstream h, int per_thread, int async)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!fc_ctx_valid(dctx) || !fc_ctx_valid(sctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return copy_1d(HOST(dst), HOST(src), n, h, per_thread, async, 1, 1, 1);
}

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount)
{ return peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, 0, 0); }
CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount)
{ return peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, 1, 0); }
CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream)
{ return peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 0, 1); }
CUresult CUDAAPI cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream)
{ return peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 1, 1); }

/* ---- 2D / 3D ---- */

static CUresult endpoint(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr,
                         uintptr_t *out)
{
    switch (t) {
    case CU_MEMORYTYPE_HOST:
        *out = (uintptr_t)host;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
        *out = (uintptr_t)dev;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_ARRAY:
        return CUDA_ERROR_NOT_SUPPORTED;     /* CUDA arrays are not simulated */
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

typedef struct side {
    CUmemorytype type;
    const void *host;
    CUdeviceptr dev;
    CUarray arr;
    size_t x, y, z, pitch, height;
} side;

static CUresult copy3d(const side *dst, const side *src, size_t width, size_t height,
                       size_t depth, CUstream h, int per_thread, int async)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (width == 0 || height == 0 || depth == 0)
        return CUDA_SUCCESS;
    const side *sd[2] = { dst, src };
    span sp[2];
    fc_range_info info[2];
    for (int i = 0; i < 2; i++) {
        uintptr_t base;
        r = endpoint(sd[i]->type, sd[i]->host, sd[i]->dev, sd[i]->arr, &base);
        if (r != CUDA_SUCCESS)
            return r;
        size_t pitch = sd[i]->pitch ? sd[i]->pitch : width;
        size_t rows = sd[i]->height ? sd[i]->height : height;
        if (!base || (height > 1 && pitch < width) || (depth > 1 && rows < height))
            return CUDA_ERROR_INVALID_VALUE;
        sp[i].pitch = pitch;
        sp[i].slice = pitch * rows;
        sp[i].base = base + sd[i]->z * sp[i].slice + sd[i]->y * pitch + sd[i]->x;
        size_t extent = (depth - 1) * sp[i].slice + (height - 1) * pitch + width;
        if (fc_classify(sp[i].base, extent, &info[i]) != 0)
            return CUDA_ERROR_INVALID_VALUE;
        if ((sd[i]->type == CU_MEMORYTYPE_DEVICE) != (info[i].kind == FC_MEM_DEVICE) &&
            sd[i]->type != CU_MEMORYTYPE_UNIFIED)
            return CUDA_ERROR_INVALID_VALUE;
    }
    return run_copy(s, &info[0], &info[1], width * height * depth, async, 0, sp[0], sp[1],
                    width, height, depth, 0, 0);
}

static CUresult copy2d(const CUDA_MEMCPY2D *p, CUstream h, int per_thread, int async)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    side d = { p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes,
               p->dstY, 0, p->dstPitch, 0 };
    side s = { p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes,
               p->srcY, 0, p->srcPitch, 0 };
    return copy3d(&d, &s, p->WidthInBytes, p->Height, 1, h, per_thread, async);
}

static CUresult copy3d_desc(const CUDA_MEMCPY3D *p, CUstream h, int per_thread, int async)
{
    if (!p || p->srcLOD || p->dstLOD)
        return CUDA_ERROR_INVALID_VALUE;
    side d = { p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes,
               p->dstY, p->dstZ, p->dstPitch, p->dstHeight };
    side s = { p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes,
               p->srcY, p->srcZ, p->srcPitch, p->srcHeight };
    return copy3d(&d, &s, p->WidthInBytes, p->Height, p->Depth, h, per_thread, async);
}

CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{ return copy2d(pCopy, NULL, 0, 0); }
CUresult CUDAAPI cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{ return copy2d(pCopy, NULL, 1, 0); }
CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{ return copy2d(pCopy, hStream, 0, 1); }
CUresult CUDAAPI cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{ return copy2d(pCopy, hStream, 1, 1); }
CUresult CUDAAPI cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{ return copy3d_desc(pCopy, NULL, 0, 0); }
CUresult CUDAAPI cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy)
{ return copy3d_desc(pCopy, NULL, 1, 0); }
CUresult CUDAAPI cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{ return copy3d_desc(pCopy, hStream, 0, 1); }
CUresult CUDAAPI cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{ return copy3d_desc(pCopy, hStream, 1, 1); }

/* ---- batches ---- */

static CUresult batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                      CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                      size_t *failIdx, CUstream h, int per_thread)
{
    if (failIdx)
        *failIdx = SIZE_MAX;
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (s->kind == FC_STREAM_LEGACY)          /* "Must not be legacy NULL stream." */
        return CUDA_ERROR_INVALID_VALUE;
    if (!dsts || !srcs || !sizes || count == 0 || !attrs || !attrsIdxs || numAttrs == 0 ||
        numAttrs > count || attrsIdxs[0] != 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < numAttrs; k++) {
        if ((k && attrsIdxs[k] <= attrsIdxs[k - 1]) || attrsIdxs[k] >= count ||
            attrs[k].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_INVALID ||
            attrs[k].srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY)
            return CUDA_ERROR_INVALID_VALUE;
    }
    /* validate every copy first, so a bad one leaves nothing half done */
    for (size_t i = 0; i < count; i++) {
        fc_range_info di, si;
        if (sizes[i] && classify2((uintptr_t)dsts[i], (uintptr_t)srcs[i], sizes[i], 0, 0,
                                  &di, &si) != CUDA_SUCCESS) {
            if (failIdx)
                *failIdx = i;
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    size_t k = 0;
    int cont = 0;       /* every copy of the batch belongs to this one API call */
    for (size_t i = 0; i < count; i++) {
        while (k + 1 < numAttrs && attrsIdxs[k + 1] <= i)
            k++;
        if (!sizes[i])
            continue;
        fc_range_info di, si;
        classify2((uintptr_t)dsts[i], (uintptr_t)srcs[i], sizes[i], 0, 0, &di, &si);
        span d = { (uintptr_t)dsts[i], 0, 0 }, sr = { (uintptr_t)srcs[i], 0, 0 };
        int during = attrs[k].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
        run_copy(s, &di, &si, sizes[i], 1, during, d, sr, sizes[i], 1, 1, 0, cont);
        cont = 1;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                    size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                    size_t numAttrs, size_t *failIdx, CUstream hStream)
{ return batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream, 0); }

CUresult CUDAAPI cuMemcpyBatchAsync_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                         size_t count, CUmemcpyAttributes *attrs,
                                         size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
                                         CUstream hStream)
{ return batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream, 1); }

CUresult CUDAAPI cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                       size_t count, CUmemcpyAttributes *attrs,
                                       size_t *attrsIdxs, size_t numAttrs, CUstream hStream)
{ return batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, hStream, 0); }

CUresult CUDAAPI cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                            size_t count, CUmemcpyAttributes *attrs,
                                            size_t *attrsIdxs, size_t numAttrs,
                                            CUstream hStream)
{ return batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, hStream, 1); }
