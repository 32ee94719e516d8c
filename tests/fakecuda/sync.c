/*
 * fakecuda: synchronisation. The synchronising calls sleep (clock_nanosleep on
 * CLOCK_MONOTONIC; with FAKECUDA_SPIN_WAIT=1 they spin) until the simulated work they wait for
 * has ended; the queries compare that time with now.
 */
#include "fakecuda.h"

/* What waiting on s means: for the legacy stream, everything it implicitly waits for too. */
static int64_t stream_target(fc_stream *s)
{
    return s->kind == FC_STREAM_LEGACY ? fc_stream_point(s)
                                       : atomic_load_explicit(&s->busy_until, memory_order_acquire);
}

static CUresult stream_sync(CUstream h, int per_thread)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (atomic_load_explicit(&s->capture, memory_order_acquire))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    fc_sleep_until(stream_target(s));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) { return stream_sync(hStream, 0); }
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream) { return stream_sync(hStream, 1); }

static CUresult stream_query(CUstream h, int per_thread)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (atomic_load_explicit(&s->capture, memory_order_acquire))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    int64_t t = stream_target(s);
    if (fc_now() < t)
        return CUDA_ERROR_NOT_READY;
    fc_copy_engine_drain_downloads(t);  /* done means its downloads' bytes are there */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream) { return stream_query(hStream, 0); }
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream) { return stream_query(hStream, 1); }

static CUresult wait_event(CUstream h, CUevent ev, unsigned flags, int per_thread)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    int64_t t = fc_event_time(ev);
    if (t < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    if (t > 0 && !atomic_load_explicit(&s->capture, memory_order_acquire))
        fc_stream_wait_until(s, t);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{ return wait_event(hStream, hEvent, Flags, 0); }
CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{ return wait_event(hStream, hEvent, Flags, 1); }

CUresult CUDAAPI cuCtxSynchronize(void)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    fc_sleep_until(atomic_load_explicit(&c->all_max, memory_order_acquire));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
    if (!ctx)
        return cuCtxSynchronize();
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!fc_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_sleep_until(atomic_load_explicit(&((fc_ctx *)ctx)->all_max, memory_order_acquire));
    return CUDA_SUCCESS;
}
