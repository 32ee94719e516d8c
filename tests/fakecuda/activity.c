/*
 * fakecuda: the test-only activity sink (fakecuda_activity.h). The simulated CUPTI installs
 * it; the launch, copy, memset and graph paths report each simulated op to it. With no sink
 * the driver pays one pointer load per op.
 */
#include "fakecuda.h"

_Atomic(fakecuda_activity_sink_fn) fc_activity_sink;

void fakecuda_set_activity_sink(fakecuda_activity_sink_fn sink)
{
    atomic_store_explicit(&fc_activity_sink, sink, memory_order_release);
}

void fc_activity_report(fakecuda_activity_sink_fn sink, fc_stream *s,
                        struct fakecuda_activity *a, int64_t end, int64_t dur_ns,
                        struct fc_graph *g)
{
    if (end == FC_CAPTURED) {
        if (g)
            fc_graph_capture_node(g, a, dur_ns);
        return;
    }
    if (!sink)
        return;
    a->start_ns = end - dur_ns;
    a->end_ns = end;
    a->device = (uint32_t)s->ctx->dev;
    a->stream_id = s->id;
    sink(a);
}

uint32_t fc_activity_mem_kind(const fc_range_info *info)
{
    switch (info->kind) {
    case FC_MEM_PAGEABLE:
        return FAKECUDA_MEM_PAGEABLE;
    case FC_MEM_PINNED:
        return FAKECUDA_MEM_PINNED;
    default:
        return info->alloc_kind == FC_ALLOC_MANAGED ? FAKECUDA_MEM_MANAGED : FAKECUDA_MEM_DEVICE;
    }
}
