/*
 * The ranks' collectives lined up (struct an_run_comm). The k-th collective is the same
 * operation on every rank and ends on all of them at once, when the last rank has arrived
 * and the transfer is done; so the rank that arrives last has the shortest kernel, and
 * every other rank's kernel is longer by its wait for that one. Durations need no common
 * clock: the waits, the skew and the straggler come from them alone. The ends, which do
 * need one, align the hosts' clocks: per host the median of its ranks' end minus the first
 * rank's end, and what is left after that is said as the residual error.
 *
 * Reads the kept samples (comm_samples.h) of the ranks with a GPU timeline, when they ran
 * as many collectives (else they are not one sequence: groups of their own); joins those
 * that every rank kept, and scales sums to the first rank's count of collectives. The
 * whole run's waits (what exposed communication leaves out) count every one; the skew,
 * the arrivals and the straggler's gain only those of every rank's steady state, the first
 * ones waiting for the processes to start.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "comm_samples.h"

static int by_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The samples every rank kept: their numbers, from the first rank's. */
static size_t join(struct an_trace *const *ranks, size_t n, uint64_t *numbers)
{
    const struct an_comm_samples *first = &ranks[0]->model->comm_samples;
    size_t joined = 0;
    for (size_t i = 0; i < first->n; i++) {
        uint64_t k = first->v[i].number;
        size_t r = 1;
        while (r < n && an_comm_sample_find(&ranks[r]->model->comm_samples, k))
            r++;
        if (r == n)
            numbers[joined++] = k;
    }
    return joined;
}

/* Each rank's kernel length for collective `number` into durs; returns the rank that
 * arrived last (the shortest), the longest in *longest. */
static size_t durations(struct an_trace *const *ranks, size_t n, uint64_t number,
                        uint64_t *durs, uint64_t *longest)
{
    size_t last = 0;
    *longest = 0;
    for (size_t r = 0; r < n; r++) {
        const struct an_comm_sample *s = an_comm_sample_find(&ranks[r]->model->comm_samples,
                                                             number);
        durs[r] = s->end > s->start ? s->end - s->start : 0;
        if (durs[r] < durs[last])
            last = r;
        if (durs[r] > *longest)
            *longest = durs[r];
    }
    return last;
}

/* Of the joined collectives, those of every rank's steady state (the processes of a job
 * start apart: the first collectives wait for the last one to be up, which no rank's pace
 * says anything about); all of them when a rank found no steps. */
static size_t steady_ones(struct an_trace *const *ranks, size_t n, const uint64_t *numbers,
                          size_t joined, uint64_t *steady)
{
    size_t kept = 0;
    for (size_t j = 0; j < joined; j++) {
        size_t r = 0;
        while (r < n) {
            const struct an_model *m = ranks[r]->model;
            const struct an_comm_sample *s = an_comm_sample_find(&m->comm_samples, numbers[j]);
            if (m->steps.steady && s->start < m->steady_start)
                break;
            r++;
        }
        if (r == n)
            steady[kept++] = numbers[j];
    }
    if (kept)
        return kept;
    memcpy(steady, numbers, joined * sizeof *numbers);
    return joined;
}

static uint64_t end_realtime(const struct an_trace *t, const struct an_comm_sample *s)
{
    return s->end + (uint64_t)t->hdr.realtime_minus_trace_ns;  /* (wraps as int64 would) */
}

/* Rank r's end of collective `number` minus the first rank's, on their wall clocks. */
static int64_t end_gap(struct an_trace *const *ranks, size_t r, uint64_t number)
{
    const struct an_comm_sample *a = an_comm_sample_find(&ranks[r]->model->comm_samples,
                                                         number);
    const struct an_comm_sample *b = an_comm_sample_find(&ranks[0]->model->comm_samples,
                                                         number);
    return (int64_t)(end_realtime(ranks[r], a) - end_realtime(ranks[0], b));
}

/* Per host, the clock offset to the first rank's host; the residual after it (p90). */
static void align_clocks(struct an_run *run, struct an_trace *const *ranks, size_t n,
                         const uint64_t *numbers, size_t joined, int64_t *diffs)
{
    struct an_run_comm *c = &run->comm;
    c->hosts = 0;
    for (size_t r = 0; r < n; r++) {
        size_t same = 0;
        while (same < r && !an_same_host(ranks[same], ranks[r]))
            same++;
        if (same < r) {
            ranks[r]->clock_offset_ns = ranks[same]->clock_offset_ns;
            continue;
        }
        c->hosts++;
        size_t nd = 0;  /* every rank of this host against the first rank */
        for (size_t q = r; q < n; q++) {
            if (!an_same_host(ranks[q], ranks[r]))
                continue;
            for (size_t j = 0; j < joined; j++)
                diffs[nd++] = end_gap(ranks, q, numbers[j]);
        }
        qsort(diffs, nd, sizeof *diffs, by_i64);
        ranks[r]->clock_offset_ns = r == 0 || !nd ? 0 : diffs[nd / 2];
    }
    size_t nd = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t j = 0; j < joined; j++) {
            int64_t d = end_gap(ranks, r, numbers[j]) - ranks[r]->clock_offset_ns;
            diffs[nd++] = d < 0 ? -d : d;
        }
    qsort(diffs, nd, sizeof *diffs, by_i64);
    c->residual_ns = nd ? (uint64_t)diffs[nd * 9 / 10 < nd ? nd * 9 / 10 : nd - 1] : 0;
}

int an_run_lined_up(const struct an_trace *t)
{
    return t->active && t->model && t->hdr.rank >= 0 && t->model->gpu_timeline &&
           t->model->comm_samples.n;
}

