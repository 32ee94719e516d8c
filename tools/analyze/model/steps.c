/* Step boundary candidates during the pass, and the choice of the step after it. */
#include "steps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "totals.h"
#include "trace_reader.h"

static struct an_step_key *key_for(struct an_step_finder *f, uint64_t key,
                                   enum an_step_tier tier, int sub, uint16_t api,
                                   uint64_t name)
{
    size_t c = (size_t)(key ^ key >> 29) & (AN_STEP_CACHE - 1);
    if (f->cache[c].index_plus1 && f->cache[c].key == key)
        return &f->keys[f->cache[c].index_plus1 - 1];
    uint64_t *slot = gw_map_get(&f->index, key);
    if (slot) {
        f->cache[c].key = key;
        f->cache[c].index_plus1 = (uint32_t)*slot + 1;
        return &f->keys[*slot];
    }
    if (f->nkeys >= AN_STEP_MAX_KEYS)
        return NULL;
    if (f->nkeys == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        struct an_step_key *keys = realloc(f->keys, cap * sizeof *keys);
        if (!keys)
            return NULL;
        f->keys = keys;
        f->cap = cap;
    }
    if (gw_map_put(&f->index, key, f->nkeys) != 0)
        return NULL;
    struct an_step_key *k = &f->keys[f->nkeys++];
    memset(k, 0, offsetof(struct an_step_key, early));
    k->key = key;
    k->tier = tier;
    k->sub = sub;
    k->api = api;
    k->name = name;
    k->stride = 1;
    k->nearly = 0;
    k->close_ts = 0;  /* (the snapshots past early are not zeroed: a cost per key) */
    return k;
}

/* Keeps every other sample and doubles the stride: bounded memory for frequent keys. */
static void decimate(struct an_step_key *k)
{
    size_t n = 0;
    for (size_t i = 0; i < k->nsamples; i += 2, n++)
        k->sample[n] = k->sample[i];
    k->nsamples = n;
    k->stride *= 2;
}

void an_steps_occurrence(struct an_step_finder *f, const struct an_model *m, uint64_t key,
                         enum an_step_tier tier, int sub, uint16_t api, uint64_t name,
                         uint64_t boundary, uint64_t live)
{
    struct an_step_key *k = key_for(f, key, tier, sub, api, name);
    if (!k) {
        f->refused++;
        return;
    }
    if (k->count < AN_STEP_EARLY)
        an_totals_snapshot(m, &k->early[k->nearly++]);
    if (tier != AN_TIER_KERNEL)
        an_totals_snapshot(m, &k->last_snap);
    if (k->count == 0) {
        k->first = boundary;
        k->first_work = m->total.work_calls;
    }
    k->last = boundary;
    k->last_work = m->total.work_calls;
    if (k->count == k->next_sample) {
        if (k->nsamples == k->cap) {
            if (k->cap >= AN_STEP_MAX_SAMPLES) {
                decimate(k);
            } else {
                size_t cap = k->cap ? k->cap * 2 : 64;
                struct an_step_sample *grown = realloc(k->sample, cap * sizeof *grown);
                if (!grown) {
                    k->count++;
                    goto done;
                }
                k->sample = grown;
                k->cap = cap;
            }
        }
        an_steps_sample(k, boundary, live, m->total.work_calls);
    }
    k->count++;
done:
    /* what a kernel-tier occurrence does next time besides counting: an early snapshot
     * while count < AN_STEP_EARLY, a sample at next_sample (none when that was passed, after
     * a failed allocation) */
    k->slow_at = k->count < AN_STEP_EARLY ? k->count : k->next_sample;
}

static void close_step(struct an_step_finder *f, const struct an_model *m, uint64_t key,
                       uint64_t ts)
{
    uint64_t *slot = gw_map_get(&f->index, key);
    if (!slot)
        return;
    struct an_step_key *k = &f->keys[*slot];
    k->close_ts = ts;
    k->close_live = m->mem.live_total;
    k->close_work = m->total.work_calls;
    an_totals_snapshot(m, &k->close_snap);
}

