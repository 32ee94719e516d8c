/*
 * input_pipeline: the GPU sat idle while the host made no CUDA call for long stretches
 * (>= input_gap_ns at a time). In a PyTorch loop that is the DataLoader producing the next
 * batch in the main process (num_workers=0) or workers that cannot keep up.
 * Stretches of many steps are not batch loads: they are the pauses rule's (pauses.c), and
 * left out here.
 * A loop that replays CUDA graphs every step (torch.compile(mode="reduce-overhead"), or
 * graphs captured by hand) has already cut its launches, and the host's own per-step work
 * outside the graphs (Python, compile guards and graph bookkeeping, an eager optimizer)
 * shows the same way as a slow DataLoader: seen from the driver the two cannot be told
 * apart, so the change names both, that one first.
 * When the trace has CPU samples (cpu_use.h), they tell which: the change then follows what
 * the training thread and the worker processes did (rule_input_advice.c).
 * Saving: the replay with the batch loads made by DataLoader workers (replay.h,
 * AN_WI_INPUT_WORKERS: the count a user starts, each as slow as the thread was or slower
 * where the CPUs they would share are busy (worker_budget.h; cpus - 1 at the thread's speed
 * without CPU samples), two batches ahead each): what they cannot hide stays; never more
 * than the GPU sat idle. Host-only, where no call of the loop waited for the GPU, nothing
 * proves it idle: the replay's saving is then said apart, as an upper bound
 * (findings.h, an_unproven).
 */
#include <stdio.h>

#include "pauses.h"
#include "rule_input_advice.h"
#include "rules.h"

/* Drains that waited this share of the steady state prove how busy the GPU was */
#define AN_INPUT_WAITS_PROVE 0.01

/* The workers the change names: the budget's, else all CPUs of the process's share of the
 * machine but the training thread's (0: the CPUs unknown). */
static unsigned workers_named(const struct an_model *m, const struct an_rule_ctx *ctx)
{
    unsigned local = ctx->local_world ? ctx->local_world : 1;
    if (m->budgeted)
        return m->budget.workers;
    return ctx->cpus ? (ctx->cpus / local > 1 ? ctx->cpus / local - 1 : 1) : 0;
}

/* Host-only, a loop none of whose calls waited for the GPU: the workers' replay takes its
 * kernels as nil, and nothing proves the GPU idle while the host loaded. Said as what it is,
 * an upper bound the trace cannot confirm, rather than passed over: "No findings" on a
 * loop that two workers make 48 % faster (issue 36 E12, random draw 12). proven: what the
 * finding claims where the waits prove part of it (0: no finding). */
static void say_unproven(const struct an_model *m, unsigned workers, uint64_t up_to,
                         uint64_t proven, struct an_findings *out)
{
    char change[sizeof ((struct an_unproven *)0)->change];
    if (workers)
        snprintf(change, sizeof change,
                 "load batches in DataLoader workers (num_workers=%u, pin_memory=True)", workers);
    else
        snprintf(change, sizeof change, "load batches in DataLoader workers");
    an_say_unproven(m, "input_pipeline", AN_WI_INPUT_WORKERS, up_to, proven, change, out);
}

/* Idle that one stretch holds half of or more is an incident, not a loader that cannot
 * keep up: one of four ranks sharing two CPUs, preempted once for 8.3 ms in a run of 37
 * healthy steps (no other stretch of 1 ms), came out as a loader costing 6 % of its steps.
 * Batch loads recur: there, the steady state's idle less that stretch must be worth a
 * finding. */
static int one_incident(const struct an_model *m, const struct an_interval *longest,
                        double steady_idle, uint64_t span)
{
    if (!longest || !span || !an_in_steady(m, longest))
        return 0;
    double stretch = (double)(longest->end - longest->start);
    return 2 * stretch >= steady_idle && steady_idle - stretch < m->th.min_share * (double)span;
}

