/*
 * straggler: in a run of several ranks whose steps meet in collectives, the rank the others
 * wait for. A collective ends on every rank when the last one arrives, so the ranks that
 * arrive early spend the difference inside it with nothing to compute beside it: their
 * exposed communication (comm_overlap.c) exceeds the late rank's by about the time they
 * wait for it. The straggler is the rank with the least exposed communication; the finding
 * holds when the others' excess over it is, at the median, min_share of their wall time.
 * It names the straggler's own cause (the top finding from its evidence, else its largest
 * idle cause), and saves the median excess: what every rank gives back if the straggler
 * were as fast as the others. A run-level rule: it reads every process's model. Tested in
 * tests/analyze/test_golden.sh (four ranks, one with slower input; four alike).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze.h"
#include "rules.h"

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The straggler's own cause, in words. */
static void own_cause(const struct an_run *run, const struct an_trace *t, char *buf,
                      size_t size)
{
    for (size_t i = 0; i < run->findings.count; i++) {
        const struct an_finding *f = &run->findings.items[i];
        if (f->pid == t->hdr.pid && !f->risk) {
            snprintf(buf, size, "its top finding is %s (%s)", f->id, f->title);
            return;
        }
    }
    double share;
    int top = an_top_idle_cause(t->model, 0, &share);
    if (top >= 0)
        snprintf(buf, size, "its GPU sat idle %.0f%% of its steady state on %s",
                 share * 100, an_cause_name((enum an_cause)top));
    else
        snprintf(buf, size, "its own trace shows no idle cause; look at its host (CPU "
                            "contention, a slower device or link)");
}

void an_rule_straggler(struct an_run *run)
{
    const struct an_trace *ranks[AN_KEEP_RANKS];
    size_t n = 0;
    for (size_t i = 0; i < run->ntraces && n < AN_KEEP_RANKS; i++) {
        const struct an_trace *t = &run->traces[i];
        if (t->active && t->model && t->hdr.rank >= 0 && t->model->gpu_timeline &&
            t->model->comm_kernels)
            ranks[n++] = t;
    }
    if (n < 2)
        return;
    size_t slow = 0;
    for (size_t i = 1; i < n; i++)
        if (ranks[i]->model->comm_exposed_ns < ranks[slow]->model->comm_exposed_ns)
            slow = i;
    uint64_t excess[AN_KEEP_RANKS], walls[AN_KEEP_RANKS];
    size_t k = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (i != slow) {
            excess[k] = ranks[i]->model->comm_exposed_ns - ranks[slow]->model->comm_exposed_ns;
            walls[k] = ranks[i]->model->wall_ns;
            total += excess[k++];
        }
    qsort(excess, k, sizeof excess[0], by_value);
    qsort(walls, k, sizeof walls[0], by_value);
    uint64_t median = excess[k / 2], wall = walls[k / 2];
    const struct an_model *m = ranks[slow]->model;
    if (!wall || (double)median < m->th.min_share * (double)wall)
        return;
    struct an_finding *f = an_finding_add(&run->findings, "straggler");
    if (!f)
        return;
    int32_t rank = ranks[slow]->hdr.rank;
    char cause[256], wait[32], all[32];
    own_cause(run, ranks[slow], cause, sizeof cause);
    an_fmt_ns(wait, sizeof wait, (double)median);
    an_fmt_ns(all, sizeof all, (double)total);
    snprintf(f->title, sizeof f->title,
             "Rank %" PRId32 " is the straggler: the other ranks wait for it in their "
             "collectives", rank);
    an_appendf(f->evidence, sizeof f->evidence,
               "Rank %" PRId32 " spends the least time in collectives no compute ran beside; "
               "the other %zu ranks each spend %s more there (median; %s in all, %.0f%% of "
               "their wall time): that is their wait for it. Of rank %" PRId32 ": %s.",
               rank, k, wait, all, 100.0 * (double)median / (double)wall, rank, cause);
    snprintf(f->change, sizeof f->change,
             "Make rank %" PRId32 " as fast as the others: fix its own finding first (its "
             "evidence is in this report), then look at what only its node has (a co-tenant "
             "on its GPU, a slower link, CPU contention, a data shard that loads slower).",
             rank);
    an_set_saving(m, f, median);
    f->saving_share = (double)median / (double)wall;
    f->first_ts = m->first_ts;
    f->last_ts = m->last_ts;
    f->pid = ranks[slow]->hdr.pid;
    f->rank = rank;
    f->processes = (unsigned)n;
    f->nranks = 0;
    for (size_t i = 0; i < n; i++)
        an_finding_add_rank(f, ranks[i]->hdr.rank);
    an_finding_fig(f, "straggler_rank", rank);
    an_finding_fig(f, "ranks", (double)n);
    an_finding_fig(f, "wait_per_rank_ns", (double)median);
    an_finding_fig(f, "wait_total_ns", (double)total);
}