/* Pushes and pops are followed on the thread that pushed a step range last (the loop's
 * thread); start/end ranges by their id, on any thread. A step range pushed inside another
 * step range is the step from then on (the outer one's pop then closes nothing). */
void an_steps_range(struct an_step_finder *f, const struct an_model *m, const struct an_ev *ev,
                    uint64_t key)
{
    int step = (ev->flags & AN_F_STEP_NAME) != 0;
    switch (ev->kind) {
    case AN_RANGE_PUSH:
        if (step && ev->tid != f->range_tid) {
            f->range_tid = ev->tid;  /* (the ranges it had open before are not counted) */
            f->range_depth = f->step_depth = 0;
        }
        if (ev->tid != f->range_tid)
            break;
        f->range_depth++;
        if (step) {
            f->step_depth = f->range_depth;
            f->step_key = key;
        }
        break;
    case AN_RANGE_POP:
        if (ev->tid != f->range_tid || !f->range_depth)
            break;
        if (f->step_depth == f->range_depth) {
            close_step(f, m, f->step_key, ev->ts);
            f->step_depth = 0;
        }
        f->range_depth--;
        break;
    case AN_RANGE_START:
        if (step) {
            f->step_range = ev->ptr;
            f->step_range_key = key;
        }
        break;
    case AN_RANGE_END:
        if (f->step_range && ev->ptr == f->step_range) {
            close_step(f, m, f->step_range_key, ev->ts);
            f->step_range = 0;
        }
        break;
    default:  /* a mark closes nothing */
        break;
    }
}

/* A step range that closed after its name's last push closed the last step: one more
 * occurrence, at its close (the steps between N pushes are N - 1; the Nth ends at its pop). */
static void close_last_steps(struct an_step_finder *f)
{
    for (size_t i = 0; i < f->nkeys; i++) {
        struct an_step_key *k = &f->keys[i];
        if (k->tier != AN_TIER_NVTX || !k->count || k->close_ts <= k->last)
            continue;
        if (k->nearly < AN_STEP_EARLY)
            k->early[k->nearly++] = k->close_snap;
        if (k->nsamples < k->cap)
            an_steps_sample(k, k->close_ts, k->close_live, k->close_work);
        k->last = k->close_ts;
        k->last_work = k->close_work;
        k->last_snap = k->close_snap;
        k->count++;
    }
}

/* Intervals between samples [from, nsamples), into out; returns how many. */
static size_t intervals(const struct an_step_key *k, size_t from, uint64_t *out)
{
    size_t n = 0;
    for (size_t i = from; i + 1 < k->nsamples; i++) {
        uint64_t a = k->sample[i].ts, b = k->sample[i + 1].ts;
        out[n++] = b > a ? b - a : 0;
    }
    return n;
}

/* Sorts a ascending: a radix sort (8-bit digits, least significant first, skipping digits
 * all values share), qsort when there is no room for the copy it needs. */
