/*
 * gpuwatch diff: two analyzed runs of one program, before and after a change, side by
 * side: the figures that moved (those --fail-if knows, copies, memory, GPU time per
 * kernel), the findings gone, new and kept, and, for the findings the change removed, the
 * saving BEFORE's analysis predicted against the wall time the change gave back.
 */
#ifndef GPUWATCH_RUN_DIFF_H
#define GPUWATCH_RUN_DIFF_H

#include <stdint.h>
#include <stdio.h>

#include "analyze.h"

#define AN_DIFF_MAX_VALUES 24
#define AN_DIFF_MAX_FINDINGS 32
#define AN_DIFF_MAX_KERNELS 20

struct an_diff_value {
    char name[48];         /* a --fail-if metric name, or a figure of the diff's own */
    double before, after;
    uint8_t has_before, has_after;
};

enum an_diff_status { AN_DIFF_GONE, AN_DIFF_NEW, AN_DIFF_KEPT };

struct an_diff_finding {
    char id[32];
    enum an_diff_status status;
    int risk;
    uint64_t before_ns, after_ns;   /* saving predicted in each run (0 where absent) */
};

struct an_diff_kernel {
    char name[64];
    uint64_t before_ns, after_ns;   /* GPU time in the kernel's records */
};

struct an_diff {
    struct an_diff_value values[AN_DIFF_MAX_VALUES];
    size_t nvalues;
    struct an_diff_finding findings[AN_DIFF_MAX_FINDINGS];
    size_t nfindings;
    struct an_diff_kernel kernels[AN_DIFF_MAX_KERNELS];
    size_t nkernels;
    /* What BEFORE predicted for the change: the findings gone whose saving was replayed
     * (their changes together: the replay's world with both when two are gone, else the
     * sum), or when none is gone BEFORE's top time finding (`basis` says which); and the
     * wall time the change gave back (BEFORE's main process minus AFTER's). */
    enum { AN_DIFF_BASIS_NONE, AN_DIFF_BASIS_GONE, AN_DIFF_BASIS_TOP } basis;
    unsigned gone;                  /* replayed time findings gone */
    char top_id[32];                /* basis TOP: that finding */
    uint64_t predicted_ns;
    int predicted_replayed;         /* predicted_ns is one replay's, not a sum */
    int64_t realized_ns;
};

void an_diff_runs(const struct an_run *before, const struct an_run *after, struct an_diff *d);
void an_diff_text(FILE *out, const struct an_diff *d, const char *before, const char *after);
void an_diff_json(FILE *out, const struct an_diff *d, const char *before, const char *after);

/* --fail-if on the change, one comparison: METRIC OP [+|-]NUMBER[%] (a --fail-if metric;
 * with % the change relative to BEFORE, without it the change itself: step_ms>+5% holds
 * when the median step grew by more than 5 %), or finding=ID (a finding new in AFTER). */
struct an_diff_condition;
int an_diff_condition_parse(const char *expr, struct an_diff_condition **out, char *err,
                            size_t errlen);
int an_diff_condition_holds(const struct an_diff_condition *c, const struct an_diff *d);
void an_diff_condition_free(struct an_diff_condition *c);

#endif
