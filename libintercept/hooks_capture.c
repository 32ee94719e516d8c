/* Stream capture: between Begin and End, work "issued" on the stream is recorded into a
 * graph, not run. The analysis needs the two edges to tell captured launches (host cost
 * only) from launches that reach the GPU. Recorded as the sync family: {stream id, 0}. */
#include "gpuwatch/trace_format.h"
#include "hooks.h"

#define CAPTURE_HOOK(name, call, stream)                                            \
    GW_HOOK_BEGIN(name, GW_TIMED, call);                                            \
    uint64_t words[2] = {gw_stream_id(stream, GW_API_##name), 0};                   \
    GW_RECORD_AND_RETURN(GW_API_##name, words, 2)

#define BEGIN_CAPTURE_V1(name)                                                      \
    GW_EXPORT CUresult name(CUstream stream)                                        \
    {                                                                               \
        CAPTURE_HOOK(name, real(stream), stream);                                   \
    }
BEGIN_CAPTURE_V1(cuStreamBeginCapture)
BEGIN_CAPTURE_V1(cuStreamBeginCapture_ptsz)

#define BEGIN_CAPTURE_V2(name)                                                      \
    GW_EXPORT CUresult name(CUstream stream, CUstreamCaptureMode mode)              \
    {                                                                               \
        CAPTURE_HOOK(name, real(stream, mode), stream);                             \
    }
BEGIN_CAPTURE_V2(cuStreamBeginCapture_v2)
BEGIN_CAPTURE_V2(cuStreamBeginCapture_v2_ptsz)

#define END_CAPTURE(name)                                                           \
    GW_EXPORT CUresult name(CUstream stream, CUgraph *graph)                        \
    {                                                                               \
        CAPTURE_HOOK(name, real(stream, graph), stream);                            \
    }
END_CAPTURE(cuStreamEndCapture)
END_CAPTURE(cuStreamEndCapture_ptsz)
