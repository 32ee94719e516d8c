/* Calls that wait for, or ask about, GPU work: where sync bubbles come from. */
#include "gpuwatch/trace_format.h"
#include "hooks.h"

/* `call` runs the real function; the record is {stream id, event handle}. TIMED is
 * GW_TIMED_WAITING for the calls that block until GPU work is done, else GW_TIMED. */
#define SYNC_HOOK(name, TIMED, call, stream, event)                                 \
    GW_HOOK_BEGIN(name, TIMED, call);                                               \
    uint64_t words[2] = {gw_stream_id(stream), gw_u64(event)};                      \
    GW_RECORD_AND_RETURN(GW_API_##name, words, 2)

GW_EXPORT CUresult cuCtxSynchronize(void)
{
    SYNC_HOOK(cuCtxSynchronize, GW_TIMED_WAITING, real(), NULL, NULL);
}

GW_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    SYNC_HOOK(cuCtxSynchronize_v2, GW_TIMED_WAITING, real(ctx), NULL, NULL);
}

#define STREAM_ONLY(name, TIMED)                                                    \
    GW_EXPORT CUresult name(CUstream stream)                                        \
    {                                                                               \
        SYNC_HOOK(name, TIMED, real(stream), stream, NULL);                         \
    }
STREAM_ONLY(cuStreamSynchronize, GW_TIMED_WAITING)
STREAM_ONLY(cuStreamSynchronize_ptsz, GW_TIMED_WAITING)
STREAM_ONLY(cuStreamQuery, GW_TIMED)
STREAM_ONLY(cuStreamQuery_ptsz, GW_TIMED)

#define EVENT_ONLY(name, TIMED)                                                     \
    GW_EXPORT CUresult name(CUevent event)                                          \
    {                                                                               \
        SYNC_HOOK(name, TIMED, real(event), NULL, event);                           \
    }
EVENT_ONLY(cuEventSynchronize, GW_TIMED_WAITING)
EVENT_ONLY(cuEventQuery, GW_TIMED)

#define STREAM_WAIT_EVENT(name)                                                     \
    GW_EXPORT CUresult name(CUstream stream, CUevent event, unsigned int flags)     \
    {                                                                               \
        SYNC_HOOK(name, GW_TIMED, real(stream, event, flags), stream, event);       \
    }
STREAM_WAIT_EVENT(cuStreamWaitEvent)
STREAM_WAIT_EVENT(cuStreamWaitEvent_ptsz)

#define EVENT_RECORD(name)                                                          \
    GW_EXPORT CUresult name(CUevent event, CUstream stream)                         \
    {                                                                               \
        SYNC_HOOK(name, GW_TIMED, real(event, stream), stream, event);              \
    }
EVENT_RECORD(cuEventRecord)
EVENT_RECORD(cuEventRecord_ptsz)
