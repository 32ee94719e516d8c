/*
 * Where a finding's saving comes from, where it is not the idle its own cause shows: the
 * replay's saving is a wall time difference, and a change can give back the GPU's idle that
 * the report puts on another cause. A per-step .item() with almost no sync bubble still
 * saves a third of the wall when the host then loads the next batch while the GPU runs the
 * step: the idle of the input pipeline shrinks, not the sync bubble's. Said in the
 * evidence, with the figures, so that a saving larger than the idle chart's share of its
 * cause explains itself (issue 58).
 */
#include <stdio.h>

#include "rules.h"

/* The idle cause a change works on, and what it takes off the host thread (-1, NULL: a
 * change whose own idle no cause holds, as a pause's stretch is the input's). */
static int own_cause(int whatif, const char **takes_off)
{
    switch (whatif) {
    case AN_WI_NO_SYNC:
        *takes_off = "the host no longer waits for the GPU in the draining calls";
        return AN_CAUSE_SYNC;
    case AN_WI_INPUT_WORKERS:
        *takes_off = "the training thread no longer loads the batches itself";
        return AN_CAUSE_INPUT;
    case AN_WI_PINNED_ASYNC:
        *takes_off = "the host no longer waits in the copies";
        return AN_CAUSE_H2D;
    case AN_WI_GRAPHS:
        *takes_off = "the host no longer launches the kernels one by one";
        return AN_CAUSE_LAUNCH;
    case AN_WI_NO_CHURN:
        *takes_off = "the host no longer waits in cuMemFree";
        return AN_CAUSE_ALLOC;
    default:
        *takes_off = NULL;
        return -1;
    }
}

void an_explain_saving(const struct an_model *m, struct an_finding *f)
{
    const char *takes_off;
    int own = f->risk || !f->saving_ns ? -1 : own_cause(f->whatif, &takes_off);
    if (own < 0)
        return;
    uint64_t own_idle = an_run_idle(m, (enum an_cause)own);
    uint64_t beyond = f->saving_ns > own_idle ? f->saving_ns - own_idle : 0;
    /* (a saving within a quarter of its own idle, or 1 % of the wall, is that idle's) */
    if ((double)beyond < 0.25 * (double)f->saving_ns ||
        (double)beyond < 0.01 * (double)m->wall_ns)
        return;
    int from = -1;
    uint64_t from_idle = 0;
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        uint64_t idle = c == own ? 0 : an_run_idle(m, (enum an_cause)c);
        if (idle > from_idle)
            from = c, from_idle = idle;
    }
    char saving[32], own_s[32], beyond_s[32], from_s[32];
    an_fmt_ns(saving, sizeof saving, (double)f->saving_ns);
    an_fmt_ns(own_s, sizeof own_s, (double)own_idle);
    an_fmt_ns(beyond_s, sizeof beyond_s, (double)beyond);
    an_appendf(f->evidence, sizeof f->evidence,
               " Where the saving comes from: of the %s, the GPU's %s idle is %s; with the "
               "change %s, ", saving, an_cause_name((enum an_cause)own), own_s, takes_off);
    if (from >= 0 && 2 * from_idle >= beyond) {
        an_fmt_ns(from_s, sizeof from_s, (double)from_idle);
        an_appendf(f->evidence, sizeof f->evidence,
                   "so the host's other work overlaps the GPU's: the other %s comes out of "
                   "the %s the GPU sat idle behind it (%s).", beyond_s, from_s,
                   an_cause_name((enum an_cause)from));
    } else {
        an_appendf(f->evidence, sizeof f->evidence,
                   "and the other %s is the GPU's own work the change shortens or the host's "
                   "time no GPU idle shows.", beyond_s);
    }
    an_finding_fig(f, "own_idle_ns", (double)own_idle);
    an_finding_fig(f, "saving_beyond_own_idle_ns", (double)beyond);
}