static void sort_u64(uint64_t *a, size_t n)
{
    uint64_t *tmp = n > 64 ? malloc(n * sizeof *tmp) : NULL;
    if (!tmp) {
        qsort(a, n, sizeof *a, an_cmp_u64);
        return;
    }
    size_t (*count)[256] = calloc(8, sizeof *count);
    if (!count) {
        free(tmp);
        qsort(a, n, sizeof *a, an_cmp_u64);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t v = a[i];
        for (int d = 0; d < 8; d++)
            count[d][(v >> (8 * d)) & 255]++;
    }
    uint64_t *src = a, *dst = tmp;
    for (int d = 0; d < 8; d++) {
        size_t *c = count[d];
        if (c[(src[0] >> (8 * d)) & 255] == n)
            continue;  /* every value has this digit */
        size_t at = 0;
        for (int b = 0; b < 256; b++) {
            size_t here = c[b];
            c[b] = at;
            at += here;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t v = src[i];
            dst[c[(v >> (8 * d)) & 255]++] = v;
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    free(count);
    free(tmp);
}

static size_t sorted_intervals(const struct an_step_key *k, size_t from, uint64_t *out)
{
    size_t n = intervals(k, from, out);
    sort_u64(out, n);
    return n;
}

/* The value a sort would put at a[nth] (nth < n); reorders a. Wirth's selection. */
static uint64_t select_nth(uint64_t *a, size_t n, size_t nth)
{
    ptrdiff_t l = 0, r = (ptrdiff_t)n - 1, k = (ptrdiff_t)nth;
    while (l < r) {
        uint64_t x = a[k];
        ptrdiff_t i = l, j = r;
        do {
            while (a[i] < x)
                i++;
            while (x < a[j])
                j--;
            if (i <= j) {
                uint64_t t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        } while (i <= j);
        if (j < k)
            l = i;
        if (k < i)
            r = j;
    }
    return a[k];
}

/* Within [median / 2, median x 1.5]. */
static int in_band(uint64_t v, uint64_t median)
{
    return v * 2 >= median && v * 2 <= median * 3;
}

/* Share of the intervals (in any order) in_band. */
static double regularity(const uint64_t *v, size_t n, uint64_t median)
{
    if (!n)
        return 0;
    size_t ok = 0;
    for (size_t i = 0; i < n; i++)
        ok += in_band(v[i], median);
    return (double)ok / (double)n;
}

/* 1 when a is a better step marker than b. */
static int better(const struct an_step_key *a, const struct an_step_key *b)
{
    if (a->tier != b->tier)
        return a->tier < b->tier;
    if (a->count != b->count) {
        /* finest regular pattern for marks and drains; coarsest for uploads and kernels
         * (a kernel launched evenly many times a step is regular too) */
        int more = a->count > b->count;
        return a->tier <= AN_TIER_DRAIN ? more : !more;
    }
    return a->sub < b->sub;
}

/* Warm-up: the leading steps before the first run of WARM_RUN steps that are all within
 * warmup_factor x the median (an isolated slow step later on is not warm-up). A step slow
 * only by the time the main thread waited for a CPU is not warm-up: preemption is no
 * one-off (beside CPU hogs that eased off, 114 of a 170 ms "warm-up" was preempted, and
 * the contention it hid was 40 % of the run). Returns the index of the first steady step. */
#define WARM_RUN 3
static size_t find_warmup(const struct an_model *m, const struct an_step_key *k,
                          uint64_t median, const struct an_cpu_samples *cpu)
{
    size_t intervals = k->nsamples - 1;
    size_t limit = (size_t)((double)intervals * m->th.warmup_max_share);
    size_t w = 0, normal = 0;
    for (size_t i = 0; i < intervals && w <= limit; i++) {
        uint64_t d = k->sample[i + 1].ts - k->sample[i].ts;
        if ((double)d > m->th.warmup_factor * (double)median &&
            (double)(d - an_cpu_preempted(cpu, m->header.pid, k->sample[i].ts,
                                          k->sample[i + 1].ts)) >
                m->th.warmup_factor * (double)median) {
            normal = 0;
            w = i + 1;
        } else if (++normal == WARM_RUN) {
            break;
        }
    }
    if (w > limit)
        w = limit;
    /* the steady snapshot must exist: warm-up ends within the early occurrences */
    while (w > 0 && w * k->stride >= k->nearly)
        w--;
    return w;
}

static void subtract(struct an_totals *out, const struct an_totals *a,
                     const struct an_totals *b)
{
    const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
    uint64_t *o = (uint64_t *)out;
    for (size_t i = 0; i < sizeof *out / sizeof(uint64_t); i++)
        o[i] = x[i] >= y[i] ? x[i] - y[i] : 0;
}

static void label(struct an_model *m, const struct an_step_key *k)
{
    m->steps.marker_tier = (int)k->tier;
    m->steps.marker_api = k->api;
    m->steps.marker_name = k->name;
    const char *name = NULL;
    switch (k->tier) {
    case AN_TIER_NVTX:
        name = m->resolve ? m->resolve(m->resolve_user, 0, k->name) : NULL;
        snprintf(m->steps.marker, sizeof m->steps.marker, "NVTX %s", name ? name : "range");
        break;
    case AN_TIER_KERNEL:
        name = m->resolve ? m->resolve(m->resolve_user, 1, k->name) : NULL;
        snprintf(m->steps.marker, sizeof m->steps.marker, "launch of %s",
                 name ? name : "one kernel");
        break;
    default:
        name = gw_api_name(k->api);
        snprintf(m->steps.marker, sizeof m->steps.marker, "%s", name ? name : "a call");
    }
}

static void memory_growth(struct an_model *m, const struct an_step_key *k, size_t w)
{
    struct an_steps *s = &m->steps;
    s->live_first = s->live_min = s->live_max = k->sample[w].live;
    s->live_mid = k->sample[w + (k->nsamples - 1 - w) / 2].live;
    s->live_dip = 0;
    for (size_t i = w; i < k->nsamples; i++) {
        uint64_t v = k->sample[i].live;
        s->live_last = v;
        if (v < s->live_min)
            s->live_min = v;
        if (v > s->live_max)
            s->live_max = v;
        if (s->live_max - v > s->live_dip)
            s->live_dip = s->live_max - v;
        if (i > w) {
            s->sampled_steps++;
            s->growth_steps += v > k->sample[i - 1].live;
        }
    }
}

/* Steps change pace: where the GPU bounds the loop, the host runs ahead until the launch
 * queue is full (on an H100, the first 84 of 200 steps of a PyTorch loop came 1 ms apart
 * in host time, the rest 6.5 ms; and again at each epoch's start, through the batches
 * prefetched meanwhile), and a loop that holds more memory each step ran at 1.2 ms for 100
 * steps, then at 2.7 ms. So each interval is judged against the median of its neighbours,
 * AN_STEP_LOCAL on each side. Steps keep to a few paces: a series whose neighbourhood
 * medians keep finding new ones (out of the band of each pace seen) is a trend. */
#define AN_STEP_LOCAL 7
#define AN_STEP_MAX_PACES 3

#define AN_STEP_WIDTH (2 * AN_STEP_LOCAL + 1)

/* The median of interval i's neighbourhood (n >= AN_STEP_WIDTH). */
static uint64_t local_median(const uint64_t *v, size_t n, size_t i)
{
    size_t from = i < AN_STEP_LOCAL ? 0 : i - AN_STEP_LOCAL;
    if (from > n - AN_STEP_WIDTH)
        from = n - AN_STEP_WIDTH;
    uint64_t near[AN_STEP_WIDTH];
    memcpy(near, v + from, sizeof near);
    return select_nth(near, AN_STEP_WIDTH, AN_STEP_LOCAL);
}

/* Share of the intervals (in time order) in_band of their neighbourhood's median, or 0
 * for a trend or too few intervals. */
static double pace_regularity(const uint64_t *v, size_t n)
{
    if (n < AN_STEP_WIDTH)
        return 0;
    uint64_t paces[AN_STEP_MAX_PACES];
    size_t ok = 0, npaces = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t local = local_median(v, n, i);
        size_t p = 0;
        while (p < npaces && !in_band(local, paces[p]))
            p++;
        if (p == npaces) {
            if (npaces == AN_STEP_MAX_PACES)
                return 0;
            paces[npaces++] = local;
        }
        ok += in_band(v[i], local);
    }
    return (double)ok / (double)n;
}

/* The shares of the time and of the work calls that k's intervals v (in time order) in
 * band hold, of the median, or with median 0 of their neighbourhood's, from its first
 * WARM_RUN intervals in band on (warm-up apart). */
struct an_band_shares {
    double time, work;
};

static struct an_band_shares band_shares(const struct an_step_key *k, const uint64_t *v,
                                         size_t n, uint64_t median)
{
    size_t from = n;
    for (size_t i = 0, run = 0; i < n && from == n; i++) {
        run = in_band(v[i], median ? median : local_median(v, n, i)) ? run + 1 : 0;
        if (run == WARM_RUN)
            from = i + 1 - WARM_RUN;
    }
    uint64_t in_ns = 0, all_ns = 0, in_work = 0, all_work = 0;
    for (size_t i = from; i < n; i++) {
        uint64_t work = k->sample[i + 1].work - k->sample[i].work;
        int ok = in_band(v[i], median ? median : local_median(v, n, i));
        in_ns += ok ? v[i] : 0;
        all_ns += v[i];
        in_work += ok ? work : 0;
        all_work += work;
    }
    return (struct an_band_shares){all_ns ? (double)in_ns / (double)all_ns : 0,
                                   all_work ? (double)in_work / (double)all_work : 0};
}

/* From the first work seen by a candidate that is not NVTX (a launch, an upload, a drain)
 * to the last: the run without its start-up and teardown, where a found pattern must
 * repeat. On a real GPU, making the context and loading modules can outlast a short loop
 * (200 ms against 150 ms for the C examples on an H100), and issues no work. */
static uint64_t work_span(const struct an_model *m, const struct an_step_finder *f)
{
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < f->nkeys; i++) {
        const struct an_step_key *k = &f->keys[i];
        if (k->tier == AN_TIER_NVTX || !k->count)
            continue;
        first = k->first < first ? k->first : first;
        last = k->last > last ? k->last : last;
    }
    return last > first ? last - first : m->wall_ns;
}

/* The share of the time that intervals v hold which are no longer than a step stretched
 * by time off the CPU: a few scheduler slices (CFS: 3-24 ms) on steps of a few ms, a
 * few times the median, where start-up or a pause takes thousands of times it. */
#define AN_STEP_STRETCH_MAX 8

static double stretched_share(const uint64_t *v, size_t n, uint64_t median)
{
    uint64_t in = 0, all = 0;
    for (size_t i = 0; i < n; i++) {
        in += v[i] * 2 >= median && v[i] <= AN_STEP_STRETCH_MAX * median ? v[i] : 0;
        all += v[i];
    }
    return all ? (double)in / (double)all : 0;
}

/* Whether the intervals of k carry the same work calls, at least share of them within
 * band of their median, holding at least work_share of the work: the iterations of one
 * loop. Time off the CPU stretches some of them several times over (another process's
 * load on a 2-CPU machine: 1.45 ms steps measured 1.45-7.2 ms, 9 of 19 near 1.45), so for
 * such a loop half its intervals even in time is a pattern; a trend or a growing wait
 * does the same work too, but keeps a quarter in band at most. buf holds
 * AN_STEP_MAX_SAMPLES (overwritten). */
static int same_work(const struct an_step_key *k, uint64_t *buf, double share,
                     double work_share)
{
    size_t n = 0;
    for (size_t i = 0; i + 1 < k->nsamples && n < AN_STEP_MAX_SAMPLES; i++)
        buf[n++] = k->sample[i + 1].work - k->sample[i].work;
    uint64_t median = n ? select_nth(buf, n, n / 2) : 0;
    if (!median)
        return 0;
    size_t ok = 0;
    uint64_t in = 0, all = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t work = k->sample[i + 1].work - k->sample[i].work;
        ok += in_band(work, median);
        in += in_band(work, median) ? work : 0;
        all += work;
    }
    return (double)ok >= share * (double)n && (double)in >= work_share * (double)all;
}

