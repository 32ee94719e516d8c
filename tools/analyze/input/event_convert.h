/*
 * From the reader's event to the analyzer's, with its common cases inline for the
 * analysis loop (run_analysis.c): kernel launches and kernel records, nearly every event
 * of a training run, are written whole here; everything else goes to
 * an_event_convert_any (event_convert.c).
 */
#ifndef GPUWATCH_ANALYZE_EVENT_CONVERT_H
#define GPUWATCH_ANALYZE_EVENT_CONVERT_H

#include "an_event.h"
#include "trace_reader.h"

#define CUDA_ERROR_OUT_OF_MEMORY 2u

/* Every kind of record but the two an_event_convert writes itself (event_convert.c). */
__attribute__((noinline)) int an_event_convert_any(const struct gw_event *ev,
                                                   const struct gw_reader *reader,
                                                   struct an_ev *o);

/* An error result's flags. */
static inline uint8_t an_result_flags(uint32_t result)
{
    return result == 0                          ? 0
           : result == CUDA_ERROR_OUT_OF_MEMORY ? AN_F_ERROR | AN_F_OOM
                                                : AN_F_ERROR;
}

/* A word the reader has just stored, loaded on its own: GCC would otherwise load two
 * neighbouring words with one 16-byte load, which cannot take them from the reader's two
 * 8-byte stores still in the store buffer (a store-forwarding stall, a sixth of the wall
 * time on 100 M launches). */
static inline uint64_t an_word(const uint64_t *p)
{
    uint64_t v = *p;
    __asm__("" : "+r"(v));
    return v;
}

/* A GPU record's stream as the host calls name it (the stream definitions map CUPTI's
 * ids to ours), so that an operation meets the call that issued it; an id with no
 * definition keeps CUPTI's, marked so that it meets no host stream. */
static inline uint64_t an_gpu_stream(const struct gw_reader *reader, uint64_t cupti_stream)
{
    uint64_t ours;
    if (reader && gw_reader_stream_by_cupti(reader, cupti_stream, &ours) == 0)
        return ours;
    return cupti_stream | 1ull << 62;
}

/* Fills *o from a reader event; returns 0 when the event means nothing to the analysis.
 * reader (may be NULL) resolves NVTX names to decide AN_F_STEP_NAME. */
static inline int an_event_convert(const struct gw_event *ev, const struct gw_reader *reader,
                                   struct an_ev *o)
{
    uint64_t ts = ev->ts_ns, end = ts + ev->dur_ns;
    if (end < ts)
        end = ts;  /* a wrapped duration: keep the record, drop its length */
    if (ev->kind == GW_EV_CALL && ev->family == GW_FAM_LAUNCH) {
        uint64_t key = an_word(&ev->u.launch.shape_id);
        *o = (struct an_ev){
            .ts = ts,
            .end = end,
            .stream = an_word(&ev->u.launch.stream_id),
            .key = key,
            .tid = ev->tid,
            .api = (uint16_t)ev->api_id,
            .kind = AN_LAUNCH,
            .flags = (uint8_t)((key ? AN_F_KERNEL : 0) | an_result_flags(ev->result)),
        };
        return 1;
    }
    if (ev->kind == GW_EV_GPU_KERNEL) {
        *o = (struct an_ev){
            .ts = ts,
            .end = end,
            .stream = an_gpu_stream(reader, an_word(&ev->u.gpu_kernel.stream_id)),
            .key = an_word(&ev->u.gpu_kernel.shape_id),
            .ptr = ev->u.gpu_kernel.correlation_id,
            .tid = (uint32_t)ev->u.gpu_kernel.device,
            .kind = AN_GPU_KERNEL,
            .flags = ev->u.gpu_kernel.graph_id ? AN_F_GRAPH_NODE : 0,
        };
        return 1;
    }
    return an_event_convert_any(ev, reader, o);
}

#endif
