/*
 * sync_bubble: a synchronizing call (loss.item(), print(tensor), torch.cuda.synchronize(),
 * a device-to-host copy, an event or stream sync) drains the GPU's queue every step, and
 * the GPU then waits while the host does its per-step Python and queues work again.
 * Without the sync the host runs ahead and that time overlaps the GPU's.
 * Saving (upper bound): the idle after the drains, at most the GPU's own busy time (the
 * host work can hide behind the GPU's, not more).
 */
#include <stdio.h>

#include "rules.h"
#include "trace_reader.h"

/* The entry point that drained most often (cuMemFree's waits belong to the allocator). */
static unsigned top_drain(const struct an_model *m)
{
    unsigned best = 0;
    for (unsigned api = 1; api < GW_API_ID_LIMIT; api++) {
        if (api == GW_API_cuMemFree_v2)
            continue;
        if (m->drains_by_api[api] > m->drains_by_api[best])
            best = api;
    }
    return best;
}

void an_rule_sync_bubble(const struct an_model *m, const struct an_rule_ctx *ctx,
                         struct an_findings *out)
{
    (void)ctx;
    double share = an_steady_share(m, AN_CAUSE_SYNC);
    if (share < m->th.min_share)
        return;
    uint64_t steps = an_steady_steps(m);
    double syncs_per_step = (double)m->steady.drains / (double)steps;
    if (m->steps.steady && syncs_per_step < m->th.sync_steps_share)
        return;  /* drains now and then are not the loop's rhythm */
    struct an_finding *f = an_finding_add(out, "sync_bubble");
    if (!f)
        return;
    unsigned api = top_drain(m);
    const char *api_name = api ? gw_api_name(api) : NULL;
    char phrase[128], per_step[32], step[32];
    an_steady_phrase(m, phrase, sizeof phrase);
    double steady_idle = an_idle_ns(m, &m->steady, AN_CAUSE_SYNC);
    double idle_step = an_per_step(m, steady_idle);
    an_fmt_ns(per_step, sizeof per_step, idle_step);
    an_fmt_ns(step, sizeof step, (double)m->steps.median_ns);
    snprintf(f->title, sizeof f->title,
             "A per-step synchronization drains the GPU's queue (sync bubble)");
    an_appendf(f->evidence, sizeof f->evidence,
               "In the %s %.1f synchronizing call%s per step drained the queue (mostly %s, "
               "%llu calls",
               phrase, syncs_per_step, syncs_per_step >= 1.5 ? "s" : "",
               api_name ? api_name : "?", (unsigned long long)m->drains_by_api[api]);
    if (m->scalar_d2h)
        an_appendf(f->evidence, sizeof f->evidence,
                   "; %llu device-to-host copies of 64 bytes or less: .item() on a scalar",
                   (unsigned long long)m->scalar_d2h);
    an_appendf(f->evidence, sizeof f->evidence,
               "); after each, the GPU waited %s for the host to queue work again", per_step);
    if (m->steps.steady)
        an_appendf(f->evidence, sizeof f->evidence, " (%.0f%% of the %s median step).",
                   share * 100, step);
    else
        an_appendf(f->evidence, sizeof f->evidence, " (%.0f%% of the time).", share * 100);

    /* log every N steps so that what is left of the bubble costs about 1 % */
    unsigned every = 100;
    if (m->steps.median_ns) {
        double n = idle_step / (0.01 * (double)m->steps.median_ns);
        every = n < 10 ? 10 : n > 1000 ? 1000 : (unsigned)(n + 0.5);
    }
    snprintf(f->change, sizeof f->change,
             "Take the synchronization out of the step: no loss.item(), print(tensor), "
             ".cpu() or torch.cuda.synchronize() every step. Accumulate on the GPU "
             "(running_loss += loss.detach()) and read it every %u steps (log every N "
             "steps), so the host keeps queueing ahead of the GPU.", every);
    uint64_t saving = an_run_idle(m, AN_CAUSE_SYNC);
    uint64_t busy = an_busy_ns(m, &m->total, m->wall_ns);
    an_set_saving(m, f, saving < busy ? saving : busy);
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "idle_share_steady", share);
    an_finding_fig(f, "idle_per_step_ns", idle_step);
    an_finding_fig(f, "syncs_per_step", syncs_per_step);
    an_finding_fig(f, "scalar_d2h_copies", (double)m->scalar_d2h);
    an_finding_fig(f, "log_every_steps", every);
}
