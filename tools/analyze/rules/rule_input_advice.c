/*
 * What to change when the GPU waits for input (rule_input_pipeline.c).
 *
 * With CPU samples, from what the host did while the GPU waited (the steady state's
 * shares, cpu_use.h; the training thread's outside its own waits for the GPU, in which
 * CUDA spins by default), one of five:
 *   no worker ran, the training thread busy      -> it loads every batch itself: workers
 *   no worker ran, the training thread idle      -> it waits on reads: workers, faster storage
 *   workers busy (worker_busy_share each)        -> they cannot keep up: more, or cheaper batches
 *   workers idle, the training thread busy       -> its own per-step work: profile it
 *   all idle                                     -> storage or network: prefetch, cache
 * Without them, a slow DataLoader and the host's own per-step work look the same from the
 * driver: the change names both, the more likely first.
 */
#include <stdio.h>

#include "rule_input_advice.h"

/* Waits for the GPU under this share of the steady state go unmentioned. */
#define AN_CPU_WAIT_SHOWN 0.01

static void dataloader(char *out, size_t size, const char *lead, unsigned workers,
                       const struct an_model *m, const struct an_rule_ctx *ctx)
{
    unsigned local = ctx->local_world ? ctx->local_world : 1;
    const struct an_worker_budget *b = &m->budget;
    if (m->budgeted && workers == b->workers) {
        /* the count the saving was replayed with, and why it is not cpus - 1 */
        an_appendf(out, size,
                   "%s: DataLoader(num_workers=%u, pin_memory=True, prefetch_factor=2, "
                   "persistent_workers=True). Of the %u CPUs the training thread needs %.1f "
                   "once it no longer loads", lead, workers, ctx->cpus, b->train_need);
        if (b->process_others >= 0.05)
            an_appendf(out, size, ", the process's other threads %.1f", b->process_others);
        if (b->others >= 0.05)
            an_appendf(out, size, ", other processes %.1f of the %.1f they use", b->others_keep,
                       b->others);
        double loading = b->speed * b->replayed * (b->load_cpu > 0.05 ? b->load_cpu : 1);
        an_appendf(out, size, ": the loads get %.1f CPU%s, what %u worker%s can use; more "
                   "would take their CPU from the training thread, and the saving is these "
                   "ones'.", loading, loading >= 1.05 ? "s" : "", workers,
                   workers == 1 ? "" : "s");
        if (b->speed * b->replayed < 0.95)
            an_appendf(out, size, " More CPUs, or cheaper batches, are what would give the "
                       "rest.");
        return;
    }
    if (workers)
        an_appendf(out, size,
                   "%s: DataLoader(num_workers=%u, pin_memory=True, prefetch_factor=2, "
                   "persistent_workers=True) (num_workers = max(1, %u CPUs // %u local rank%s "
                   "- 1)).", lead, workers, ctx->cpus, local, local == 1 ? "" : "s");
    else
        an_appendf(out, size,
                   "%s: DataLoader(num_workers=N, pin_memory=True, prefetch_factor=2, "
                   "persistent_workers=True) with N = max(1, os.cpu_count() // "
                   "local_world_size - 1) (the trace does not record the machine's CPU "
                   "count).", lead);
}

