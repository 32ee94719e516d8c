/*
 * contention: the training thread was runnable but waited for a CPU (the shim's CPU samples
 * read /proc's schedstat: preempted, not busy and not asleep) for min_share of the steady
 * state or more: more runnable threads than CPUs (DataLoader workers, intra-op threads,
 * other processes on the machine). Time off a CPU is then not the input pipeline's, and
 * more workers would make it worse. Saving (upper bound): that time outside the thread's
 * waits for the GPU (preempted in one it loses nothing), at most the GPU's idle time (a
 * preempted host costs nothing while the GPU has queued work); host-only, where that idle
 * is not proven, that time.
 */
#include <stdio.h>

#include "rules.h"

void an_rule_contention(const struct an_model *m, const struct an_rule_ctx *ctx,
                        struct an_findings *out)
{
    const struct an_cpu_use *c = &m->cpu;
    uint64_t span = an_steady_span(m);
    if (!c->known || !c->runq_known || !span || c->train_runq < m->th.min_share)
        return;
    double preempted = an_run_from_steady(m, c->train_runq * (double)span);
    /* a thread preempted while it spins in a wait for the GPU loses nothing: the GPU still
     * has its work (a healthy loop, host-only, came out 15 % "contended"). schedstat does
     * not say when the thread waited for a CPU: the share of it outside those waits.
     * With GPU records, at most the GPU's idle time; host-only that idle is not proven
     * where no sync waited, and this is the bound (said in the evidence) */
    double outside = c->train_wait < 1 ? 1 - c->train_wait : 0;
    double saving = preempted * outside;
    if (m->gpu_timeline) {
        double idle = (double)an_run_idle_all(m);
        saving = saving < idle ? saving : idle;
    }
    if (an_whatif_share(m, (uint64_t)saving) < m->th.min_share)
        return;
    struct an_finding *f = an_finding_add(out, "contention");
    if (!f)
        return;
    char phrase[128];
    an_steady_phrase(m, phrase, sizeof phrase);
    snprintf(f->title, sizeof f->title,
             "CPU contention: the training thread waits for a CPU, not for input");
    an_appendf(f->evidence, sizeof f->evidence,
               "In the %s the training thread (tid %u) was runnable but without a CPU %.0f%% "
               "of the time (preempted: /proc schedstat), on a CPU %.0f%% of the time it did "
               "not wait for the GPU", phrase, c->train_tid, c->train_runq * 100,
               c->train_busy * 100);
    if (c->workers)
        an_appendf(f->evidence, sizeof f->evidence,
                   "; %u worker process%s kept %.1f CPUs busy", c->workers,
                   c->workers == 1 ? "" : "es", c->workers_cpus);
    an_appendf(f->evidence, sizeof f->evidence, "; the process used %.1f CPUs", c->process_cpus);
    if (ctx->cpus)
        an_appendf(f->evidence, sizeof f->evidence, " of the %u it could run on", ctx->cpus);
    an_appendf(f->evidence, sizeof f->evidence, ".");
    if (!m->gpu_timeline)
        an_appendf(f->evidence, sizeof f->evidence,
                   " (Host-only trace: whether the GPU had work queued meanwhile is not "
                   "known; the saving is the preempted time.)");
    unsigned local = ctx->local_world ? ctx->local_world : 1;
    an_appendf(f->change, sizeof f->change,
               "Run fewer threads than CPUs: cap intra-op threads (torch.set_num_threads(N), "
               "OMP_NUM_THREADS=N, MKL_NUM_THREADS=N");
    if (ctx->cpus)
        an_appendf(f->change, sizeof f->change, " with N = %u CPUs // %u local rank%s // 2",
                   ctx->cpus, local, local == 1 ? "" : "s");
    an_appendf(f->change, sizeof f->change,
               "), keep num_workers at or below the CPUs per rank minus one, pin each rank "
               "and its workers to their own cores (taskset -c, numactl --physcpubind), and "
               "move other CPU-heavy jobs off this machine. More DataLoader workers would "
               "make this worse.");
    an_set_saving(m, f, (uint64_t)saving);
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "preempted_share", c->train_runq);
    an_finding_fig(f, "preempted_run_ns", preempted);
    an_finding_fig(f, "training_thread_busy", c->train_busy);
    an_finding_fig(f, "process_cpus", c->process_cpus);
}
