#include "stats_totals.h"

uint64_t gw_trace_span(const struct gw_trace_stat *t)
{
    return t->rs.last_ts_ns > t->rs.first_ts_ns ? t->rs.last_ts_ns - t->rs.first_ts_ns : 0;
}

int gw_trace_host_only(const struct gw_trace_stat *t)
{
    return !t->rs.gpu_kernels && !t->rs.gpu_memcpys && !t->rs.gpu_memsets &&
           !t->rs.gpu_lost_records;
}

struct gw_stats_totals gw_stats_totals(const struct gw_stats *st)
{
    struct gw_stats_totals t = {0};
    int64_t first = 0, last = 0;
    int any = 0;
    t.host_only = 1;
    for (size_t i = 0; i < st->ntraces; i++) {
        const struct gw_trace_stat *tr = &st->traces[i];
        if (!tr->readable)
            continue;
        t.traces++;
        t.events += tr->rs.calls;
        t.errors += tr->rs.call_errors;
        t.lost_events += tr->rs.lost_events;
        t.lost_chunks += tr->rs.lost_chunks;
        t.damage += tr->rs.damage_reports;
        t.bytes += tr->bytes;
        t.gpu_kernels += tr->rs.gpu_kernels;
        t.gpu_memcpys += tr->rs.gpu_memcpys;
        t.gpu_memsets += tr->rs.gpu_memsets;
        t.gpu_lost += tr->rs.gpu_lost_events;
        t.gpu_busy_ns += gw_devices_busy(&tr->devices);
        t.nvtx_ranges += tr->nvtx_ranges;
        t.host_only &= gw_trace_host_only(tr);
        if (tr->rs.last_ts_ns == 0)
            continue;
        /* processes' trace clocks differ: their spans are joined on the wall clock */
        int64_t a = (int64_t)tr->rs.first_ts_ns + tr->hdr.realtime_minus_trace_ns;
        int64_t b = (int64_t)tr->rs.last_ts_ns + tr->hdr.realtime_minus_trace_ns;
        if (!any || a < first)
            first = a;
        if (!any || b > last)
            last = b;
        any = 1;
    }
    t.span_ns = any && last > first ? (uint64_t)(last - first) : 0;
    return t;
}
