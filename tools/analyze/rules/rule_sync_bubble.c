/*
 * sync_bubble: a synchronizing call (loss.item(), print(tensor), torch.cuda.synchronize(),
 * a device-to-host copy, an event or stream sync) drains the GPU's queue every step, and
 * the GPU then waits while the host does its per-step Python and queues work again.
 * Without the sync the host runs ahead and that time overlaps the GPU's.
 * The bubble does not end when the host launches again: while it refills the queue kernel
 * by kernel the GPU still waits between kernels (launch gaps), until the host is ahead
 * again. Without the sync the host would have been ahead all along, so those gaps are the
 * sync's too, but only up to the time the host spent waiting in the draining calls: a host
 * slower than the GPU gains that wait back, no more (its launch gaps are its own, the
 * launch_bound rule's).
 * Saving: the replay without the user's synchronizations (replay.h, AN_WI_NO_SYNC): the
 * drains no longer wait and their copies run asynchronously, so the host queues ahead and
 * its per-step work hides behind the GPU's, as far as the GPU's own work allows. It fires
 * when that saving is min_share of the run, however many drains a step holds (steps found
 * wrongly, or none, change nothing). The idle figures in the evidence say where the time
 * went; the replay says what comes back.
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
    uint64_t span = an_steady_span(m);
    double steady_idle = an_idle_ns(m, &m->steady, AN_CAUSE_SYNC);
    double share = span ? steady_idle / (double)span : 0;
    double bubble = steady_idle, refill = 0;
    if (m->gpu_timeline) {
        double idle = bubble + an_idle_ns(m, &m->steady, AN_CAUSE_LAUNCH);
        double waited = (double)m->steady.sync_wait_ns;
        double recoverable = idle < waited ? idle : waited;
        refill = recoverable > bubble ? recoverable - bubble : 0;
        bubble = recoverable < bubble ? recoverable : bubble;
    }
    /* The time the thread was preempted outside its waits (CPU samples: another process,
     * more threads than CPUs) is no sync's: the GPU idled while the host was off its CPU,
     * and a loop that no longer syncs each step runs a few steps ahead at most (an event
     * a step or two back, the launch queue), less than a slice of another process's time
     * (beside a CPU hog: 5.0 ms predicted, 0.6 measured, on a GPU 99.7 % busy host-only).
     * Contention's, as for the input pipeline's workers. */
    uint64_t replayed = an_whatif_saving(m, AN_WI_NO_SYNC);
    const struct an_cpu_use *c = &m->cpu;
    uint64_t preempted = c->known && c->runq_known && span
                             ? an_run_from_steady(m, c->train_runq * (double)span *
                                                         (c->train_wait < 1 ? 1 - c->train_wait : 0))
                             : 0;
    replayed = replayed > preempted ? replayed - preempted : 0;
    if (an_whatif_share(m, replayed) < m->th.min_share || !top_drain(m))
        return;
    uint64_t steps = an_steady_steps(m);
    double syncs_per_step = (double)m->steady.drains / (double)steps;
    struct an_finding *f = an_finding_add(out, "sync_bubble");
    if (!f)
        return;
    unsigned api = top_drain(m);
    const char *api_name = api ? gw_api_name(api) : NULL;
    const char *unit = m->steps.steady ? "per step" : "in all";
    char phrase[128], per_step[32], step[32];
    an_steady_phrase(m, phrase, sizeof phrase);
    double idle_step = an_per_step(m, steady_idle);
    double saving_step = m->steps.count ? (double)replayed / (double)m->steps.count
                                        : (double)replayed;
    an_fmt_ns(per_step, sizeof per_step, idle_step);
    an_fmt_ns(step, sizeof step, (double)m->steps.median_ns);
    snprintf(f->title, sizeof f->title,
             "A per-step synchronization drains the GPU's queue (sync bubble)");
    an_appendf(f->evidence, sizeof f->evidence,
               "In the %s %.1f synchronizing call%s %s drained the queue (mostly %s, "
               "%llu calls",
               phrase, syncs_per_step, syncs_per_step >= 1.5 ? "s" : "", unit,
               api_name ? api_name : "?", (unsigned long long)m->drains_by_api[api]);
    if (m->scalar_d2h)
        an_appendf(f->evidence, sizeof f->evidence,
                   "; %llu device-to-host copies of 64 bytes or less: .item() on a scalar",
                   (unsigned long long)m->scalar_d2h);
    an_appendf(f->evidence, sizeof f->evidence,
               "); after them, the GPU waited %s %s for the host to queue work again",
               per_step, unit);
    if (m->steps.steady)
        an_appendf(f->evidence, sizeof f->evidence, " (%.0f%% of the %s median step).",
                   share * 100, step);
    else
        an_appendf(f->evidence, sizeof f->evidence, " (%.0f%% of the time).", share * 100);
    if (refill >= 0.01 * (double)span) {  /* (less is noise, though in the saving) */
        char more[32], wait[32];
        an_fmt_ns(more, sizeof more, an_per_step(m, refill));
        an_fmt_ns(wait, sizeof wait, an_per_step(m, (double)m->steady.sync_wait_ns));
        an_appendf(f->evidence, sizeof f->evidence,
                   " Up to %s more %s is the refill: the GPU waiting between the host's "
                   "first launches after a drain (the host waited %s %s in the draining "
                   "calls; it would have been ahead without them).", more, unit, wait, unit);
    }

    /* Host-only (or outside a sampled timeline's windows), a wait the thread slept in
     * returned a wake-up after the GPU's work, which the trace cannot tell from the work:
     * taken at the machine's wake-up latency, measured before the run, a floor (a CPU that
     * idled for a whole step wakes later: per_step_sync_blocking's waits ended 70 to 300
     * us after their kernels where the machine measured 40 to 70). */
    if (m->replay.waits_woken) {
        char wake[32];
        an_fmt_ns(wake, sizeof wake, (double)m->replay.wake_ns);
        an_appendf(f->evidence, sizeof f->evidence,
                   " The thread slept in its waits (cudaDeviceScheduleBlockingSync): each "
                   "returned a wake-up after the GPU's work, taken at the %s this machine "
                   "measured; a CPU that idled longer wakes later, so the saving is a lower "
                   "bound (a trace with the GPU's timeline measures it).", wake);
        f->lower_bound = 1;
    }

    /* log every N steps so that what is left of the bubble costs about 1 % */
    unsigned every = 100;
    if (m->steps.median_ns) {
        double n = saving_step / (0.01 * (double)m->steps.median_ns);
        every = n < 10 ? 10 : n > 1000 ? 1000 : (unsigned)(n + 0.5);
    }
    snprintf(f->change, sizeof f->change,
             "Take the synchronization out of the step: no loss.item(), print(tensor), "
             ".cpu() or torch.cuda.synchronize() every step. Accumulate on the GPU "
             "(running_loss += loss.detach()) and read it every %u steps (log every N "
             "steps), so the host keeps queueing ahead of the GPU.", every);
    an_set_saving(m, f, replayed);
    f->whatif = AN_WI_NO_SYNC;
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "idle_share_steady", share);
    an_finding_fig(f, "idle_per_step_ns", idle_step);
    an_finding_fig(f, "refill_per_step_ns", an_per_step(m, refill));
    an_finding_fig(f, "syncs_per_step", syncs_per_step);
    an_finding_fig(f, "scalar_d2h_copies", (double)m->scalar_d2h);
    an_finding_fig(f, "log_every_steps", every);
}
