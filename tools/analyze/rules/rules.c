/* The rule table and the loop that runs it over one process's model. */
#include "rules.h"

const struct an_rule an_rules[] = {
#define RULE(id, name, lines, summary) {id, an_rule_##name, summary, lines},
#include "rules.def"
#undef RULE
};
const size_t an_nrules = sizeof an_rules / sizeof an_rules[0];

const char *const an_run_rule_ids[] = {"straggler"};
const size_t an_nrun_rules = sizeof an_run_rule_ids / sizeof an_run_rule_ids[0];

void an_run_rules(const struct an_model *m, const struct an_rule_ctx *ctx,
                  struct an_findings *out)
{
    struct an_rule_ctx local = *ctx;
    size_t first = out->count;
    struct an_findings mine = {0};
    for (size_t i = 0; i < an_nrules; i++) {
        /* rules see this process's findings so far, not other processes' */
        mine.items = out->items ? out->items + first : NULL;
        mine.count = out->count - first;
        local.so_far = &mine;
        size_t before = out->count;
        an_rules[i].fn(m, &local, out);
        for (size_t k = before; k < out->count; k++) {
            an_explain_saving(m, &out->items[k]);
            out->items[k].lines_cat = an_rules[i].lines;
            if (an_rules[i].lines != AN_LINES_NONE)
                out->items[k].lines = m->py.cat[an_rules[i].lines];
        }
    }
    an_findings_rerank(out, first, &m->replay);
}