/* How regular candidate k repeats, or -1 when it is no step marker (too few, too little
 * of the run, uneven). buf holds AN_STEP_MAX_SAMPLES. */
static double candidate_regularity(const struct an_model *m, const struct an_step_key *k,
                                   uint64_t span, uint64_t *buf)
{
    if (k->count < (uint64_t)m->th.min_steps + 1 || k->nsamples < 3)
        return -1;
    /* A range the user marked as a step is one, however little of the run it spans and
     * however unevenly it repeats: on a real GPU, start-up (CUDA context, cuBLAS, model and
     * data to the device) can outlast a short loop, and the host, running ahead of the GPU,
     * marks steps in bursts whenever the launch queue lets it go. A guessed pattern must
     * span enough of the work and repeat evenly. */
    int marked = k->tier == AN_TIER_NVTX;
    double cover = span ? (double)(k->last - k->first) / (double)span : 0;
    double cover_work = m->total.work_calls ? (double)(k->last_work - k->first_work) /
                                                  (double)m->total.work_calls
                                            : 0;
    if (!marked && cover < m->th.step_coverage && cover_work < m->th.step_work_coverage)
        return -1;
    /* a candidate needs only its median: selection, not a sort (most are rejected) */
    size_t n = intervals(k, 0, buf);
    double reg = regularity(buf, n, n ? select_nth(buf, n, n / 2) : 0);
    uint64_t median = n ? buf[n / 2] : 0, band = median;
    if (median == 0)
        return -1;
    if (marked)
        return reg;
    n = intervals(k, 0, buf);  /* in time order again, for what follows */
    if (reg < m->th.step_regularity) {
        double paced = pace_regularity(buf, n);
        if (paced > reg) {
            reg = paced;
            band = 0;  /* each interval's neighbourhood */
        }
    }
    if (reg < m->th.step_regularity && reg >= m->th.step_regularity_same_work &&
        stretched_share(buf, n, median) >= m->th.step_time_share &&
        same_work(k, buf, m->th.step_regularity, m->th.step_work_share))
        return reg;
    if (reg < m->th.step_regularity)
        return -1;
    /* Steps fill the run or hold its work. torch.compile times its kernel choices before
     * the loop in bursts of synchronized runs at an even pace, and a synchronize at the end
     * closes an interval that holds the whole loop: even intervals, but neither. (Pauses
     * for checkpoints take most of the time, a long evaluation most of the work.) */
    struct an_band_shares in = band_shares(k, buf, n, band);
    if (in.time < m->th.step_time_share && in.work < m->th.step_work_share)
        return -1;
    return reg;
}

