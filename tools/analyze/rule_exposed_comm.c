/*
 * exposed_communication: collectives (NCCL/RCCL kernels) that no compute kernel ran beside
 * on another stream, so the step waits for them (comm_overlap.c measures it). What hides
 * them is compute that can run meanwhile: DDP starts the all-reduce of gradient buckets
 * while backward still runs, FSDP prefetches the next layer's parameters, and accumulation
 * steps need no all-reduce at all. The saving is the exposed time, an upper bound (there
 * must be compute to hide it behind); not replayed. The threshold is the findings' own
 * (min_share of the wall time). Across ranks, exposed collectives on the fast ranks are
 * their wait for a slow one: the process lines of the report show which is slow.
 */
#include <inttypes.h>
#include <stdio.h>

#include "rules.h"

void an_rule_exposed_comm(const struct an_model *m, const struct an_rule_ctx *ctx,
                          struct an_findings *out)
{
    (void)ctx;
    if (!m->gpu_timeline || !m->comm_kernels || !m->wall_ns)
        return;
    double share = (double)m->comm_exposed_ns / (double)m->wall_ns;
    if (share < m->th.min_share)
        return;
    struct an_finding *f = an_finding_add(out, "exposed_communication");
    if (!f)
        return;
    char comm[32], exposed[32];
    an_fmt_ns(comm, sizeof comm, (double)m->comm_ns);
    an_fmt_ns(exposed, sizeof exposed, (double)m->comm_exposed_ns);
    snprintf(f->title, sizeof f->title,
             "Collectives the GPU waits for: %.0f%% of the run in communication no compute "
             "ran beside", share * 100);
    an_appendf(f->evidence, sizeof f->evidence,
               "%" PRIu64 " collective kernels (NCCL) took %s on the GPU; %s of it (%.0f%% of "
               "the wall time) with no compute kernel running beside it on another stream.",
               m->comm_kernels, comm, exposed, share * 100);
    snprintf(f->change, sizeof f->change,
             "Overlap communication with compute. With DistributedDataParallel the gradient "
             "all-reduce can run during backward: lower bucket_cap_mb so the first buckets "
             "start sooner, gradient_as_bucket_view=True, static_graph=True when the graph "
             "does not change. With gradient accumulation, run all but the last micro-step "
             "under model.no_sync(). With FSDP, forward_prefetch=True and "
             "backward_prefetch=BackwardPrefetch.BACKWARD_PRE. If one rank is slower than "
             "the others, they wait for it inside their collectives: fix that rank first.");
    an_set_saving(m, f, m->comm_exposed_ns);
    f->first_ts = m->first_ts;
    f->last_ts = m->last_ts;
    an_finding_fig(f, "collectives", (double)m->comm_kernels);
    an_finding_fig(f, "comm_ns", (double)m->comm_ns);
    an_finding_fig(f, "exposed_ns", (double)m->comm_exposed_ns);
    an_finding_fig(f, "exposed_share", share);
}
