/* Calls that wait for, or ask about, GPU work: where sync bubbles come from. */
#include "gpuwatch/trace_format.h"
#include "hooks.h"

/* `call` runs the real function; the record is {stream id, event handle}. */
#define SYNC_HOOK(name, call, stream, event)                                        \
    GW_HOOK_BEGIN(name, GW_TIMED, call);                                            \
    uint64_t words[2] = {gw_stream_id(stream), gw_u64(event)};                      \
    GW_RECORD_AND_RETURN(GW_API_##name, words, 2)

GW_EXPORT CUresult cuCtxSynchronize(void)
{
    SYNC_HOOK(cuCtxSynchronize, real(), NULL, NULL);
}

GW_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    SYNC_HOOK(cuCtxSynchronize_v2, real(ctx), NULL, NULL);
}

#define STREAM_ONLY(name)                                                           \
    GW_EXPORT CUresult name(CUstream stream) { SYNC_HOOK(name, real(stream), stream, NULL); }
STREAM_ONLY(cuStreamSynchronize)
STREAM_ONLY(cuStreamSynchronize_ptsz)
STREAM_ONLY(cuStreamQuery)
STREAM_ONLY(cuStreamQuery_ptsz)

#define EVENT_ONLY(name)                                                            \
    GW_EXPORT CUresult name(CUevent event) { SYNC_HOOK(name, real(event), NULL, event); }
EVENT_ONLY(cuEventSynchronize)
EVENT_ONLY(cuEventQuery)

#define STREAM_WAIT_EVENT(name)                                                     \
    GW_EXPORT CUresult name(CUstream stream, CUevent event, unsigned int flags)     \
    {                                                                               \
        SYNC_HOOK(name, real(stream, event, flags), stream, event);                 \
    }
STREAM_WAIT_EVENT(cuStreamWaitEvent)
STREAM_WAIT_EVENT(cuStreamWaitEvent_ptsz)

#define EVENT_RECORD(name)                                                          \
    GW_EXPORT CUresult name(CUevent event, CUstream stream)                         \
    {                                                                               \
        SYNC_HOOK(name, real(event, stream), stream, event);                        \
    }
EVENT_RECORD(cuEventRecord)
EVENT_RECORD(cuEventRecord_ptsz)
