/* gpuwatch stats' figures over the readable traces together, and the per-trace figures
 * derived from the counts of trace_stats.h. */
#ifndef GPUWATCH_STATS_TOTALS_H
#define GPUWATCH_STATS_TOTALS_H

#include <stdint.h>

#include "trace_stats.h"

struct gw_stats_totals {
    uint64_t traces, events, errors, lost_events, lost_chunks, damage, bytes;
    uint64_t span_ns;   /* first to last event of any trace, on the wall clock */
    uint64_t gpu_kernels, gpu_memcpys, gpu_memsets, gpu_lost, gpu_busy_ns, nvtx_ranges;
    int host_only;      /* no trace has a GPU record */
};

struct gw_stats_totals gw_stats_totals(const struct gw_stats *st);
/* The trace's first to last event (trace clock), 0 when it has fewer than two. */
uint64_t gw_trace_span(const struct gw_trace_stat *t);
/* Whether the trace holds no GPU record (nor a loss of one). */
int gw_trace_host_only(const struct gw_trace_stat *t);

#endif
