/*
 * leak: memory held grows steadily over the steady state, by at least growth_min_bytes in
 * all, in (nearly) every step or in jumps spread evenly and never given back (PyTorch's
 * caching allocator takes a segment every few steps; an_growth_kind): tensors kept alive
 * across steps (a list of losses that still hold their graphs, a cache of outputs). At the
 * rate seen, the run runs out of memory after so many more steps. What is still held at
 * exit is listed, grouped, with when it was first taken, and where it was allocated when
 * the allocating calls carried call stacks (alloc_sites.c).
 * A risk: no time saving.
 */
#include <stdio.h>
#include <string.h>

#include "rules.h"

void an_rule_leak(const struct an_model *m, const struct an_rule_ctx *ctx,
                  struct an_findings *out)
{
    (void)ctx;
    const struct an_steps *s = &m->steps;
    const struct an_memory *mem = &m->mem;
    enum an_growth kind = an_growth_kind(m);
    if (kind < AN_GROWTH_EVEN_JUMPS)
        return;
    int every_step = kind == AN_GROWTH_EVERY_STEP;
    uint64_t growth = s->live_last - s->live_first;
    double grew_share = (double)s->growth_steps / (double)s->sampled_steps;
    struct an_finding *f = an_finding_add(out, "leak");
    if (!f)
        return;
    double per_step = (double)growth / (double)s->sampled_steps;
    char g[32], ps[32];
    an_fmt_bytes(g, sizeof g, (double)growth);
    an_fmt_bytes(ps, sizeof ps, per_step);
    snprintf(f->title, sizeof f->title, "Memory leak: memory held %s (%s a step%s)",
             every_step ? "grows every step" : "keeps growing", ps,
             every_step ? "" : " on average");
    an_appendf(f->evidence, sizeof f->evidence,
               "Device memory held by this process grew in %.0f%% of the steady steps, by %s "
               "in all (%.3f-%.3f s)%s.", grew_share * 100, g, an_rel_s(m, m->steady_start),
               an_rel_s(m, m->steady_end),
               every_step ? "" : ", in jumps spread evenly over the steady state and never "
                                 "given back (a caching allocator takes a new segment every "
                                 "few steps)");
    double steps_left = -1;
    if (mem->capacity > mem->others_at_start + mem->peak_total) {
        steps_left = (double)(mem->capacity - mem->others_at_start - mem->peak_total) / per_step;
        char t[32];
        an_fmt_ns(t, sizeof t, steps_left * (double)s->median_ns);
        an_appendf(f->evidence, sizeof f->evidence,
                   " At this rate the device is full after about %.0f more steps (%s).",
                   steps_left, t);
        f->strikes_s = steps_left * (double)s->median_ns / 1e9;
    }
    if (mem->at_exit_count) {
        char held[32];
        an_fmt_bytes(held, sizeof held, (double)mem->at_exit_bytes);
        an_appendf(f->evidence, sizeof f->evidence, " Still held at exit: %s in %llu blocks",
                   held, (unsigned long long)mem->at_exit_count);
        for (size_t i = 0; i < mem->nleftover && i < 3; i++) {
            const struct an_leftover *l = &mem->leftover[i];
            char each[32];
            an_fmt_bytes(each, sizeof each, (double)l->bytes_each);
            an_appendf(f->evidence, sizeof f->evidence,
                       "%s %llu x %s (thread %u, first at %.3f s)", i ? ";" : ":",
                       (unsigned long long)l->count, each, l->tid, an_rel_s(m, l->first_ts));
        }
        an_appendf(f->evidence, sizeof f->evidence, ".");
    }
    /* where it was allocated, when the allocations carried call stacks */
    for (size_t i = 0; i < mem->nsites; i++) {
        const struct an_alloc_site *site = &mem->site[i];
        char bytes[32];
        an_fmt_bytes(bytes, sizeof bytes, (double)site->bytes);
        char unnamed[48] = "no call stack";
        if (site->stack)
            snprintf(unnamed, sizeof unnamed, "stack %llu", (unsigned long long)site->stack);
        an_appendf(f->evidence, sizeof f->evidence, "%s%s: %s in %llu block%s",
                   i ? "; " : " Allocated at ", site->where[0] ? site->where : unnamed, bytes,
                   (unsigned long long)site->count, site->count == 1 ? "" : "s");
        f->sites[f->nsites++] = *site;
    }
    int in_pytorch = 0;
    for (size_t i = 0; i < mem->nsites; i++)
        in_pytorch |= !strncmp(mem->site[i].where, AN_SITE_PYTORCH, strlen(AN_SITE_PYTORCH));
    if (mem->nsites)
        an_appendf(f->evidence, sizeof f->evidence, ".");
    snprintf(f->change, sizeof f->change,
             "Find what keeps tensors alive across steps: store loss.item() or "
             "loss.detach() rather than loss (which holds the graph), clear lists and caches "
             "of outputs, del large temporaries; torch.cuda.memory_snapshot() shows who holds "
             "what. Between jobs sharing a GPU, release cached memory with "
             "torch.cuda.empty_cache().");
    if (in_pytorch)
        an_appendf(f->change, sizeof f->change,
                   " For the Python lines that allocated what is held: call "
                   "torch.cuda.memory._record_memory_history() at start and "
                   "torch.cuda.memory._dump_snapshot(\"mem.pickle\") after a few steps, and "
                   "open it at pytorch.org/memory_viz.");
    f->risk = 1;
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "growth_bytes", (double)growth);
    an_finding_fig(f, "growth_per_step_bytes", per_step);
    an_finding_fig(f, "grew_share", grew_share);
    an_finding_fig(f, "steps_to_full", steps_left);
    an_finding_fig(f, "held_at_exit_bytes", (double)mem->at_exit_bytes);
}