/* Whether coarse's intervals each hold about the same number of fine's occurrences: a
 * kernel launched once every few steps of another (the optimizer's, with gradient
 * accumulation), not one that comes with some inputs only (a batch of a rare shape).
 * buf holds AN_STEP_MAX_SAMPLES. */
static int nests(const struct an_model *m, const struct an_step_key *coarse,
                 const struct an_step_key *fine, uint64_t *buf)
{
    size_t n = 0, j = 0;
    for (size_t i = 0; i + 1 < coarse->nsamples; i++) {
        while (j < fine->nsamples && fine->sample[j].ts < coarse->sample[i].ts)
            j++;
        uint64_t within = 0;
        for (; j < fine->nsamples && fine->sample[j].ts < coarse->sample[i + 1].ts; j++)
            within++;
        buf[n++] = within;
    }
    if (!n)
        return 0;
    uint64_t median = select_nth(buf, n, n / 2);  /* (the counts' order does not matter) */
    /* where fine's samples are every stride-th occurrence, a constant count reads +-1 */
    uint64_t slack = (fine->stride > 1) + median / 8;
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += buf[i] + slack >= median && buf[i] <= median + slack;
    return median > 0 && (double)same >= m->th.step_nest_share * (double)n;
}

/* The kernel tier's marker: the coarsest regular pattern (a kernel launched evenly many
 * times a step is regular too) that nests in the finest one, or that one. */
