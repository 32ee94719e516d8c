/*
 * oom_retry: allocations failed with CUDA_ERROR_OUT_OF_MEMORY, and the process then freed
 * memory in a burst and retried, successfully: PyTorch's caching allocator flushing its
 * cache (num_alloc_retries). Each storm frees cached segments (cudaFree waits for the
 * device) and allocates them again.
 * A risk, listed before the time savings: it struck already (strikes_s 0).
 */
#include <stdio.h>

#include "rules.h"

void an_rule_oom_retry(const struct an_model *m, const struct an_rule_ctx *ctx,
                       struct an_findings *out)
{
    (void)ctx;
    const struct an_memory *mem = &m->mem;
    if (!mem->ooms)
        return;
    struct an_finding *f = an_finding_add(out, "oom_retry");
    if (!f)
        return;
    const struct an_oom *first = &mem->oom[0];
    char req[32], held[32], avail[32], storm[32], freed[32];
    an_fmt_bytes(req, sizeof req, (double)first->request);
    an_fmt_bytes(held, sizeof held, (double)first->live);
    an_fmt_bytes(avail, sizeof avail, (double)first->est_free);
    an_fmt_ns(storm, sizeof storm, (double)mem->storm_ns);
    an_fmt_bytes(freed, sizeof freed, (double)mem->storm_freed_bytes);
    snprintf(f->title, sizeof f->title,
             mem->storms ? "Out-of-memory retries: the allocator frees its cache and retries"
                         : "Allocations fail with out of memory");
    an_appendf(f->evidence, sizeof f->evidence,
               "%llu allocation%s failed with CUDA_ERROR_OUT_OF_MEMORY (first at %.3f s: %s "
               "requested while this process held %s",
               (unsigned long long)mem->ooms, mem->ooms == 1 ? "" : "s",
               an_rel_s(m, first->ts), req, held);
    if (mem->capacity)
        an_appendf(f->evidence, sizeof f->evidence, " and about %s was free", avail);
    an_appendf(f->evidence, sizeof f->evidence, ").");
    if (mem->storms)
        an_appendf(f->evidence, sizeof f->evidence,
                   " %llu time%s a burst of %llu frees (%s) and a retried allocation followed "
                   "(%.3f-%.3f s), costing %s in all.",
                   (unsigned long long)mem->storms, mem->storms == 1 ? "" : "s",
                   (unsigned long long)mem->storm_frees, freed, an_rel_s(m, mem->storm_first),
                   an_rel_s(m, mem->storm_last), storm);
    if (mem->unrecovered_ooms)
        an_appendf(f->evidence, sizeof f->evidence,
                   " %llu failure%s %s not recovered by a retry.",
                   (unsigned long long)mem->unrecovered_ooms,
                   mem->unrecovered_ooms == 1 ? "" : "s",
                   mem->unrecovered_ooms == 1 ? "was" : "were");
    snprintf(f->change, sizeof f->change,
             "Stop the allocator's retry storms: "
             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,garbage_collection_threshold:0.8 "
             "(segments that grow in place for variable shapes; cached blocks reclaimed before "
             "the device is full); pad or bucket variable shapes (sequence lengths) to a few "
             "sizes; or lower the batch size a little.");
    /* a risk that already struck: the run is at the edge of the device and may fail
     * outright; what the storms cost is in the evidence, not a saving */
    f->risk = 1;
    f->strikes_s = 0;
    f->first_ts = first->ts;
    f->last_ts = mem->storm_last > first->ts ? mem->storm_last : first->ts;
    an_finding_fig(f, "ooms", (double)mem->ooms);
    an_finding_fig(f, "storms", (double)mem->storms);
    an_finding_fig(f, "storm_ns", (double)mem->storm_ns);
    an_finding_fig(f, "storm_frees", (double)mem->storm_frees);
    an_finding_fig(f, "unrecovered_ooms", (double)mem->unrecovered_ooms);
}
