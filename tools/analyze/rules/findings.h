/*
 * A finding: what wastes the GPU (or puts the run at risk), the evidence, the change in
 * the user's terms, and an upper bound on the wall time it would save. Rules fill them;
 * the reports print them ranked by that saving, risks (no time to save) after.
 */
#ifndef GPUWATCH_ANALYZE_FINDINGS_H
#define GPUWATCH_ANALYZE_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define AN_MAX_FIGURES 16

struct an_figure {
    char key[32];        /* stable JSON key, snake_case, unit in the name (_ns, _bytes) */
    double value;
};

#define AN_KEEP_RANKS 64

struct an_finding {
    char id[32];             /* rule id: "input_pipeline" ... (stable) */
    char title[160];
    char evidence[1024];     /* figures and time ranges, for people */
    char change[1024];       /* what to change, in PyTorch terms */
    uint64_t saving_ns;      /* upper bound on the wall time saved (0 for risks) */
    double saving_share;     /* of the process's wall time */
    /* of the time its steps took (steps x mean steady step; the wall share without steps):
     * what applying the change would take off the step time, however long start-up was */
    double step_share;
    int risk;                /* 1: a risk (out of memory), not a time saving */
    double strikes_s;        /* risks: seconds until it strikes at the run's rate; 0: it
                                struck already (allocations failed); < 0: unknown */
    /* risks: 1 when its cause lies outside the process (another process's memory): it
     * leads the risks of the same urgency, as the cause comes before what it makes worse
     * (a device near capacity because a co-tenant holds most of it) */
    int outside;
    int whatif;              /* the change its saving was replayed for (enum an_whatif; 0
                                when the saving is not a replay's) */
    int upper_bound;         /* its replay took work of unproven length as nil: the saving
                                is at most that (host-only), said "up to" */
    int lower_bound;         /* its replay took sleeping waits' wake-ups at the machine's
                                measured latency, a floor: the saving is at least that,
                                said "at least" */
    /* the changes (a mask of 1 << enum an_whatif) whose own findings rank before it, what
     * its saving adds to (changes_together); 0 for most */
    unsigned follows;
    /* re-ranked on the changed run: its saving once its process's top time finding (the
     * one with the largest replayed saving) is fixed; after_id "" when not re-ranked */
    char after_id[32];
    uint64_t after_ns;
    /* nonzero, the same in two findings of one process whose changes each take the other's
     * saving away (a per-step sync and a slow loader on a machine with one worker to spare:
     * one wait, seen from either end); ranked as a tie within a wider band */
    uint64_t same_wait;
    uint64_t first_ts, last_ts;  /* the evidence's time range (trace clock), 0 unknown */
    struct an_figure fig[AN_MAX_FIGURES];
    size_t nfig;
    /* where the memory it is about was allocated, largest first (leak: held at exit) */
    struct an_alloc_site sites[AN_KEEP_SITES];
    size_t nsites;
    /* the user's Python lines that cause it (an_run_rules fills them from the model by
     * the rule's lines column): lines.ntop 0 when the trace has none */
    enum an_line_cat lines_cat;
    struct an_py_cat lines;
    /* where it was seen (filled by the run: several processes may share a finding) */
    uint32_t pid;
    int32_t rank;
    unsigned processes;      /* how many processes showed it */
    /* the ranks of those that had one, ascending, the first AN_KEEP_RANKS */
    int32_t ranks[AN_KEEP_RANKS];
    unsigned nranks;
    double gpu_hours_saved;  /* summed over processes */
};

/* A saving the replay finds where the trace cannot prove it: host-only, no call of the loop
 * waited for the GPU, or only in some steps, so the other kernels ran anything from nil to
 * all of the loop (a loop bound by its batch loads and one whose kernels run as long as its
 * loads look the same). Said apart from the findings, as an upper bound, and never ranked
 * among them; where the waits prove part of it, that part is the finding's saving. */
struct an_unproven {
    char id[32];             /* the finding it would be: "input_pipeline" */
    int whatif;              /* the replayed change (enum an_whatif) */
    uint64_t up_to_ns;       /* the replay's saving with the unproven kernels taken as nil */
    uint64_t proven_ns;      /* what the trace proves of it, its finding's saving (0: none) */
    double share;            /* of the loop (an_whatif_share) */
    char change[256];        /* what to change, in the user's terms */
    uint32_t pid;
    int32_t rank;
};

#define AN_MAX_UNPROVEN 8

struct an_findings {
    struct an_finding *items;
    size_t count, cap;
    struct an_unproven unproven[AN_MAX_UNPROVEN];  /* one per id, the largest */
    size_t nunproven;
};

/* What the rules know beyond the model. */
struct an_rule_ctx {
    unsigned cpus;           /* CPUs of the traced machine when known (0: unknown) */
    unsigned local_world;    /* processes sharing this machine's GPUs (>= 1) */
    const struct an_findings *so_far;  /* findings of this process made by earlier rules */
};

/* Fills after_id/after_ns of the findings items[from..count) of one process from its
 * replay (its top time finding's change made first). */
void an_findings_rerank(struct an_findings *list, size_t from, const struct an_replay *r);
/* Keeps u in the list's unproven savings: one per id, the larger (the list full: dropped). */
void an_unproven_keep(struct an_findings *list, const struct an_unproven *u);
/* A new zeroed finding with this id (NULL when out of memory). */
struct an_finding *an_finding_add(struct an_findings *list, const char *id);
void an_finding_fig(struct an_finding *f, const char *key, double value);
/* Adds a rank (none when < 0) to the finding's ascending list of the ranks it holds on, once
 * each, up to AN_KEEP_RANKS. */
void an_finding_add_rank(struct an_finding *f, int32_t rank);
/* Appends printf-style text to a finding field. */
void an_appendf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const struct an_finding *an_findings_find(const struct an_findings *list, const char *id);
/* Drops the finding with this id, if any. */
void an_finding_remove(struct an_findings *list, const char *id);
/* The other finding that removes the same wait as f (same_wait), or NULL. */
const struct an_finding *an_finding_same_wait(const struct an_findings *list,
                                              const struct an_finding *f);
/* Risks first (soonest first: struck, then by strikes_s, unknown last; at the same
 * urgency those from outside the process first), then savings
 * (largest first; within 2 % of each other, by id); ties by id. */
void an_findings_rank(struct an_findings *list);
void an_findings_free(struct an_findings *list);

/* Time as seconds since the process's first event, for evidence text. */
double an_rel_s(const struct an_model *m, uint64_t ts);
/* "1.23 GiB", "512 MiB", "4.0 KiB" */
void an_fmt_bytes(char *buf, size_t size, double bytes);
/* "12.3 ms", "4.5 s", "870 us" */
void an_fmt_ns(char *buf, size_t size, double ns);

#endif
