/*
 * fakecuda: events. Recording an event stamps it with the simulated time at which all work
 * enqueued before it on that stream (with the legacy-stream dependencies) has finished;
 * queries, synchronisation and elapsed time read that stamp against the host clock.
 */
#include "fakecuda.h"

#include <stdlib.h>

typedef struct fc_event {
    uint32_t magic;
    unsigned flags;
    _Atomic int64_t time;      /* 0: never recorded */
} fc_event;

static fc_event *event_get(CUevent h)
{
    fc_event *e = (fc_event *)h;
    return e && e->magic == FC_MAGIC_EVENT ? e : NULL;
}

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    const unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (!phEvent || (Flags & ~known) ||
        ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
        return CUDA_ERROR_INVALID_VALUE;
    fc_event *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = FC_MAGIC_EVENT;
    e->flags = Flags;
    *phEvent = (CUevent)e;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    fc_event *e = event_get(hEvent);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    e->magic = FC_MAGIC_DEAD;
    free(e);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent)
{
    return cuEventDestroy_v2(hEvent);
}

static CUresult record(CUevent hEvent, CUstream hStream, int per_thread)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    fc_event *e = event_get(hEvent);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    fc_stream *s;
    r = fc_stream_get(hStream, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (atomic_load_explicit(&s->capture, memory_order_acquire))
        return CUDA_SUCCESS;         /* becomes a node of the captured graph */
    int64_t t = fc_stream_point(s), now = fc_now();
    atomic_store(&e->time, t > now ? t : now);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{ return record(hEvent, hStream, 0); }
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{ return record(hEvent, hStream, 1); }

CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    return record(hEvent, hStream, 0);
}

CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    return record(hEvent, hStream, 1);
}

/* time the event completes (0 if never recorded), or -1 for a bad handle */
int64_t fc_event_time(CUevent hEvent)
{
    fc_event *e = event_get(hEvent);
    return e ? atomic_load(&e->time) : -1;
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    int64_t t = fc_event_time(hEvent);
    if (t < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fc_now() < t)
        return CUDA_ERROR_NOT_READY;
    fc_copy_engine_drain_downloads(t);  /* done means its downloads' bytes are there */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    int64_t t = fc_event_time(hEvent);
    if (t < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    fc_sleep_until(t);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!pMilliseconds)
        return CUDA_ERROR_INVALID_VALUE;
    fc_event *a = event_get(hStart), *b = event_get(hEnd);
    if (!a || !b || (a->flags & CU_EVENT_DISABLE_TIMING) || (b->flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_HANDLE;
    int64_t ta = atomic_load(&a->time), tb = atomic_load(&b->time), now = fc_now();
    if (!ta || !tb)
        return CUDA_ERROR_INVALID_HANDLE;
    if (now < ta || now < tb)
        return CUDA_ERROR_NOT_READY;
    *pMilliseconds = (float)((double)(tb - ta) / 1e6);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}
