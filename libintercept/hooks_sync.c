/* Calls that wait for, or ask about, GPU work: where sync bubbles come from. */
#include "gpuwatch/trace_format.h"
#include "hooks.h"

/* `call` runs the real function; the record is {stream id, event handle}. TIMED is
 * GW_TIMED_WAITING for the calls that block until GPU work is done, else GW_TIMED. */
#define SYNC_HOOK(name, TIMED, call, stream, event)                                 \
    GW_HOOK_BEGIN(name, TIMED, call);                                               \
    uint64_t words[2] = {gw_stream_id(stream, GW_API_##name), gw_u64(event)};       \
    GW_RECORD_AND_RETURN(GW_API_##name, words, 2)

GW_EXPORT CUresult cuCtxSynchronize(void)
{
    SYNC_HOOK(cuCtxSynchronize, GW_TIMED_WAITING, real(), NULL, NULL);
}

GW_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    SYNC_HOOK(cuCtxSynchronize_v2, GW_TIMED_WAITING, real(ctx), NULL, NULL);
}

/* A call on one handle, a stream or an event: `stream` and `event` say which it is. */
#define ONE_HANDLE(name, TIMED, type, stream, event)                                \
    GW_EXPORT CUresult name(type handle)                                            \
    {                                                                               \
        SYNC_HOOK(name, TIMED, real(handle), stream, event);                        \
    }
ONE_HANDLE(cuStreamSynchronize, GW_TIMED_WAITING, CUstream, handle, NULL)
ONE_HANDLE(cuStreamSynchronize_ptsz, GW_TIMED_WAITING, CUstream, handle, NULL)
ONE_HANDLE(cuStreamQuery, GW_TIMED, CUstream, handle, NULL)
ONE_HANDLE(cuStreamQuery_ptsz, GW_TIMED, CUstream, handle, NULL)
ONE_HANDLE(cuEventSynchronize, GW_TIMED_WAITING, CUevent, NULL, handle)
ONE_HANDLE(cuEventQuery, GW_TIMED, CUevent, NULL, handle)

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