void an_run_collectives(struct an_run *run)
{
    struct an_run_comm *c = &run->comm;
    memset(c, 0, sizeof *c);
    struct an_trace **ranks = calloc(run->ntraces ? run->ntraces : 1, sizeof *ranks);
    if (!ranks)
        return;
    size_t n = 0;
    for (size_t i = 0; i < run->ntraces; i++) {
        struct an_trace *t = &run->traces[i];
        t->comm_wait_ns = t->comm_wait_steady_ns = t->comm_last = 0;
        t->clock_offset_ns = 0;
        if (an_run_lined_up(t))
            ranks[n++] = t;
        else if (t->active && t->model && t->hdr.rank >= 0 && t->model->gpu_sampled)
            c->sampled++;
    }
    /* The k-th collectives are one operation only when every rank ran as many: ranks in
     * groups of their own (tensor and data parallel, pipeline stages) run different ones
     * (a few lost records aside: AN_COMM_COUNT_SLACK) */
    for (size_t r = 0; r < n; r++) {
        uint64_t count = ranks[r]->model->comm_samples.count;
        if (!r || count < c->count_min)
            c->count_min = count;
        if (count > c->count_max)
            c->count_max = count;
    }
    c->candidates = n;
    if (c->sampled + n < 2)
        c->sampled = 0;  /* (fewer than two ranks: nothing to line up either way) */
    uint64_t slack = (uint64_t)((double)c->count_max * AN_COMM_COUNT_SLACK);
    if (n >= 2 && c->count_max - c->count_min > (slack > 2 ? slack : 2))
        n = 0;  /* not one sequence: nothing lined up */
    const struct an_comm_samples *first = n ? &ranks[0]->model->comm_samples : NULL;
    uint64_t *numbers = n >= 2 ? malloc(first->n * sizeof *numbers) : NULL;
    uint64_t *skews = numbers ? malloc(first->n * sizeof *skews) : NULL;
    uint64_t *durs = skews ? malloc(n * sizeof *durs) : NULL;
    uint64_t *gain = durs ? calloc(n, sizeof *gain) : NULL;
    int64_t *diffs = gain ? malloc(first->n * n * sizeof *diffs) : NULL;
    uint64_t *steady = diffs ? malloc(first->n * sizeof *steady) : NULL;
    size_t joined = steady ? join(ranks, n, numbers) : 0;
    size_t nsteady = joined ? steady_ones(ranks, n, numbers, joined, steady) : 0;
    if (joined) {
        c->ranks = n;
        c->collectives = first->count;
        c->joined = nsteady;
        uint64_t longest;
        for (size_t j = 0; j < joined; j++) {  /* the whole run's waits */
            size_t last = durations(ranks, n, numbers[j], durs, &longest);
            for (size_t r = 0; r < n; r++)
                ranks[r]->comm_wait_ns += durs[r] - durs[last];
        }
        for (size_t j = 0; j < nsteady; j++) {  /* the steady state's */
            size_t last = durations(ranks, n, steady[j], durs, &longest);
            skews[j] = longest - durs[last];
            ranks[last]->comm_last++;
            for (size_t r = 0; r < n; r++)
                ranks[r]->comm_wait_steady_ns += durs[r] - durs[last];
            /* were rank r as early as the next-latest, the collective would end sooner by
             * the next-shortest kernel minus r's own */
            for (size_t r = 0; r < n; r++) {
                uint64_t next = UINT64_MAX;
                for (size_t q = 0; q < n; q++)
                    if (q != r && durs[q] < next)
                        next = durs[q];
                if (next > durs[r])
                    gain[r] += next - durs[r];
            }
        }
        /* the sums over the steady state's kept collectives, scaled to all of its ones */
        double scale = (double)first->count / (double)joined;
        c->steady_collectives = (uint64_t)((double)nsteady * scale + 0.5);
        size_t slow = 0;
        for (size_t r = 0; r < n; r++) {
            ranks[r]->comm_wait_ns = (uint64_t)((double)ranks[r]->comm_wait_ns * scale + 0.5);
            ranks[r]->comm_wait_steady_ns =
                (uint64_t)((double)ranks[r]->comm_wait_steady_ns * scale + 0.5);
            ranks[r]->comm_last = (uint64_t)((double)ranks[r]->comm_last * scale + 0.5);
            if (gain[r] > gain[slow])
                slow = r;
        }
        c->straggler = (size_t)(ranks[slow] - run->traces);
        c->straggler_gain_ns = (uint64_t)((double)gain[slow] * scale + 0.5);
        qsort(skews, nsteady, sizeof *skews, an_cmp_u64);
        c->skew_median_ns = skews[nsteady / 2];
        c->skew_p90_ns = skews[nsteady * 9 / 10 < nsteady ? nsteady * 9 / 10 : nsteady - 1];
        c->skew_max_ns = skews[nsteady - 1];
        align_clocks(run, ranks, n, numbers, joined, diffs);
    }
    free(steady);
    free(diffs);
    free(gain);
    free(durs);
    free(skews);
    free(numbers);
    free(ranks);
}

int64_t an_run_clock_shift(const struct an_run *run, const struct an_trace *t)
{
    const struct an_trace *first = run->ntraces ? &run->traces[0] : NULL;
    if (!first || an_same_host(first, t))
        return 0;  /* one host: one monotonic clock */
    /* its wall clock to the first host's, less the error aligning found (0 without
     * collectives: the wall clocks are taken as right) */
    return t->hdr.realtime_minus_trace_ns - first->hdr.realtime_minus_trace_ns -
           t->clock_offset_ns;
}
