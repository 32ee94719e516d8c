/* fakecuda: stream creation, destruction and getters. */
#include "fakecuda.h"

#include <stdlib.h>

#define PRIO_LEAST 0
#define PRIO_GREATEST (-5)

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    fc_stream *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = FC_MAGIC_STREAM;
    s->kind = FC_STREAM_USER;
    s->flags = flags;
    /* out-of-range priorities are clamped, as the real driver does */
    s->priority = priority > PRIO_LEAST ? PRIO_LEAST
                  : priority < PRIO_GREATEST ? PRIO_GREATEST : priority;
    s->ctx = c;
    s->id = (unsigned long long)fc_next_id();
    *phStream = (CUstream)s;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return cuStreamCreateWithPriority(phStream, Flags, PRIO_LEAST);
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    fc_stream *s = (fc_stream *)hStream;
    if (!s || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD ||
        s->magic != FC_MAGIC_STREAM || s->kind != FC_STREAM_USER)
        return CUDA_ERROR_INVALID_HANDLE;
    /* pending simulated work still counts in the context's timeline (ctx->all_max) */
    s->magic = FC_MAGIC_DEAD;
    free(s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    return cuStreamDestroy_v2(hStream);
}

CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (leastPriority)
        *leastPriority = PRIO_LEAST;
    if (greatestPriority)
        *greatestPriority = PRIO_GREATEST;
    return CUDA_SUCCESS;
}

static CUresult get_priority(CUstream h, int pt, int *priority)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!priority)
        return CUDA_ERROR_INVALID_VALUE;
    *priority = s->priority;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{ return get_priority(hStream, 0, priority); }
CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{ return get_priority(hStream, 1, priority); }

static CUresult get_flags(CUstream h, int pt, unsigned int *flags)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = s->flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{ return get_flags(hStream, 0, flags); }
CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{ return get_flags(hStream, 1, flags); }

static CUresult get_id(CUstream h, int pt, unsigned long long *id)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    *id = s->id;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{ return get_id(hStream, 0, streamId); }
CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId)
{ return get_id(hStream, 1, streamId); }

static CUresult get_ctx(CUstream h, int pt, CUcontext *pctx)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)s->ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{ return get_ctx(hStream, 0, pctx); }
CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{ return get_ctx(hStream, 1, pctx); }