static const struct an_step_key *choose_kernel(const struct an_model *m,
                                               const struct an_step_finder *f, uint64_t span,
                                               uint64_t *buf, double *reg_out)
{
    const struct an_step_key *finest = NULL, *best = NULL;
    double finest_reg = 0, best_reg = 0;
    double *reg = malloc(f->nkeys * sizeof *reg);
    if (!reg)
        return NULL;
    for (size_t i = 0; i < f->nkeys; i++) {
        const struct an_step_key *k = &f->keys[i];
        reg[i] = k->tier == AN_TIER_KERNEL ? candidate_regularity(m, k, span, buf) : -1;
        if (reg[i] >= 0 && (!finest || k->count > finest->count)) {
            finest = k;
            finest_reg = reg[i];
        }
    }
    for (size_t i = 0; finest && i < f->nkeys; i++) {
        const struct an_step_key *k = &f->keys[i];
        if (reg[i] < 0 || (best && !better(k, best)) || k->count >= finest->count)
            continue;
        if (nests(m, k, finest, buf)) {
            best = k;
            best_reg = reg[i];
        }
    }
    free(reg);
    *reg_out = best ? best_reg : finest_reg;
    return best ? best : finest;
}

/* An upload that comes small_copies_per_step times or more, evenly, between two
 * occurrences of a kernel launched min_steps + 1 times or more is a per-item copy (a dict
 * of tensors moved one by one, 500 4 KiB copies an iteration), not a step boundary: 14 999
 * "steps" of 0.1 ms were found at every such copy. The kernel tier's marker is the step
 * then, as the coarsest regular pattern is for uploads and kernels (better()), or, when no
 * kernel repeats evenly enough (a loaded machine), there are no steps: better none than one
 * at every copy. Fewer uploads than that per kernel (a batch of a few tensors, gradient
 * accumulation) keep the upload. */
