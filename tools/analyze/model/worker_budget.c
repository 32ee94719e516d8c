/* The workers' CPU budget (worker_budget.h). */
#include "worker_budget.h"

#include <string.h>

#include "model.h"
#include "whatif.h"

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The workers that run `loading` CPUs' worth of loads: the last one slower. */
static unsigned round_up(double loading)
{
    return (unsigned)loading + ((double)(unsigned)loading < loading);
}

/* The workers that run `loading` (loads at the thread's speed), each at its share. */
static void workers_for(struct an_worker_budget *b, double loading)
{
    b->replayed = round_up(loading);
    b->workers = b->replayed;
    b->speed = loading / b->replayed;
}

/* Loads that wait on storage or the network: the count users write, 4 on a machine of one
 * or two CPUs, else 8 (they cost no CPU while they wait). */
static unsigned waiting_loaders(unsigned cpus)
{
    return cpus <= 2 ? 4 : 8;
}

/* Without CPU samples (a run shorter than a few of the shim's sampling rounds), what the
 * trace itself says: the loading thread on a CPU throughout, its loads computing and its
 * waits for the GPU spinning (CUDA's default schedule), nothing else running. An upper
 * bound of what it needs beside the workers: "cpus - 1" workers, the fallback before it,
 * named one worker on 2 CPUs where a thread that loaded 0.91 ms of each 0.93 ms step needed
 * a few per cent of a CPU beside them, and two workers gained 37 % (random draw 37). */
static void assumed_cpu_use(const struct an_replay *r, struct an_cpu_use *c)
{
    memset(c, 0, sizeof *c);
    c->known = 1;
    c->train_busy = c->train_cpus = c->process_cpus = 1;
    c->train_wait = clamp((double)r->loader_wait_ns[AN_WI_AS_MEASURED] / (double)r->loop_ns, 0, 1);
    c->train_wait_cpu = 1;
}

