/*
 * pageable_h2d: the GPU computed nothing while the host was blocked in host-to-device
 * copies: synchronous ones (cuMemcpyHtoD, what a .to(device) without non_blocking does)
 * or async ones from pageable memory (the driver stages them through its own pinned
 * buffer, so the host waits anyway). Pinned memory + non_blocking copies overlap compute.
 * Saving: the replay with those copies from pinned memory and asynchronous (replay.h,
 * AN_WI_PINNED_ASYNC): the host no longer waits for them, and each moves at the best
 * pinned bandwidth the run showed (3x its own without one).
 */
#include <stdio.h>

#include "rules.h"

void an_rule_pageable_h2d(const struct an_model *m, const struct an_rule_ctx *ctx,
                          struct an_findings *out)
{
    (void)ctx;
    double share = an_steady_share(m, AN_CAUSE_H2D);
    const struct an_xfer *pageable = &m->xfer[GW_COPY_HTOD][GW_HOST_PAGEABLE];
    const struct an_xfer *pinned = &m->xfer[GW_COPY_HTOD][GW_HOST_PINNED];
    uint64_t blocked = m->total.h2d_blocked_calls;
    if (!an_whatif_worth(m, AN_WI_PINNED_ASYNC) || !blocked ||
        m->total.h2d_blocked_bytes / blocked < m->th.h2d_min_bytes)
        return;
    struct an_finding *f = an_finding_add(out, "pageable_h2d");
    if (!f)
        return;
    char phrase[128], bytes[32], avg[32], wait[32], per_step[32];
    an_steady_phrase(m, phrase, sizeof phrase);
    an_fmt_bytes(bytes, sizeof bytes, (double)m->total.h2d_blocked_bytes);
    an_fmt_bytes(avg, sizeof avg, (double)m->total.h2d_blocked_bytes / (double)blocked);
    an_fmt_ns(wait, sizeof wait, (double)m->total.h2d_blocked_ns);
    double steady_idle = an_idle_ns(m, &m->steady, AN_CAUSE_H2D);
    an_fmt_ns(per_step, sizeof per_step, an_per_step(m, steady_idle));
    snprintf(f->title, sizeof f->title,
             "Host-to-device copies block the host and stall the GPU (pageable or "
             "synchronous copies)");
    an_appendf(f->evidence, sizeof f->evidence,
               "%llu host-to-device copies (%s, %s each on average) blocked the host for %s "
               "in all (%llu from pageable memory, %llu through synchronous entry points).",
               (unsigned long long)blocked, bytes, avg, wait,
               (unsigned long long)pageable->blocking,
               (unsigned long long)(m->xfer[GW_COPY_HTOD][GW_HOST_PAGEABLE].sync_api +
                                    m->xfer[GW_COPY_HTOD][GW_HOST_PINNED].sync_api));
    if (pageable->blocking_ns) {
        double gbps = (double)pageable->blocking_bytes / (double)pageable->blocking_ns;
        an_appendf(f->evidence, sizeof f->evidence, " Pageable copies moved %.2f GB/s", gbps);
        if (m->best_bw[GW_COPY_HTOD] > 0 && pinned->count)
            an_appendf(f->evidence, sizeof f->evidence, " (best H2D seen: %.2f GB/s).",
                       (double)m->best_bw[GW_COPY_HTOD] / 1e9);
        else
            an_appendf(f->evidence, sizeof f->evidence,
                       " (pinned memory typically moves 2-4x that).");
    }
    an_appendf(f->evidence, sizeof f->evidence,
               " In the %s the GPU sat idle in them %s per step (%.0f%% of the time).", phrase,
               per_step, share * 100);
    if (pageable->blocking)
        snprintf(f->change, sizeof f->change,
                 "Copy from pinned memory, asynchronously: DataLoader(pin_memory=True) (or "
                 "tensor.pin_memory() for buffers you fill yourself) and "
                 "batch.to(device, non_blocking=True), so the copy overlaps the previous "
                 "step's compute instead of stalling it.");
    else  /* pinned already: what blocks is the synchronous entry point */
        snprintf(f->change, sizeof f->change,
                 "The batches are pinned already; copy them asynchronously: "
                 "batch.to(device, non_blocking=True) (cudaMemcpyAsync on a stream), so the "
                 "copy overlaps the previous step's compute instead of stalling it.");
    an_set_whatif_saving(m, f, AN_WI_PINNED_ASYNC);
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "idle_share_steady", share);
    an_finding_fig(f, "blocked_copies", (double)blocked);
    an_finding_fig(f, "blocked_bytes", (double)m->total.h2d_blocked_bytes);
    an_finding_fig(f, "blocked_ns", (double)m->total.h2d_blocked_ns);
    an_finding_fig(f, "pageable_copies", (double)pageable->count);
    an_finding_fig(f, "pinned_copies", (double)pinned->count);
}
