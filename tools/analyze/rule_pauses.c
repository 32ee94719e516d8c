/*
 * pauses: the GPU sat idle in a few long stretches without a CUDA call, each many steps
 * long (pause_steps median steps, at least pause_min_ns): what the training process does
 * every so many steps — evaluation, saving a checkpoint, a DataLoader that restarts its
 * workers at each epoch, heavy logging. Per-step DataLoader advice would be wrong for it,
 * so input_pipeline leaves these stretches out.
 * Pauses before the steady steps (or after them) are start-up work: a one-off cost, which
 * a short profiled run exaggerates (on an H100, PyTorch's start-up took 6-47 s against
 * loops of 5-15 s), so it is neither a finding nor part of the saving; the summary gives
 * the time before the steady state.
 * Saving (upper bound): the stretches within the steady state, as if the work ran off the
 * training loop.
 */
#include <stdio.h>

#include "pauses.h"
#include "rules.h"

void an_rule_pauses(const struct an_model *m, const struct an_rule_ctx *ctx,
                    struct an_findings *out)
{
    (void)ctx;
    uint64_t count = 0, steady_count = 0;
    uint64_t total = an_pause_ns(m, &count);
    uint64_t steady = an_pause_steady_ns(m, &steady_count);
    if (!steady_count || !m->wall_ns || (double)steady < m->th.min_share * (double)m->wall_ns)
        return;
    struct an_finding *f = an_finding_add(out, "pauses");
    if (!f)
        return;
    uint64_t threshold = an_pause_threshold(m);
    uint64_t every = m->steps.count / steady_count;
    an_set_saving(m, f, steady);
    f->first_ts = m->first_ts;
    f->last_ts = m->last_ts;
    an_finding_fig(f, "pauses", (double)count);
    an_finding_fig(f, "pause_ns", (double)total);
    an_finding_fig(f, "pause_min_ns", (double)threshold);
    an_finding_fig(f, "steps_between", (double)every);
    an_finding_fig(f, "pauses_outside_steady", (double)(count - steady_count));
    char each[32], all[32], step[32], min[32];
    an_fmt_ns(each, sizeof each, (double)steady / (double)steady_count);
    an_fmt_ns(all, sizeof all, (double)steady);
    an_fmt_ns(step, sizeof step, (double)m->steps.median_ns);
    an_fmt_ns(min, sizeof min, (double)threshold);
    snprintf(f->title, sizeof f->title,
             "The GPU stops in long pauses every so many steps: evaluation, checkpoints or an "
             "epoch's restart on the training process");
    an_appendf(f->evidence, sizeof f->evidence,
               "The GPU sat idle in %llu pause%s of %s on average (%s in all, %.0f%% of the "
               "run), about once every %llu steps, while the host made no CUDA call for %s "
               "or more at a stretch: far longer than loading a batch (the median step takes "
               "%s).",
               (unsigned long long)steady_count, steady_count == 1 ? "" : "s", each, all,
               100.0 * (double)steady / (double)m->wall_ns, (unsigned long long)every, min,
               step);
    if (count > steady_count) {
        char outside[32];
        an_fmt_ns(outside, sizeof outside, (double)(total - steady));
        an_appendf(f->evidence, sizeof f->evidence,
                   " %llu more (%s) came before or after the steady steps: start-up work, "
                   "a one-off cost left out of the saving.",
                   (unsigned long long)(count - steady_count), outside);
    }
    const struct an_interval *longest = an_longest(m, AN_CAUSE_INPUT);
    if (longest && longest->end - longest->start >= threshold) {
        char len[32];
        an_fmt_ns(len, sizeof len, (double)(longest->end - longest->start));
        an_appendf(f->evidence, sizeof f->evidence, " Longest: %s at %.3f s.", len,
                   an_rel_s(m, longest->start));
    }
    an_appendf(f->change, sizeof f->change,
               "Find what the training loop does about every %llu steps and take it off the "
               "GPU's path. Evaluation: run it less often or on fewer batches, or in another "
               "process. Checkpoints: save asynchronously "
               "(torch.distributed.checkpoint.async_save, or copy the state_dict to CPU and "
               "write it from a background thread). Epoch starts: "
               "DataLoader(persistent_workers=True) keeps the workers and their prefetched "
               "batches across epochs. Logging: gather metrics on the GPU and log every N "
               "steps.",
               (unsigned long long)every);
}