int an_worker_budget(const struct an_model *m, unsigned cpus, struct an_worker_budget *out)
{
    memset(out, 0, sizeof *out);
    const struct an_cpu_use *c = &m->cpu;
    const struct an_replay *r = &m->replay;
    if (!cpus || !r->done || !r->loads || !r->loop_ns || !r->load_ns)
        return 0;
    struct an_cpu_use assumed;
    if (!c->known) {
        assumed_cpu_use(r, &assumed);
        c = &assumed;
    }
    double load = clamp((double)r->load_ns / (double)r->loop_ns, 0, 0.95);
    /* the thread's CPU time outside its waits for the GPU is its loads' and the rest (in
     * them it spins, or copies from pageable memory: no load's): a load spent waiting on
     * storage or the network needs no CPU in a worker either. (A thread that sleeps 4 ms
     * a batch and spends its CPU copying 16 MiB from pageable memory and spinning in a
     * synchronize loads off the CPU.) */
    double train = clamp(c->train_cpus, 0, 1);
    double spin = clamp(c->train_wait * c->train_wait_cpu, 0, 1);
    out->load_share = load;
    out->load_cpu = load > 0 ? clamp((train - spin) / load, 0, 1) : 0;
    out->process_others = c->traced_others_cpus;
    out->others = c->others_known ? c->others_cpus : 0;
    /* Other processes run in sessions of their own, and the scheduler shares the CPUs
     * evenly between the sessions that want them (autogroups; a nice value counts only
     * inside its session): once the workers want the CPUs too, the others keep what they
     * use up to half the CPUs. A one-thread CPU hog beside a 2-CPU loop keeps its whole
     * CPU (1, 2 or 4 workers gave back 5-15 ms of the 125 they gave without it); a load
     * that filled every CPU keeps half. */
    out->others_keep = out->others < (double)cpus / 2 ? out->others : (double)cpus / 2;
    double work = clamp(train - spin - out->load_cpu * load, 0, 1);
    /* Once the loads leave it, the loop is the replay's workers world: the thread's own
     * work is the same CPU time in a shorter loop, and where CUDA spins it spins through
     * that world's waits for the GPU, as long as they are there (a loop the loads held up
     * waits on the GPU instead; one whose workers outrun the GPU waits on it for most of
     * its loop), both shares of that world's loop, not of the loop as measured (random
     * draw 207: its thread waiting 4 % of the loop, 41 % of the old loop in the workers
     * world, counted at a whole CPU beside a loop 0.56 as long, left the workers 0.6 of the
     * thread's speed, where they loaded at 0.85 and gained 159 ms for 95 predicted).
     * Host-only, of those waits only what the trace proves: work a read every few steps
     * waited for may have run during the loads between (replay.h, AN_WI_LEAST), and the
     * workers world taking it busy all along waits the loads' time again once they leave
     * (random draw 182). (With a timeline, the world at its least is the workers world.)
     * The workers world's waits depend on how fast its workers load, which depends on
     * them: run_analysis.c replays the budget again until the two agree. */
    int with_workers =
        an_world_of(AN_WI_BIT(AN_WI_INPUT_WORKERS) | AN_WI_BIT(AN_WI_LEAST));
    int least = an_world_of(AN_WI_BIT(AN_WI_LEAST));
    int replayed = with_workers >= 0 && least >= 0;
    double loop_then = 1, spin_then = spin;
    if (replayed && r->wall_ns[least] >= r->wall_ns[with_workers]) {
        uint64_t gone = r->wall_ns[least] - r->wall_ns[with_workers];
        loop_then = gone < r->loop_ns ? (double)(r->loop_ns - gone) / (double)r->loop_ns : 0;
        loop_then = clamp(loop_then, 0.05, 1);
    }
    if (replayed && (r->loader_wait_ns[with_workers] || r->loader_wait_ns[least]))
        spin_then = clamp((double)r->loader_wait_ns[with_workers] * c->train_wait_cpu /
                              ((double)r->loop_ns * loop_then), 0, 1);
    double own_then = clamp(work / loop_then, 0, 1);
    /* What the thread needs beside its loads, of the loop once they leave it: its own work,
     * and its spinning in waits for the GPU at a runnable thread's fair share of the CPUs
     * beside the workers and the CPUs other processes keep busy, which depends on how many
     * workers there are: from one worker on, until the count stops changing. (Two workers
     * and a spinning thread on 2 CPUs get two thirds of one each: with a half, 2 workers
     * were replayed 20 % faster than they ran. Beside a CPU hog a spinning thread counted
     * whole left a worker that sleeps through its loads no CPU at all.)
     * That share is what a worker that sleeps through its loads leaves it: waking, the
     * worker preempts the spinning thread (the scheduler favours a thread that slept) and
     * sleeps again soon. A worker that computes through its loads competes for the CPU
     * all along, and the spinning thread, preempted, ends its waits as much later as it
     * lost: the CPU it spins on is not the loads' (random draw 6: its 461 us pageable
     * upload took 968 us beside four such workers, the thread preempted a third of the
     * time; at the fair share two workers were replayed 1.3-1.9 times what they gained on
     * draws 6, 15 and 25, and dataloader_bound 1.2 times its best count's gain). So the
     * spinning counts between its share and whole, as the loads keep a CPU busy. */
    double left = 0;
    unsigned workers = 1;
    for (int round = 0; round < 4; round++) {
        double share = clamp((double)cpus / (workers + 1 + out->others_keep), 0, 1);
        double spun = share + (1 - share) * out->load_cpu;
        out->train_need = clamp(own_then + spin_then * spun, 0, 1);
        /* The CPUs left to the loads once the rest has what it uses now: workers beyond
         * what those CPUs run take the rest from the training thread, whose launches and
         * waits then start late, and the step gains nothing by it (2 CPUs, a thread
         * spinning in its waits and an autograd thread: one worker gave back 116 ms, eight
         * 43-93 ms). So the count named is what the CPUs left can run, each at the
         * thread's speed, the last one slower. */
        left = (double)cpus - out->train_need - out->process_others - out->others_keep;
        double loading = out->load_cpu > 0.05 ? clamp(left / out->load_cpu, 0.1, cpus) : 1;
        unsigned next = round_up(loading);
        if (next == workers)
            break;
        workers = next;
    }
    if (out->load_cpu <= 0.05) {
        /* The thread waited off the CPU. With CPUs to spare that is storage or the network;
         * where the process's own threads and workers already keep them busy, it waited for
         * them (loader threads of its own): more of them only share the same CPUs. Other
         * processes' work says nothing of it: loads that wait need no CPU. */
        double own = c->process_cpus - train;  /* every thread of its own, loaders too */
        if ((double)cpus - out->train_need - (own > 0 ? own : 0) - c->workers_cpus < 0.5) {
            out->workers = 0;
            out->replayed = 1;
            out->speed = 0.02;
            return 1;
        }
        out->workers = out->replayed = waiting_loaders(cpus);
        out->speed = 1;
        return 1;
    }
    out->loading = clamp(left / out->load_cpu, 0.1, cpus);
    workers_for(out, out->loading);
    return 1;
}

void an_worker_budget_at(struct an_worker_budget *b, unsigned cpus, double loading)
{
    if (b->load_cpu <= 0.05 || !b->workers)
        return;
    workers_for(b, loading);
    /* (what the CPUs leave the thread once the loads have theirs) */
    b->train_need = clamp((double)cpus - loading * b->load_cpu - b->process_others -
                              b->others_keep, 0, 1);
}

double an_worker_loading_next(const double *x, const double *y, int n)
{
    int below = -1, above = -1;  /* (x < y: the workers could load faster; x > y) */
    for (int i = 0; i < n; i++) {
        double g = x[i] - y[i];
        if (g < 0 && (below < 0 || g > x[below] - y[below]))
            below = i;
        if (g > 0 && (above < 0 || g < x[above] - y[above]))
            above = i;
    }
    if (below < 0 || above < 0)
        return y[n - 1];
    double g0 = x[below] - y[below], g1 = x[above] - y[above];
    return x[below] - g0 * (x[above] - x[below]) / (g1 - g0);
}
