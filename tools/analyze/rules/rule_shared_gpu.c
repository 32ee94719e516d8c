/*
 * shared_gpu: memory was already in use on the device when this process made its first
 * context (cuMemGetInfo at that moment, in the trace header): another process shares the
 * GPU and can take the memory this one needs (co-tenant OOM). A risk, no time saving.
 * The threshold leaves room for this process's own context (a few hundred MiB).
 * Its cause is outside the process, so it leads the risks of the same urgency: when the
 * device is near capacity because others hold most of it, the co-tenant is what to deal
 * with first, not this process's precision or batch (memory_headroom's advice).
 */
#include <stdio.h>

#include "rules.h"

void an_rule_shared_gpu(const struct an_model *m, const struct an_rule_ctx *ctx,
                        struct an_findings *out)
{
    (void)ctx;
    const struct an_memory *mem = &m->mem;
    if (!mem->capacity)
        return;
    double share = (double)mem->others_at_start / (double)mem->capacity;
    if (mem->others_at_start < m->th.others_min_bytes || share < m->th.others_min_share)
        return;
    struct an_finding *f = an_finding_add(out, "shared_gpu");
    if (!f)
        return;
    char others[32], cap[32], peak[32];
    an_fmt_bytes(others, sizeof others, (double)mem->others_at_start);
    an_fmt_bytes(cap, sizeof cap, (double)mem->capacity);
    an_fmt_bytes(peak, sizeof peak, (double)mem->peak_total);
    double together = (double)(mem->others_at_start + mem->peak_total) / (double)mem->capacity;
    snprintf(f->title, sizeof f->title,
             "The GPU is shared: %.0f%% of its memory was in use by others at start",
             share * 100);
    an_appendf(f->evidence, sizeof f->evidence,
               "%s of the %s device was in use when this process started (other processes, "
               "or contexts it did not trace); this process then peaked at %s: %.0f%% of the "
               "device together.", others, cap, peak, together * 100);
    snprintf(f->change, sizeof f->change,
             "Another process can take the memory this one needs and make it fail with out of "
             "memory. Run on a GPU of its own (CUDA_VISIBLE_DEVICES), or cap each job "
             "(torch.cuda.set_per_process_memory_fraction) and release cached memory between "
             "jobs that share a GPU (torch.cuda.empty_cache()).");
    f->risk = 1;
    f->outside = 1;
    f->first_ts = f->last_ts = m->first_ts;
    an_finding_fig(f, "others_bytes", (double)mem->others_at_start);
    an_finding_fig(f, "others_share", share);
    an_finding_fig(f, "together_share", together);
}