void an_input_cpu_advice(const struct an_model *m, const struct an_rule_ctx *ctx,
                         unsigned workers, struct an_finding *f)
{
    const struct an_cpu_use *c = &m->cpu;
    int busy = c->train_busy >= m->th.cpu_busy_share;
    /* what the thread's shares are of: its time outside its waits, when it waited */
    const char *of_time = c->train_wait >= AN_CPU_WAIT_SHOWN
                              ? "of the time it did not wait for the GPU" : "of the time";
    unsigned ran = c->workers;
    double per_worker = ran ? c->workers_cpus / ran : 0;
    an_appendf(f->evidence, sizeof f->evidence,
               " Meanwhile the training thread was on a CPU %.0f%% %s", c->train_busy * 100,
               of_time);
    if (c->train_wait >= AN_CPU_WAIT_SHOWN)
        an_appendf(f->evidence, sizeof f->evidence,
                   " (it waited %.0f%% of the time, on a CPU through %.0f%% of that)",
                   c->train_wait * 100, c->train_wait_cpu * 100);
    if (ran)
        an_appendf(f->evidence, sizeof f->evidence,
                   " and %u worker process%s kept %.1f CPUs busy.", ran, ran == 1 ? "" : "es",
                   c->workers_cpus);
    else if (c->processes)
        an_appendf(f->evidence, sizeof f->evidence,
                   "; none of its %u child process%s ran (no DataLoader worker).", c->processes,
                   c->processes == 1 ? "" : "es");
    else
        an_appendf(f->evidence, sizeof f->evidence, "; no worker process ran.");
    char *out = f->change;
    size_t size = sizeof f->change;
    if (m->budgeted && m->budget.workers == 0) {
        /* its own loader threads (or workers) already fill the CPUs: more share them */
        an_appendf(out, size,
                   "The process's own threads%s kept %.1f of the %u CPUs busy while the "
                   "training thread waited for them: the loading already has the CPUs there "
                   "are, and more loader threads or workers would only share them. Make each "
                   "batch cheaper (cache the decoded/preprocessed samples, move the "
                   "transforms to the GPU: NVIDIA DALI), or run on more CPUs.",
                   ran ? " and workers" : "", m->budget.process_others + c->workers_cpus,
                   ctx->cpus);
        return;
    }
    if (!ran && busy) {
        an_appendf(out, size,
                   "No DataLoader worker ran: the training thread prepared every batch itself "
                   "(num_workers=0) and was busy %.0f%% %s. ", c->train_busy * 100, of_time);
        dataloader(out, size, "Load batches in parallel and ahead of the GPU", workers, m, ctx);
    } else if (!ran) {
        an_appendf(out, size,
                   "No DataLoader worker ran, and the training thread was off the CPU %.0f%% "
                   "%s: each batch waits on its reads (storage, network). ",
                   (1 - c->train_busy) * 100, of_time);
        dataloader(out, size, "Overlap the reads with workers", workers, m, ctx);
        an_appendf(out, size, " Keep the dataset on local fast storage or cached in memory.");
    } else if (per_worker >= m->th.worker_busy_share) {
        an_appendf(out, size, "The %u workers were busy (%.0f%% of a CPU each): they cannot "
                   "keep up. ", ran, per_worker * 100);
        if (workers > ran)
            dataloader(out, size, "Raise num_workers", workers, m, ctx);
        else
            an_appendf(out, size, "They already use the CPUs there are: make each batch "
                       "cheaper: cache the decoded/preprocessed samples, or move the "
                       "transforms to the GPU (NVIDIA DALI).");
    } else if (busy) {
        an_appendf(out, size,
                   "The %u workers keep up (%.0f%% of a CPU each), but the training thread "
                   "was busy %.0f%% %s: the GPU waits for its own per-step work "
                   "(Python, collating or moving batches in the main process, logging, "
                   "CPU-side metrics). Find it with py-spy top --pid PID, take it off the "
                   "step, or raise the batch size to spread it.",
                   ran, per_worker * 100, c->train_busy * 100, of_time);
    } else {
        an_appendf(out, size,
                   "Neither the %u workers (%.0f%% of a CPU each) nor the training thread "
                   "(%.0f%%) were busy: the input waits on storage or the network. Raise "
                   "prefetch_factor to 4, keep the dataset on local fast storage or cached in "
                   "memory.", ran, per_worker * 100, c->train_busy * 100);
    }
}

void an_input_blind_advice(const struct an_model *m, const struct an_rule_ctx *ctx,
                           unsigned workers, double graphs_per_step, struct an_finding *f)
{
    char *out = f->change;
    size_t size = sizeof f->change;
    if (graphs_per_step >= 1)
        an_appendf(out, size,
                   "The steps replay %.0f CUDA graph%s each, so launches are already few. "
                   "Without a DataLoader in the loop, the GPU waits for the host's own "
                   "per-step work (Python, torch.compile guards and graph bookkeeping, an "
                   "optimizer outside the graph): find it with py-spy top --pid PID, move the "
                   "optimizer step into the compiled or captured region, or raise the batch "
                   "size to spread it. ", graphs_per_step, graphs_per_step >= 1.5 ? "s" : "");
    dataloader(out, size,
               graphs_per_step >= 1 ? "With a DataLoader, load batches in parallel and ahead "
                                      "of the GPU"
                                    : "Load batches in parallel and ahead of the GPU",
               workers, m, ctx);
    an_appendf(out, size,
               " Raise prefetch_factor to 4 if the GPU still waits between steps. If "
               "num_workers is already %s%u, the input itself is too slow: cache the "
               "decoded/preprocessed samples, or move the transforms to the GPU (NVIDIA DALI).",
               workers ? "" : "about ", workers ? workers : m->th.input_many_workers);
}
