/*
 * small_copies: the GPU sat idle while the host was blocked in many small host-to-device
 * copies each step (a dict of tensors moved one by one, torch.tensor(...) built on the host
 * every step, per-sample copies). Each copy pays the driver's fixed cost and, from pageable
 * memory, a wait for the stream; the bytes themselves take microseconds. pageable_h2d
 * claims the same idle when the copies are batch-sized (h2d_min_bytes on average); this
 * rule when they are small and many, where pinning alone would not help much.
 * Saving: the replay with the copies pinned and asynchronous (AN_WI_PINNED_ASYNC).
 */
#include <stdio.h>

#include "rules.h"

void an_rule_small_copies(const struct an_model *m, const struct an_rule_ctx *ctx,
                          struct an_findings *out)
{
    (void)ctx;
    double share = an_steady_share(m, AN_CAUSE_H2D);
    uint64_t blocked = m->total.h2d_blocked_calls;
    /* per steady step: start-up copies (weights, buffers) are not the loop's */
    double per_step = (double)m->steady.h2d_blocked_calls / (double)an_steady_steps(m);
    if (!an_whatif_worth(m, AN_WI_PINNED_ASYNC) || !blocked ||
        m->total.h2d_blocked_bytes / blocked >= m->th.h2d_min_bytes ||
        per_step < m->th.small_copies_per_step)
        return;
    struct an_finding *f = an_finding_add(out, "small_copies");
    if (!f)
        return;
    uint64_t small = 0;
    for (int k = 0; k < AN_HOST_KINDS; k++)
        small += m->xfer[GW_COPY_HTOD][k].small;
    char phrase[128], avg[32], wait[32], idle_step[32];
    an_steady_phrase(m, phrase, sizeof phrase);
    an_fmt_bytes(avg, sizeof avg, (double)m->total.h2d_blocked_bytes / (double)blocked);
    an_fmt_ns(wait, sizeof wait, (double)m->total.h2d_blocked_ns);
    an_fmt_ns(idle_step, sizeof idle_step,
              an_per_step(m, an_idle_ns(m, &m->steady, AN_CAUSE_H2D)));
    snprintf(f->title, sizeof f->title,
             "Many small host-to-device copies each step stall the GPU");
    an_appendf(f->evidence, sizeof f->evidence,
               "%llu host-to-device copies blocked the host, %.1f per step, %s each on "
               "average (%llu of all H2D copies were under 64 KiB); %s blocked in all.",
               (unsigned long long)blocked, per_step, avg, (unsigned long long)small, wait);
    an_appendf(f->evidence, sizeof f->evidence,
               " In the %s the GPU sat idle in them %s per step (%.0f%% of the time).", phrase,
               idle_step, share * 100);
    snprintf(f->change, sizeof f->change,
             "Move one tensor per step instead of many: gather the small tensors on the host "
             "(torch.cat/torch.stack in collate_fn, or one pinned staging buffer) and copy it "
             "once with .to(device, non_blocking=True); create constants and scalars on the "
             "GPU (torch.zeros(..., device=\"cuda\")) once, outside the loop, instead of "
             "building them on the host every step. Short of that, pin them "
             "(DataLoader(pin_memory=True) pins every tensor of a batch) and copy each with "
             "non_blocking=True: the saving below is theirs, the host no longer waiting in "
             "each copy.");
    an_set_whatif_saving(m, f, AN_WI_PINNED_ASYNC);
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "idle_share_steady", share);
    an_finding_fig(f, "blocked_copies", (double)blocked);
    an_finding_fig(f, "copies_per_step", per_step);
    an_finding_fig(f, "avg_bytes", (double)m->total.h2d_blocked_bytes / (double)blocked);
    an_finding_fig(f, "small_copies", (double)small);
}
