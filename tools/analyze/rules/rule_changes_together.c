/*
 * changes_together: two changes that each give back little alone and much together,
 * because each leaves a wait the other removes: a per-step .item() and a cudaFree each
 * step both drain the queue, so taking out either still leaves the GPU idle while the host
 * logs; the other rules, each replaying its own change, then find nothing worth saying.
 * The replay runs every pair of changes (replay.h); the pair whose saving exceeds the sum
 * of its two changes' own by the most, when that excess alone is min_share of the loop
 * (the share every finding must save), is this finding. Its saving is that excess, what
 * making both adds to what each finding of the two (when they are findings) saves alone,
 * and it ranks after those findings (the change it adds to comes first); the text gives
 * the pair's whole saving.
 */
#include <stdio.h>

#include "rules.h"

void an_rule_changes_together(const struct an_model *m, const struct an_rule_ctx *ctx,
                              struct an_findings *out)
{
    (void)ctx;
    if (!m->replay.done)
        return;
    enum an_whatif best_a = AN_WI_AS_MEASURED, best_b = AN_WI_AS_MEASURED;
    uint64_t best_excess = 0, best_both = 0;
    for (int a = 1; a < AN_WI_COUNT; a++) {
        for (int b = a + 1; b < AN_WI_COUNT; b++) {
            /* (held to the measured idle as each change alone is: a pair that leaves the
             * GPU's work alone cannot give back more; uncapped, two changes each capped at
             * 0.6 ms of a GPU 95 % busy "added" 10 ms together) */
            uint64_t both = an_world_saving(m, 1u << a | 1u << b);
            if (!both)
                continue;
            uint64_t alone = an_whatif_saving(m, (enum an_whatif)a) +
                             an_whatif_saving(m, (enum an_whatif)b);
            if (both > alone && both - alone > best_excess) {
                best_excess = both - alone;
                best_both = both;
                best_a = (enum an_whatif)a;
                best_b = (enum an_whatif)b;
            }
        }
    }
    if (!best_excess || an_whatif_share(m, best_excess) < m->th.min_share)
        return;
    struct an_finding *f = an_finding_add(out, "changes_together");
    if (!f)
        return;
    uint64_t saving_a = an_whatif_saving(m, best_a), saving_b = an_whatif_saving(m, best_b);
    char both[32], alone_a[32], alone_b[32], phrase[128];
    an_fmt_ns(both, sizeof both, (double)best_both);
    an_fmt_ns(alone_a, sizeof alone_a, (double)saving_a);
    an_fmt_ns(alone_b, sizeof alone_b, (double)saving_b);
    an_steady_phrase(m, phrase, sizeof phrase);
    snprintf(f->title, sizeof f->title,
             "Two changes that pay only together: %s and %s each leave a wait the other "
             "removes",
             an_whatif_name(best_a), an_whatif_name(best_b));
    an_appendf(f->evidence, sizeof f->evidence,
               "Replayed over the %s, %s and %s together save %s (%.0f%% of the loop); "
               "%s alone saves %s and %s alone %s: what one takes away, the other still "
               "makes the host wait for. This finding's saving is what the pair adds to "
               "those two.",
               phrase, an_whatif_name(best_a), an_whatif_name(best_b), both,
               an_whatif_share(m, best_both) * 100, an_whatif_name(best_a), alone_a,
               an_whatif_name(best_b), alone_b);
    an_appendf(f->change, sizeof f->change, "Make both changes: %s; and %s.",
               an_whatif_advice(best_a), an_whatif_advice(best_b));
    an_set_saving(m, f, best_excess);
    f->follows = 1u << best_a | 1u << best_b;  /* ranked after a finding of either change */
    f->first_ts = m->steady_start;
    f->last_ts = m->steady_end;
    an_finding_fig(f, "change_a", best_a);
    an_finding_fig(f, "change_b", best_b);
    an_finding_fig(f, "saving_a_ns", (double)saving_a);
    an_finding_fig(f, "saving_b_ns", (double)saving_b);
    an_finding_fig(f, "saving_together_ns", (double)best_both);
}
