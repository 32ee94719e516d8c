/*
 * straggler: in a run of several ranks whose steps meet in collectives, the rank the others
 * wait for. A collective ends on every rank when the last one arrives, so the ranks that
 * arrive early spend the difference inside it (run_collectives.c lines the ranks' k-th
 * collectives up and measures each rank's wait from the kernels' lengths, over the steady
 * state: the first collectives wait for the processes to be up). The straggler
 * is the rank whose lateness costs the job most: were it to arrive with the next-latest
 * rank, every collective would end that much sooner, on every rank. The saving is that
 * sum, but no more than any other rank waited with nothing computing beside it (a wait
 * hidden behind compute costs nothing: ranks merely out of phase); the finding holds when
 * it is min_share of the other ranks' median wall time and the rank arrived last at half
 * the steady state's collectives or more.
 * It names the straggler's own cause (the top finding from its evidence, else its largest
 * idle cause). A run-level rule: it reads every process's model. Tested in
 * tests/analyze/test_golden.sh (synthetic ranks) and test_ranks.sh (ranks run on the
 * simulated GPU, one with a slow input pipeline).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze.h"
#include "rules.h"

/* The straggler's own cause, in words. */
static void own_cause(const struct an_run *run, const struct an_trace *t, char *buf,
                      size_t size)
{
    /* the first of the run's findings (ranked) that this rank showed: a finding several
     * ranks share takes its evidence from one of them, not always this one */
    for (size_t i = 0; i < run->findings.count; i++) {
        const struct an_finding *f = &run->findings.items[i];
        int seen = f->pid == t->hdr.pid;
        for (unsigned r = 0; r < f->nranks && !seen && t->hdr.rank >= 0; r++)
            seen = f->ranks[r] == t->hdr.rank;
        if (seen && !f->risk) {
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
    const struct an_run_comm *c = &run->comm;
    if (c->ranks < 2 || !c->straggler_gain_ns)
        return;
    const struct an_trace *slow = &run->traces[c->straggler];
    /* a straggler is late as a rule: at half the collectives or more. A rank late at a few
     * is unlucky (a CPU taken from it at those moments), and no change of its own makes it
     * otherwise (beside a CPU hog, one of four alike ranks arrived last at 4 of 39 and
     * "cost" 8 % of the wall) */
    if (2 * slow->comm_last < c->steady_collectives)
        return;
    uint64_t waits[AN_KEEP_RANKS], walls[AN_KEEP_RANKS], total = 0;
    uint64_t gain = c->straggler_gain_ns;
    size_t k = 0;
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (i == c->straggler || !an_run_lined_up(t))
            continue;
        total += t->comm_wait_steady_ns;
        /* a wait that compute ran beside cost that rank nothing: the job gains at most the
         * least any rank waited with nothing beside it */
        uint64_t exposed = t->comm_wait_steady_ns < t->model->comm_exposed_ns
                               ? t->comm_wait_steady_ns
                               : t->model->comm_exposed_ns;
        if (exposed < gain)
            gain = exposed;
        if (k < AN_KEEP_RANKS) {
            waits[k] = t->comm_wait_steady_ns;
            walls[k++] = t->model->wall_ns;
        }
    }
    if (!k)
        return;
    qsort(waits, k, sizeof waits[0], an_cmp_u64);
    qsort(walls, k, sizeof walls[0], an_cmp_u64);
    uint64_t median = waits[k / 2], wall = walls[k / 2];
    const struct an_model *m = slow->model;
    if (!wall || (double)gain < m->th.min_share * (double)wall)
        return;
    struct an_finding *f = an_finding_add(&run->findings, "straggler");
    if (!f)
        return;
    int32_t rank = slow->hdr.rank;
    char cause[256], wait[32], all[32], sooner[32];
    own_cause(run, slow, cause, sizeof cause);
    an_fmt_ns(wait, sizeof wait, (double)median);
    an_fmt_ns(all, sizeof all, (double)total);
    an_fmt_ns(sooner, sizeof sooner, (double)gain);
    snprintf(f->title, sizeof f->title,
             "Rank %" PRId32 " is the straggler: the other ranks wait for it in their "
             "collectives", rank);
    an_appendf(f->evidence, sizeof f->evidence,
               "Rank %" PRId32 " arrived last at %" PRIu64 " of the %" PRIu64 " collectives "
               "of the steady state; the "
               "other %zu ranks each waited %s for the last rank inside them (median; %s in "
               "all, %.0f%% of their wall time). Had it arrived with the next-latest rank, "
               "the job would have gained %s (the collectives ending sooner, less what "
               "compute beside them hid of the wait). Of rank %" PRId32 ": %s.",
               rank, slow->comm_last, c->steady_collectives, c->ranks - 1, wait, all,
               100.0 * (double)median / (double)wall, sooner, rank, cause);
    snprintf(f->change, sizeof f->change,
             "Make rank %" PRId32 " as fast as the others: fix its own finding first (its "
             "evidence is in this report), then look at what only its node has (a co-tenant "
             "on its GPU, a slower link, CPU contention, a data shard that loads slower).",
             rank);
    an_set_saving(m, f, gain);
    f->saving_share = (double)gain / (double)wall;
    f->first_ts = m->first_ts;
    f->last_ts = m->last_ts;
    f->pid = slow->hdr.pid;
    f->rank = rank;
    f->processes = (unsigned)c->ranks;
    f->nranks = 0;
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (an_run_lined_up(t))
            an_finding_add_rank(f, t->hdr.rank);
    }
    an_finding_fig(f, "straggler_rank", rank);
    an_finding_fig(f, "ranks", (double)c->ranks);
    an_finding_fig(f, "last_arrivals", (double)slow->comm_last);
    an_finding_fig(f, "wait_per_rank_ns", (double)median);
    an_finding_fig(f, "wait_total_ns", (double)total);
}
