/*
 * pageable_h2d: the GPU computed nothing while the host was blocked in host-to-device
 * copies: synchronous ones (cuMemcpyHtoD, what a .to(device) without non_blocking does)
 * or async ones from pageable memory (the driver stages them through its own pinned
 * buffer, so the host waits anyway). Pinned memory + non_blocking copies overlap compute.
 * Saving: the replay with those copies from pinned memory and asynchronous (replay.h,
 * AN_WI_PINNED_ASYNC): the host no longer waits for them, and each moves at the best
 * pinned bandwidth the run showed (3x its own without one).
 * Downloads count too (issue 36, C8): device-to-host copies of h2d_min_bytes or more into
 * pageable memory (an offloaded optimizer's gradients, a state_dict copied to the CPU)
 * block the host while the driver stages them. Their host still waits once pinned (it reads
 * what they bring), but the copy moves at pinned speed; the same world replays both
 * directions, so the advice names each direction blocked with its memory kind and size.
 * Scalar reads (.item(), under h2d_min_bytes) are sync_bubble's.
 * Copies that all come before or after the loop's steady state (a model's weights uploaded
 * from pageable memory at start-up, a final state_dict) are one-offs: pinning them gives
 * back nothing per step, and findings rank the loop (on an H200, leak.py's 4 start-up
 * uploads of 34 MiB "saved" 7 % of its short loop's time). No finding then.
 */
#include <stdio.h>

#include "rules.h"

/* Bulk downloads into pageable memory (h2d_min_bytes or more each): how many blocked,
 * their bytes and host time. */
struct downloads {
    uint64_t calls, bytes, ns;
};

static struct downloads pageable_downloads(const struct an_model *m)
{
    const struct an_xfer *x = &m->xfer[GW_COPY_DTOH][GW_HOST_PAGEABLE];
    struct downloads d = {x->bulk, x->bulk_bytes, x->bulk_ns};
    return d;
}

static void upload_evidence(const struct an_model *m, struct an_finding *f)
{
    const struct an_xfer *pageable = &m->xfer[GW_COPY_HTOD][GW_HOST_PAGEABLE];
    const struct an_xfer *pinned = &m->xfer[GW_COPY_HTOD][GW_HOST_PINNED];
    uint64_t blocked = m->total.h2d_blocked_calls;
    char bytes[32], avg[32], wait[32];
    an_fmt_bytes(bytes, sizeof bytes, (double)m->total.h2d_blocked_bytes);
    an_fmt_bytes(avg, sizeof avg, (double)m->total.h2d_blocked_bytes / (double)blocked);
    an_fmt_ns(wait, sizeof wait, (double)m->total.h2d_blocked_ns);
    an_appendf(f->evidence, sizeof f->evidence,
               "%llu host-to-device copies (%s, %s each on average) blocked the host for %s "
               "in all (%llu from pageable memory, %llu through synchronous entry points",
               (unsigned long long)blocked, bytes, avg, wait,
               (unsigned long long)pageable->blocking,
               (unsigned long long)(m->xfer[GW_COPY_HTOD][GW_HOST_PAGEABLE].sync_api +
                                    m->xfer[GW_COPY_HTOD][GW_HOST_PINNED].sync_api));
    if (m->total.h2d_waited_calls)
        an_appendf(f->evidence, sizeof f->evidence,
                   ", %llu asynchronous ones waited for by a sync of their stream right after: "
                   "x.to(device) without non_blocking=True",
                   (unsigned long long)m->total.h2d_waited_calls);
    an_appendf(f->evidence, sizeof f->evidence, ").");
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
    double share = an_steady_share(m, AN_CAUSE_H2D);
    char phrase[128], per_step[32];
    an_steady_phrase(m, phrase, sizeof phrase);
    an_fmt_ns(per_step, sizeof per_step,
              an_per_step(m, an_idle_ns(m, &m->steady, AN_CAUSE_H2D)));
    an_appendf(f->evidence, sizeof f->evidence,
               " In the %s the GPU sat idle in them %s per step (%.0f%% of the time).", phrase,
               per_step, share * 100);
}

static void download_evidence(struct an_finding *f, const struct downloads *d)
{
    char bytes[32], avg[32], wait[32] = "";
    an_fmt_bytes(bytes, sizeof bytes, (double)d->bytes);
    an_fmt_bytes(avg, sizeof avg, (double)d->bytes / (double)d->calls);
    if (d->ns) {
        snprintf(wait, sizeof wait, " for ");
        an_fmt_ns(wait + 5, sizeof wait - 5, (double)d->ns);
        an_appendf(wait, sizeof wait, " in all");
    }
    an_appendf(f->evidence, sizeof f->evidence,
               "%s%llu device-to-host copies into pageable memory (%s, %s each on average) "
               "blocked the host%s (the driver stages them through its own pinned buffer, "
               "then copies again).", f->evidence[0] ? " " : "",
               (unsigned long long)d->calls, bytes, avg, wait);
}