void an_rule_input_pipeline(const struct an_model *m, const struct an_rule_ctx *ctx,
                            struct an_findings *out)
{
    if (!an_loads_batches(m))
        return;
    uint64_t span = an_steady_span(m);
    double steady_idle = an_idle_ns(m, &m->steady, AN_CAUSE_INPUT);
    double pauses = (double)an_pause_steady_ns(m, NULL);
    steady_idle = steady_idle > pauses ? steady_idle - pauses : 0;
    double share = span ? steady_idle / (double)span : 0;
    /* the longest stretch of input idle (pauses apart), the steady state's if it has one */
    uint64_t pause = an_pause_threshold(m);
    const struct an_interval *longest =
        an_longest_below(m, AN_CAUSE_INPUT, pause ? pause : UINT64_MAX);
    if (one_incident(m, longest, steady_idle, span))
        return;
    /* time the thread was preempted (CPU samples) is no batch load: workers cannot give it
     * back, they would compete for the same CPUs (the contention rule's) */
    uint64_t replayed = an_whatif_saving(m, AN_WI_INPUT_WORKERS);
    uint64_t preempted = m->cpu.runq_known && span
                             ? an_run_from_steady(m, m->cpu.train_runq * (double)span)
                             : 0;
    uint64_t saving = replayed > preempted ? replayed - preempted : 0;
    /* the workers hide the host's time, never the GPU's own work: at most the time the GPU
     * sat idle (the steady state's, over the run). The whole timeline measures it; host-only
     * and outside a sampled timeline's windows it is what drains prove, where they waited:
     * the replay infers kernels' lengths from those waits, and a host that ran ahead of a
     * busy GPU looks as if it kept it waiting (on an H200, healthy.py, host-only, the GPU
     * 98.5 % busy, "saved" 788 ms). A loop that never waits proves nothing: with a sampled
     * timeline the windows' records tell the replay how long kernels run, and it stands;
     * host-only a loop bound by its loads (two workers gain 47 %) and one whose kernels run
     * as long as its loads (workers lose 20 %) look the same, and the saving stays what is
     * proven (random_loops seed 10 predicted 290 ms where the fix lost 62) */
    double idle = (double)an_run_idle_all(m);
    int measured = m->gpu_records && !m->gpu_sampled;
    int proven = span && (double)m->steady.sync_wait_ns >= AN_INPUT_WAITS_PROVE * (double)span;
    uint64_t unproven = saving;
    if ((measured || proven || !m->gpu_records) && (double)saving > idle)
        saving = (uint64_t)idle;
    unsigned workers = workers_named(m, ctx);
    int worth = an_whatif_worth(m, AN_WI_INPUT_WORKERS);
    int found = worth && an_whatif_share(m, saving) >= m->th.min_share;
    /* Host-only, the waits prove some steps' kernels and leave others' unknown (a read
     * every few steps, a synchronous copy after the kernels long ended): the saving they
     * prove is a floor, and the replay's with the unknown kernels as nil the ceiling. Both
     * are said (random draws 24 and 30: 84 and 104 ms proven, 246 and 224 replayed, the
     * users' workers gained 274 and 167; draw 6 proved too little for a finding, and the
     * ceiling went unsaid where workers gained 120 ms). Only where what is unproven is worth
     * a finding itself: a ceiling a hair above the floor says nothing. */
    /* The same where the waits prove work but not when it ran: a read every third step
     * waits for three steps' kernels, which may have run during the loads between them
     * or after the last one (AN_WI_LEAST: the workers' replay with them at their least is
     * the ceiling; random draws 162 and 182 proved 43 and 44 ms, two workers gained 358
     * and 221). */
    uint64_t least = an_replay_ceiling(&m->replay, AN_WI_INPUT_WORKERS);
    least = least > preempted ? least - preempted : 0;
    if (!m->replay.ops_unproven && proven)
        unproven = saving;  /* (what the idle time caps is no ceiling: it is proven) */
    if (least > unproven)
        unproven = least;
    int partly = proven && unproven > saving &&
                 an_whatif_share(m, unproven - saving) >= m->th.min_share;
    /* (where the waits prove none of it, said whenever the ceiling is worth a finding,
     * the floor's replay or not: a wait that proves work done, not when it ran, has it
     * busy through every load there, and the workers hide nothing; random draw 243, where
     * four workers gained 43 %) */
    if (!m->gpu_records && (!proven || partly) &&
        an_whatif_share(m, unproven) >= m->th.min_share && unproven > (found ? saving : 0))
        say_unproven(m, workers, unproven, found ? saving : 0, out);
    if (!found)
        return;
    struct an_finding *f = an_finding_add(out, "input_pipeline");
    if (!f)
        return;
    char phrase[128], per_step[32], step[32], run[32], gap[32];
    an_steady_phrase(m, phrase, sizeof phrase);
    uint64_t run_idle = an_run_from_steady(m, steady_idle);
    an_fmt_ns(per_step, sizeof per_step, an_per_step(m, steady_idle));
    an_fmt_ns(step, sizeof step, (double)m->steps.median_ns);
    an_fmt_ns(run, sizeof run, (double)run_idle);
    an_fmt_ns(gap, sizeof gap, (double)m->th.input_gap_ns);
    double graphs_per_step = (double)m->steady.graph_launches / (double)an_steady_steps(m);
    int replays = m->steps.steady && graphs_per_step >= 1;
    snprintf(f->title, sizeof f->title,
             replays ? "The GPU waits for the host between CUDA graph replays"
                     : "The GPU waits for input: the host makes no CUDA call for long stretches");
    if (m->steps.steady)
        an_appendf(f->evidence, sizeof f->evidence,
                   "In the %s the GPU sat idle %s per step (%.0f%% of the %s median step) "
                   "while the host made no CUDA call for %s or more at a time.",
                   phrase, per_step, share * 100, step, gap);
    else
        an_appendf(f->evidence, sizeof f->evidence,
                   "Over the %s the GPU sat idle %.0f%% of the time while the host made no "
                   "CUDA call for %s or more at a time.", phrase, share * 100, gap);
    if (longest) {
        char len[32];
        an_fmt_ns(len, sizeof len, (double)(longest->end - longest->start));
        an_appendf(f->evidence, sizeof f->evidence, " Longest: %s at %.3f s.", len,
                   an_rel_s(m, longest->start));
    }
    if (m->steps.steady)
        an_appendf(f->evidence, sizeof f->evidence, " Over all %llu steps: %s.",
                   (unsigned long long)m->steps.count, run);
    else
        an_appendf(f->evidence, sizeof f->evidence, " In all: %s.", run);

    if (m->cpu.known)
        an_input_cpu_advice(m, ctx, workers, f);
    else
        an_input_blind_advice(m, ctx, workers, replays ? graphs_per_step : 0, f);
    an_set_saving(m, f, saving);  /* the workers' replay, less the preempted time */
    f->whatif = AN_WI_INPUT_WORKERS;
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "idle_share_steady", share);
    an_finding_fig(f, "idle_per_step_ns", an_per_step(m, steady_idle));
    an_finding_fig(f, "idle_run_ns", (double)run_idle);
    an_finding_fig(f, "suggested_workers", workers);
    an_finding_fig(f, "cpus", ctx->cpus);
    an_finding_fig(f, "worker_speed", m->replay.worker_speed);
    an_finding_fig(f, "graph_replays_per_step", replays ? graphs_per_step : 0);
    if (m->cpu.known) {
        an_finding_fig(f, "training_thread_busy", m->cpu.train_busy);
        an_finding_fig(f, "training_thread_waiting", m->cpu.train_wait);
        an_finding_fig(f, "workers_running", m->cpu.workers);
        an_finding_fig(f, "workers_cpus", m->cpu.workers_cpus);
    }
}
