/*
 * fragmentation: the allocator's memory does not fit the requests. Evidence, any of:
 *  - an allocation failed while more than it asked for was free in total (the free memory
 *    was in pieces);
 *  - device alloc/free calls, in pairs, in every steady step (a caching allocator should
 *    reuse its blocks: churn means shapes keep changing or the cache is emptied);
 *  - memory held still growing in the steady state, in jumps now and then (steady growth,
 *    every step or in evenly spread jumps, is the leak rule's: an_growth_kind).
 * Saving: the what-if replay without the alloc/free calls and the device waits cudaFree
 * makes (no_churn): time a thread spent in frees while the GPU was busy anyway is not
 * given back. Only the first kind of evidence: a risk.
 */
#include <stdio.h>

#include "rules.h"

void an_rule_fragmentation(const struct an_model *m, const struct an_rule_ctx *ctx,
                           struct an_findings *out)
{
    (void)ctx;
    const struct an_memory *mem = &m->mem;
    const struct an_steps *s = &m->steps;
    /* allocations that are never freed are a leak's, not churn: calls in alloc/free pairs */
    uint64_t pairs = m->steady.allocs < m->steady.frees ? m->steady.allocs : m->steady.frees;
    double churn = s->steady ? 2.0 * (double)pairs / (double)s->steady : 0;
    int churning = s->steady && churn >= m->th.churn_per_step;
    uint64_t growth = s->live_last > s->live_first ? s->live_last - s->live_first : 0;
    int growing = an_growth_kind(m) == AN_GROWTH_JUMPS;
    if (!mem->ooms_fragmented && !churning && !growing)
        return;
    /* the run replayed without its device alloc/free calls (a warm caching allocator) */
    uint64_t saving = an_whatif_saving(m, AN_WI_NO_CHURN);
    int risk = !churning && !growing;
    if (!risk && an_whatif_share(m, saving) < m->th.min_share &&
        !mem->ooms_fragmented)
        return;
    struct an_finding *f = an_finding_add(out, "fragmentation");
    if (!f)
        return;
    snprintf(f->title, sizeof f->title,
             "Allocator fragmentation: memory is there but not in the right pieces");
    if (mem->ooms_fragmented) {
        const struct an_oom *o = NULL;
        for (size_t i = 0; i < mem->noom && !o; i++)
            if (mem->oom[i].fragmented)
                o = &mem->oom[i];
        char req[32], avail[32];
        an_fmt_bytes(req, sizeof req, o ? (double)o->request : 0);
        an_fmt_bytes(avail, sizeof avail, o ? (double)o->est_free : 0);
        an_appendf(f->evidence, sizeof f->evidence,
                   "%llu allocation%s failed although enough memory was free in total (at "
                   "%.3f s: %s requested, about %s free). ",
                   (unsigned long long)mem->ooms_fragmented,
                   mem->ooms_fragmented == 1 ? "" : "s", o ? an_rel_s(m, o->ts) : 0.0, req,
                   avail);
    }
    if (churning)
        an_appendf(f->evidence, sizeof f->evidence,
                   "%.1f device alloc/free calls (in pairs) per steady step (a caching "
                   "allocator reuses its blocks once warm). ", churn);
    if (growing) {
        char g[32];
        an_fmt_bytes(g, sizeof g, (double)growth);
        an_appendf(f->evidence, sizeof f->evidence,
                   "Memory held grew %s over the steady state, in jumps. ", g);
    }
    char spent_text[32];
    an_fmt_ns(spent_text, sizeof spent_text, (double)saving);
    an_appendf(f->evidence, sizeof f->evidence,
               "Replayed without the allocation calls and the waits they made, the run "
               "takes %s less.", spent_text);
    snprintf(f->change, sizeof f->change,
             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,garbage_collection_threshold:0.8; "
             "keep tensor shapes steady (pad or bucket variable lengths), allocate persistent "
             "buffers once, avoid torch.cuda.empty_cache() inside the loop; max_split_size_mb "
             "only as a last resort.");
    f->risk = risk;
    if (risk)
        f->strikes_s = 0;  /* allocations already failed */
    else
        f->whatif = AN_WI_NO_CHURN;
    an_set_saving(m, f, risk ? 0 : saving);
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "fragmented_ooms", (double)mem->ooms_fragmented);
    an_finding_fig(f, "churn_per_step", churn);
    an_finding_fig(f, "steady_growth_bytes", (double)growth);
}
