/*
 * The rules: each reads one process's model and adds at most one finding. One file each
 * (rule_<name>.c), one unit test each (tests/analyze/test_rule_<name>.c), listed once in
 * rules.def (the order they run in: a rule may look at the findings of the ones before
 * it); thresholds are in thresholds.h. Adding one: its file, its test, its line in
 * rules.def, its row in docs/analyze.md.
 */
#ifndef GPUWATCH_ANALYZE_RULES_H
#define GPUWATCH_ANALYZE_RULES_H

#include "findings.h"
#include "model.h"

typedef void (*an_rule_fn)(const struct an_model *m, const struct an_rule_ctx *ctx,
                           struct an_findings *out);

struct an_rule {
    const char *id;
    an_rule_fn fn;
    const char *summary;     /* one line, for docs and --list-rules */
    enum an_line_cat lines;  /* whose calls' Python lines name its findings */
};

extern const struct an_rule an_rules[];
extern const size_t an_nrules;

/* an_rule_<name> of each rule (rules.def) */
#define RULE(id, name, lines, summary)                                                     \
    void an_rule_##name(const struct an_model *m, const struct an_rule_ctx *ctx,          \
                        struct an_findings *out);
#include "rules.def"
#undef RULE

/* Runs every rule on one process; findings are appended to out (not ranked). */
void an_run_rules(const struct an_model *m, const struct an_rule_ctx *ctx,
                  struct an_findings *out);

/* Where f's saving comes from, said in its evidence (and figures) where it is not the idle
 * of the cause its change works on: another cause's idle the change lets the host's work
 * overlap (saving_from.c). an_run_rules calls it for each finding. */
void an_explain_saving(const struct an_model *m, struct an_finding *f);

/* Run-level: the rank the others wait for in their collectives (rule_straggler.c). Its id
 * is among an_run_rule_ids, for --fail-if. */
struct an_run;
struct an_trace;
void an_rule_straggler(struct an_run *run);
/* exposed_communication of a rank whose collectives were lined up with the others': the
 * `waited` ns of its exposed time that was its wait for the last rank taken out. */
void an_rule_exposed_comm_waited(const struct an_model *m, uint64_t waited,
                                 struct an_findings *out);
extern const char *const an_run_rule_ids[];
extern const size_t an_nrun_rules;

/* ---- helpers shared by the rules (measures.c) ---- */

/* Steady-state idle of one cause, as a share of the steady span. */
double an_steady_share(const struct an_model *m, enum an_cause c);
/* The cause with the largest steady share above `above` (-1: none), its share in *share. */
int an_top_idle_cause(const struct an_model *m, double above, double *share);
/* Idle of one cause over the run's steps (steady idle per step x all steps; without steps
 * the whole run), ns: what the savings are based on. */
uint64_t an_run_idle(const struct an_model *m, enum an_cause c);
/* ... of every cause: all the idle time the savings may give back. */
uint64_t an_run_idle_all(const struct an_model *m);
/* The same for an amount of steady-state idle time. */
uint64_t an_run_from_steady(const struct an_model *m, double steady_ns);
/* The replayed saving of a what-if (replay.h), and whether it is worth a finding: at
 * least min_share of the replayed run. */
uint64_t an_whatif_saving(const struct an_model *m, enum an_whatif w);
/* The same for a world of several changes (a mask of 1 << enum an_whatif; 0 where it is not
 * replayed): a world whose changes leave the GPU's work as it is saves at most the idle time
 * the timeline measured, however many changes it makes. */
uint64_t an_world_saving(const struct an_model *m, unsigned changes);
/* Whether the loop loads batches: a batch reaches the GPU by an upload, so a loop that
 * uploads nothing in its steady state (its data made on the GPU or already there; the
 * model's weights uploaded once at start-up are no batches) loads none, and no DataLoader
 * change gives anything back. */
int an_loads_batches(const struct an_model *m);
int an_whatif_worth(const struct an_model *m, enum an_whatif w);
/* A saving's share of the loop (the steady state; the replayed run without steps): what
 * min_share is of. */
double an_whatif_share(const struct an_model *m, uint64_t saving_ns);
/* A saving of w the trace cannot prove, said apart (findings.h, an_unproven): up to the
 * replay's up_to, the finding's proven part (0: no finding), change in the user's words. */
void an_say_unproven(const struct an_model *m, const char *id, enum an_whatif w, uint64_t up_to,
                     uint64_t proven, const char *change, struct an_findings *out);
/* Sets saving_ns, saving_share (capped at the wall time) and step_share. */
void an_set_saving(const struct an_model *m, struct an_finding *f, uint64_t saving_ns);
/* an_set_saving of the replayed saving of w, and the finding is w's (re-ranking). */
void an_set_whatif_saving(const struct an_model *m, struct an_finding *f, enum an_whatif w);
/* "steady state (steps 6-100, 0.52-10.31 s)" or "the whole run (0.00-10.31 s)" */
void an_steady_phrase(const struct an_model *m, char *buf, size_t size);
/* How memory held grew over the steady state: not, in jumps now and then (fragmentation's
 * evidence), or steadily (a leak's): in jumps spread evenly over it without falling back,
 * as a caching allocator shows a leak (a new segment every few steps), or in nearly every
 * step. A leak is >= AN_GROWTH_EVEN_JUMPS. */
enum an_growth { AN_GROWTH_NONE, AN_GROWTH_JUMPS, AN_GROWTH_EVEN_JUMPS, AN_GROWTH_EVERY_STEP };
enum an_growth an_growth_kind(const struct an_model *m);
/* Per steady step (or per run without steps), ns. */
double an_per_step(const struct an_model *m, double steady_ns);
/* The longest kept idle interval of a cause in the steady state, or NULL. */
const struct an_interval *an_longest(const struct an_model *m, enum an_cause c);
/* The same among those shorter than max_ns. */
const struct an_interval *an_longest_below(const struct an_model *m, enum an_cause c,
                                           uint64_t max_ns);
/* Whether iv lies in the steady state (within drain_slack_ns of its edges). */
int an_in_steady(const struct an_model *m, const struct an_interval *iv);

#endif