void an_rule_pageable_h2d(const struct an_model *m, const struct an_rule_ctx *ctx,
                          struct an_findings *out)
{
    (void)ctx;
    double share = an_steady_share(m, AN_CAUSE_H2D);
    const struct an_xfer *pageable = &m->xfer[GW_COPY_HTOD][GW_HOST_PAGEABLE];
    const struct an_xfer *pinned = &m->xfer[GW_COPY_HTOD][GW_HOST_PINNED];
    uint64_t blocked = m->total.h2d_blocked_calls;
    int uploads = blocked && m->total.h2d_blocked_bytes / blocked >= m->th.h2d_min_bytes;
    struct downloads down = pageable_downloads(m);
    if (!an_whatif_worth(m, AN_WI_PINNED_ASYNC) || (!uploads && !down.calls))
        return;
    if (m->steps.steady && !m->steady.h2d_blocked_calls && !m->steady.d2h_blocked_bulk)
        return;  /* every blocked copy outside the loop */
    /* Downloads alone: pinning them gives back at most the time the host spent in them.
     * The world pins every copy, the small uploads that are small_copies' too (random draw
     * 31: three 15 MiB checkpoint reads claimed the 65 ms that gathering 361 small uploads a
     * step gave back, 84 ms, and pinning all of them nothing) */
    uint64_t saving = an_whatif_saving(m, AN_WI_PINNED_ASYNC);
    if (!uploads && saving > down.ns)
        saving = down.ns;
    /* Host-only, downloads after kernels no call proved the length of: how much of each
     * was its wait for them and how much its move is not known (random draw 61: a 12 MiB
     * download after each step's 4 ms of kernels, taken as all move, claimed 640 ms where
     * pinning gave back 279). The replay's saving is said as the ceiling, the part that
     * does not rest on them as the finding (replay.h, pinned_unknown_ns). */
    uint64_t unknown = m->replay.pinned_unknown_ns;
    if (unknown && an_whatif_share(m, saving < unknown ? saving : unknown) >= m->th.min_share) {
        uint64_t proven = saving > unknown ? saving - unknown : 0;
        int found = an_whatif_share(m, proven) >= m->th.min_share;
        an_say_unproven(m, "pageable_h2d", AN_WI_PINNED_ASYNC, saving, found ? proven : 0,
                        "download into pinned memory (torch.empty(..., pin_memory=True), "
                        "host.copy_(tensor, non_blocking=True))",
                        out);
        saving = proven;
    }
    if (an_whatif_share(m, saving) < m->th.min_share)
        return;
    struct an_finding *f = an_finding_add(out, "pageable_h2d");
    if (!f)
        return;
    if (uploads && down.calls)
        snprintf(f->title, sizeof f->title,
                 "Copies to and from pageable memory block the host and stall the GPU "
                 "(uploads and downloads)");
    else if (uploads)
        snprintf(f->title, sizeof f->title,
                 "Host-to-device copies block the host and stall the GPU (pageable or "
                 "synchronous copies)");
    else
        snprintf(f->title, sizeof f->title,
                 "Device-to-host copies into pageable memory block the host (downloads)");
    if (uploads)
        upload_evidence(m, f);
    if (down.calls)
        download_evidence(f, &down);
    if (uploads && pageable->blocking)
        an_appendf(f->change, sizeof f->change,
                   "Copy from pinned memory, asynchronously: DataLoader(pin_memory=True) (or "
                   "tensor.pin_memory() for buffers you fill yourself) and "
                   "batch.to(device, non_blocking=True), so the copy overlaps the previous "
                   "step's compute instead of stalling it.");
    else if (uploads)  /* pinned already: what blocks is the synchronous entry point */
        an_appendf(f->change, sizeof f->change,
                   "The batches are pinned already; copy them asynchronously: "
                   "batch.to(device, non_blocking=True) (cudaMemcpyAsync on a stream), so the "
                   "copy overlaps the previous step's compute instead of stalling it.");
    if (down.calls)
        an_appendf(f->change, sizeof f->change,
                   "%sDownload into pinned memory too: allocate the host copy once with "
                   "torch.empty(..., pin_memory=True) and fill it with "
                   "host.copy_(tensor, non_blocking=True) on a side stream, recording an event "
                   "to wait for before the host reads it (cuMemcpyDtoHAsync into "
                   "cuMemHostAlloc'd memory).", f->change[0] ? " " : "");
    an_set_saving(m, f, saving);
    f->whatif = AN_WI_PINNED_ASYNC;
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "idle_share_steady", share);
    an_finding_fig(f, "blocked_copies", (double)blocked);
    an_finding_fig(f, "blocked_bytes", (double)m->total.h2d_blocked_bytes);
    an_finding_fig(f, "blocked_ns", (double)m->total.h2d_blocked_ns);
    an_finding_fig(f, "pageable_copies", (double)pageable->count);
    an_finding_fig(f, "pinned_copies", (double)pinned->count);
    an_finding_fig(f, "blocked_downloads", (double)down.calls);
    an_finding_fig(f, "blocked_download_bytes", (double)down.bytes);
    an_finding_fig(f, "blocked_download_ns", (double)down.ns);
}
