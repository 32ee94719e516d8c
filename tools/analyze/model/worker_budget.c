/* The workers' CPU budget (worker_budget.h). */
#include "worker_budget.h"

#include <string.h>

#include "model.h"

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The count users write: 4 on a machine of one or two CPUs, else 8 (the DataLoader's own
 * warning caps the useful count at the CPUs; past 8 the gains are rarely measured). */
static unsigned users_count(unsigned cpus)
{
    return cpus <= 2 ? 4 : 8;
}

int an_worker_budget(const struct an_model *m, unsigned cpus, struct an_worker_budget *out)
{
    memset(out, 0, sizeof *out);
    const struct an_cpu_use *c = &m->cpu;
    const struct an_replay *r = &m->replay;
    if (!cpus || !c->known || !r->done || !r->loads || !r->loop_ns || !r->load_ns)
        return 0;
    out->workers = users_count(cpus);
    double load = clamp((double)r->load_ns / (double)r->loop_ns, 0, 0.95);
    /* the thread's CPU time is its loads' and the rest: a load spent waiting on storage or
     * the network needs no CPU in a worker either */
    double train = clamp(c->train_cpus, 0, 1);
    out->load_share = load;
    out->load_cpu = load > 0 ? clamp(train / load, 0, 1) : 0;
    out->train_need = clamp((train - out->load_cpu * load) / (1 - load), 0, 1);
    double process = c->process_cpus - train;
    out->process_others = process > 0 ? process : 0;
    out->others = c->others_known ? c->others_cpus : 0;
    /* The CPUs left to the loads once the rest has what it uses now. The scheduler shares a
     * CPU evenly, so more workers than that would take more of it, but from the training
     * thread, whose launches and waits then start late by as much: the step gains nothing
     * by it (dataloader_bound, 2 CPUs, spinning waits: 4 workers gained 1.2-1.6x what one
     * did, not the 1.6x their share says). Loads that wait on storage need no CPU: with
     * load_cpu small, every worker loads at the thread's speed. */
    double left = (double)cpus - out->train_need - out->process_others - out->others;
    double loading = out->load_cpu > 0.05 ? left / out->load_cpu : (double)out->workers;
    if (loading < 0.1)
        loading = 0.1;
    if (loading > out->workers)
        loading = out->workers;
    out->replayed = (unsigned)loading + ((double)(unsigned)loading < loading);
    out->speed = loading / out->replayed;
    return 1;
}