static const struct an_step_key *per_item_uploads(const struct an_model *m,
                                                  const struct an_step_finder *f,
                                                  const struct an_step_key *upload,
                                                  uint64_t span, uint64_t *buf, double *reg)
{
    int per_item = 0;
    for (size_t i = 0; i < f->nkeys && !per_item; i++) {
        const struct an_step_key *k = &f->keys[i];
        per_item = k->tier == AN_TIER_KERNEL && k->count >= (uint64_t)m->th.min_steps + 1 &&
                   (double)upload->count >=
                       (double)m->th.small_copies_per_step * (double)k->count &&
                   nests(m, k, upload, buf);
    }
    if (!per_item)
        return upload;
    return choose_kernel(m, f, span, buf, reg);  /* (NULL: no steps) */
}

void an_steps_choose(struct an_model *m, struct an_step_finder *f,
                     const struct an_cpu_samples *cpu)
{
    memset(&m->steps, 0, sizeof m->steps);
    m->steady = m->total;
    m->steady_start = m->first_ts;
    m->steady_end = m->last_ts;
    const struct an_step_key *best = NULL;
    double best_reg = 0;
    uint64_t *buf = malloc(AN_STEP_MAX_SAMPLES * sizeof *buf);
    if (!buf)
        return;
    close_last_steps(f);
    uint64_t span = work_span(m, f);
    /* tier by tier (in key order within one): once a tier has a regular candidate, no key of
     * a later tier is better, and a key that is not better than the best so far is not
     * examined (the choice is the same as examining every key in key order) */
    for (unsigned tier = AN_TIER_NVTX; tier < AN_TIER_KERNEL && !best; tier++) {
        for (size_t i = 0; i < f->nkeys; i++) {
            const struct an_step_key *k = &f->keys[i];
            if ((unsigned)k->tier != tier || (best && !better(k, best)))
                continue;
            double reg = candidate_regularity(m, k, span, buf);
            if (reg >= 0) {
                best = k;
                best_reg = reg;
            }
        }
    }
    if (best && best->tier == AN_TIER_H2D)
        best = per_item_uploads(m, f, best, span, buf, &best_reg);
    if (!best)
        best = choose_kernel(m, f, span, buf, &best_reg);
    if (!best) {
        free(buf);
        return;
    }
    size_t n = sorted_intervals(best, 0, buf);
    size_t w = find_warmup(m, best, buf[n / 2], cpu);
    n = sorted_intervals(best, w, buf);
    struct an_steps *s = &m->steps;
    s->source = best->tier == AN_TIER_NVTX ? AN_STEPS_NVTX : AN_STEPS_AUTO;
    label(m, best);
    s->count = best->count - 1;
    s->last_end_ns = best->last;
    s->warmup = w * best->stride;
    s->steady = s->count - s->warmup;
    s->regularity = best_reg;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += buf[i];
    s->median_ns = buf[n / 2] / best->stride;
    s->p90_ns = buf[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1] / best->stride;
    s->min_ns = buf[0] / best->stride;
    s->max_ns = buf[n - 1] / best->stride;
    s->mean_ns = n ? sum / n / best->stride : 0;
    m->steady_start = best->sample[w].ts;
    m->steady_end = best->last;
    s->warmup_ns = m->steady_start > m->first_ts ? m->steady_start - m->first_ts : 0;
    size_t snap = w * best->stride < best->nearly ? w * best->stride : best->nearly - 1;
    struct an_totals last = best->last_snap;
    if (best->tier == AN_TIER_KERNEL)
        an_totals_snapshot(m, &last);  /* the run's end: teardown counts, a little */
    subtract(&m->steady, &last, &best->early[snap]);
    memory_growth(m, best, w);
    /* memory held over the whole run, at the marker's boundaries */
    size_t n_series = best->nsamples < AN_MEM_SERIES ? best->nsamples : AN_MEM_SERIES;
    for (size_t i = 0; i < n_series; i++) {
        size_t at = n_series > 1 ? i * (best->nsamples - 1) / (n_series - 1) : 0;
        m->mem_series[i] = (struct an_mem_point){best->sample[at].ts, best->sample[at].live};
    }
    m->nmem_series = n_series;
    free(buf);
}

