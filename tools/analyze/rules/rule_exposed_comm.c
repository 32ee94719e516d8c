/*
 * exposed_communication: collectives (NCCL/RCCL kernels) that no compute kernel ran beside
 * on another stream, so the step waits for them (comm_overlap.c measures it). What hides
 * them is compute that can run meanwhile: DDP starts the all-reduce of gradient buckets
 * while backward still runs, FSDP prefetches the next layer's parameters, and accumulation
 * steps need no all-reduce at all. The saving is the exposed time, an upper bound (there
 * must be compute to hide it behind); not replayed. The threshold is the findings' own
 * (min_share of the wall time). Across ranks, part of a fast rank's exposed collective
 * time is its wait for the last rank (run_collectives.c lines them up): the run-level pass
 * (run_analysis.c, which owns the loop over the ranks and the merging) asks again with that
 * part taken out, since overlap cannot hide it (the straggler finding has it).
 */
#include <inttypes.h>
#include <stdio.h>

#include "rules.h"

/* The finding for exposed collective time `exposed` of m's, beside `waited` more that
 * was the wait for the last rank (0 when unknown: one process alone). */
static void add_finding(const struct an_model *m, uint64_t exposed, uint64_t waited,
                        struct an_findings *out)
{
    double share = (double)exposed / (double)m->wall_ns;
    struct an_finding *f = an_finding_add(out, "exposed_communication");
    if (!f)
        return;
    char comm[32], shown[32], wait[32];
    an_fmt_ns(comm, sizeof comm, (double)m->comm_ns);
    an_fmt_ns(shown, sizeof shown, (double)exposed);
    an_fmt_ns(wait, sizeof wait, (double)waited);
    snprintf(f->title, sizeof f->title,
             "Collectives the GPU waits for: %.0f%% of the run in communication no compute "
             "ran beside", share * 100);
    an_appendf(f->evidence, sizeof f->evidence,
               "%" PRIu64 " collective kernels (NCCL) took %s on the GPU; %s of it (%.0f%% of "
               "the wall time) with no compute kernel running beside it on another stream.",
               m->comm_kernels, comm, shown, share * 100);
    if (waited)
        an_appendf(f->evidence, sizeof f->evidence,
                   " Not counted: %s more inside them spent waiting for the last rank to "
                   "arrive, which overlap cannot hide (the ranks' collectives lined up).",
                   wait);
    snprintf(f->change, sizeof f->change,
             "Overlap communication with compute. With DistributedDataParallel the gradient "
             "all-reduce can run during backward: lower bucket_cap_mb so the first buckets "
             "start sooner, gradient_as_bucket_view=True, static_graph=True when the graph "
             "does not change. With gradient accumulation, run all but the last micro-step "
             "under model.no_sync(). With FSDP, forward_prefetch=True and "
             "backward_prefetch=BackwardPrefetch.BACKWARD_PRE. If one rank is slower than "
             "the others, they wait for it inside their collectives: fix that rank first.");
    an_set_saving(m, f, exposed);
    f->first_ts = m->first_ts;
    f->last_ts = m->last_ts;
    an_finding_fig(f, "collectives", (double)m->comm_kernels);
    an_finding_fig(f, "comm_ns", (double)m->comm_ns);
    an_finding_fig(f, "exposed_ns", (double)exposed);
    an_finding_fig(f, "exposed_share", share);
    an_finding_fig(f, "waited_ns", (double)waited);
}

void an_rule_exposed_comm(const struct an_model *m, const struct an_rule_ctx *ctx,
                          struct an_findings *out)
{
    (void)ctx;
    if (!m->gpu_timeline || !m->comm_kernels || !m->wall_ns ||
        (double)m->comm_exposed_ns < m->th.min_share * (double)m->wall_ns)
        return;
    add_finding(m, m->comm_exposed_ns, 0, out);
}

void an_rule_exposed_comm_waited(const struct an_model *m, uint64_t waited,
                                 struct an_findings *out)
{
    if (!m->wall_ns)
        return;
    if (waited > m->comm_exposed_ns)
        waited = m->comm_exposed_ns;
    uint64_t exposed = m->comm_exposed_ns - waited;
    if ((double)exposed < m->th.min_share * (double)m->wall_ns)
        return;
    add_finding(m, exposed, waited, out);
}
