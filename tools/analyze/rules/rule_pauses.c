/*
 * pauses: the training thread stopped making CUDA calls in a few long stretches, each after
 * many iterations of its loop (whatif.h, an_wi_loop_pause: pause_min_ns or more, or shorter
 * right after a read-back with none like it between, after pause_every_min iterations):
 * what a training loop does every so many steps — saving a checkpoint, heavy logging, a
 * DataLoader that restarts its workers at each epoch. Per-step
 * DataLoader advice would be wrong for it: the replay's workers never take such a stretch.
 * Stretches before the loop ran are start-up work, a one-off cost no change here removes.
 * Saving: the replay with each pause run on a background thread, one at a time, the last
 * awaited at the end (replay.h, AN_WI_BACKGROUND): an asynchronous checkpoint save. The
 * loop gains the pause only up to its next pause, or the run's end; a pause longer than
 * the loop between two of them hides only that loop. The pauses' whole length is what
 * dropping the work would give back (persistent DataLoader workers across epochs, saving
 * less often): said in the text as the most any change gives, not as the saving.
 * Host-only, work a drain after a pause waited for may have been issued before it on a
 * stream the checkpoint's read did not drain, and the replay takes it as running through
 * the pause: the background save's replay with drained work at its least is the ceiling,
 * said apart (findings.h, an_unproven; random draw 192: nothing replayed, where the save
 * gained 115 ms and the GPU's records said 91).
 */
#include <stdio.h>

#include "rules.h"

void an_rule_pauses(const struct an_model *m, const struct an_rule_ctx *ctx,
                    struct an_findings *out)
{
    (void)ctx;
    const struct an_replay *r = &m->replay;
    if (!r->pauses)
        return;
    int found = an_whatif_worth(m, AN_WI_BACKGROUND);
    uint64_t saving = found ? an_whatif_saving(m, AN_WI_BACKGROUND) : 0;
    /* Host-only, the replay takes the kernels no wait proved as nil (replay.c,
     * run_virtual), so its background world may run the loop on through the pause as if
     * the GPU had nothing queued. A background save hides the host's time and overlaps the
     * reads' copies with the loop's work; it never shortens the GPU's kernels: as the
     * workers' saving (rule_input_pipeline.c), the floor is at most the idle the waits
     * prove, and the reads' moves at their least (random draw 164: a loop whose GPU kept
     * pace with its loads, no wait between checkpoints: 124 ms replayed, 61 ms of idle
     * proven, the background save gained 77; the ceiling is said apart) */
    if (found && !m->gpu_records && r->ckpt_least_ns) {
        uint64_t cap = an_run_idle_all(m) + r->ckpt_least_ns;
        if (saving > cap)
            saving = cap;
        found = an_whatif_share(m, saving) >= m->th.min_share;
    }
    uint64_t ceiling = an_replay_ceiling(r, AN_WI_BACKGROUND);
    if (!m->gpu_records && ceiling > saving &&
        an_whatif_share(m, ceiling - saving) >= m->th.min_share)
        an_say_unproven(m, "pauses", AN_WI_BACKGROUND, ceiling, found ? saving : 0,
                        "save checkpoints from a background thread (pinned copies on a side "
                        "stream)", out);
    if (!found)
        return;
    struct an_finding *f = an_finding_add(out, "pauses");
    if (!f)
        return;
    an_set_saving(m, f, saving);
    f->whatif = AN_WI_BACKGROUND;
    uint64_t every = r->pause_cycles / r->pauses;
    f->first_ts = m->first_ts;
    f->last_ts = m->last_ts;
    an_finding_fig(f, "pauses", (double)r->pauses);
    an_finding_fig(f, "pause_ns", (double)r->pause_ns);
    an_finding_fig(f, "pause_min_ns", (double)m->th.pause_min_ns);
    an_finding_fig(f, "iterations_between", (double)every);
    char each[32], all[32], min[32], back[32];
    an_fmt_ns(each, sizeof each, (double)r->pause_ns / (double)r->pauses);
    an_fmt_ns(all, sizeof all, (double)r->pause_ns);
    an_fmt_ns(min, sizeof min, (double)m->th.pause_min_ns);
    an_fmt_ns(back, sizeof back, (double)f->saving_ns);
    snprintf(f->title, sizeof f->title,
             "The training loop stops in long pauses every so many steps: checkpoints, "
             "logging or an epoch's restart on the training thread");
    if (!r->readback_pauses) {
        an_appendf(f->evidence, sizeof f->evidence,
                   "The training thread made no CUDA call for %s or more %llu time%s, %s on "
                   "average (%s in all, %.0f%% of the run), each after %llu iterations of its "
                   "loop or more (a wait for the GPU after queueing work, or a step's end): "
                   "far longer than loading a batch, too rare to be the input's rhythm.",
                   min, (unsigned long long)r->pauses, r->pauses == 1 ? "" : "s", each, all,
                   m->wall_ns ? 100.0 * (double)r->pause_ns / (double)m->wall_ns : 0.0,
                   (unsigned long long)every);
    } else {
        char shortest[32];
        an_fmt_ns(shortest, sizeof shortest, (double)r->shortest_pause_ns);
        an_appendf(f->evidence, sizeof f->evidence,
                   "The training thread made no CUDA call %llu time%s for %s on average "
                   "(%s at the shortest; %s in all, %.0f%% of the run), each after %llu "
                   "iterations of its loop or more (a wait for the GPU after queueing work, or "
                   "a step's end); %llu of them right after it read tensors back from the GPU, "
                   "as a checkpoint's save or an evaluation's metrics do: too rare to be a "
                   "step's own work.",
                   (unsigned long long)r->pauses, r->pauses == 1 ? "" : "s", each, shortest,
                   all, m->wall_ns ? 100.0 * (double)r->pause_ns / (double)m->wall_ns : 0.0,
                   (unsigned long long)every, (unsigned long long)r->readback_pauses);
    }
    const struct an_interval *longest = an_longest(m, AN_CAUSE_INPUT);
    if (longest && longest->end - longest->start >= m->th.pause_min_ns) {
        char len[32];
        an_fmt_ns(len, sizeof len, (double)(longest->end - longest->start));
        an_appendf(f->evidence, sizeof f->evidence, " Longest GPU idle: %s at %.3f s.", len,
                   an_rel_s(m, longest->start));
    }
    an_appendf(f->change, sizeof f->change,
               "Find what the training loop does about every %llu iterations and take it off "
               "the training thread. Checkpoints: save asynchronously (copy the state_dict "
               "into pinned memory with non_blocking=True on a side stream and write it from "
               "a background thread once an event recorded after the copies has passed; "
               "torch.distributed.checkpoint.async_save stages it on the training thread, "
               "which keeps the read's wait): replayed with each pause, and the read of the "
               "state right before it, on a background thread, one at a time, the run gives "
               "back %s (a pause hides only the loop up to the next one). Epoch starts: DataLoader(persistent_workers=True) keeps the "
               "workers and their prefetched batches across epochs. Logging: gather metrics "
               "on the GPU and log every N steps. Work dropped or made rarer gives back up "
               "to the pauses' whole %s.",
               (unsigned long long)every, back, all);
}