void an_steps_free(struct an_step_finder *f)
{
    for (size_t i = 0; i < f->nkeys; i++)
        free(f->keys[i].sample);
    free(f->keys);
    gw_map_free(&f->index);
    memset(f, 0, sizeof *f);
}

void an_steps_top_kernels(struct an_model *m, const struct an_step_finder *f)
{
    m->ntop_kernels = 0;
    m->kernel_shapes = 0;
    for (size_t i = 0; i < f->nkeys; i++) {
        const struct an_step_key *k = &f->keys[i];
        if (k->tier != AN_TIER_KERNEL)
            continue;
        m->kernel_shapes++;
        /* insertion into the short list, most launched first */
        size_t at = m->ntop_kernels;
        while (at > 0 && m->top_kernels[at - 1].launches < k->count)
            at--;
        if (at >= AN_KEEP_KERNELS)
            continue;
        size_t n = m->ntop_kernels < AN_KEEP_KERNELS ? m->ntop_kernels : AN_KEEP_KERNELS - 1;
        memmove(&m->top_kernels[at + 1], &m->top_kernels[at],
                (n - at) * sizeof m->top_kernels[0]);
        struct an_kernel_count *t = &m->top_kernels[at];
        memset(t, 0, sizeof *t);
        t->shape_id = k->name;
        t->launches = k->count;
        m->ntop_kernels = n + 1;
    }
    for (size_t i = 0; i < m->ntop_kernels; i++) {
        struct an_kernel_count *t = &m->top_kernels[i];
        const char *name = m->resolve ? m->resolve(m->resolve_user, 1, t->shape_id) : NULL;
        snprintf(t->name, sizeof t->name, "%s", name && *name ? name : "?");
    }
}
