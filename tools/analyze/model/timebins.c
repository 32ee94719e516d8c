#include "timebins.h"

#include <string.h>

#define FIRST_SHIFT 10  /* 1024 ns wide: about 4 ms of run before the first doubling */

static void start_at(struct an_timebins *tb, uint64_t t)
{
    tb->origin = t;
    tb->shift = FIRST_SHIFT;
    tb->width = 1ull << FIRST_SHIFT;
    tb->started = 1;
}

/* Doubles the bins' width: pairs merged, the origin kept. */
static void widen(struct an_timebins *tb)
{
    for (int i = 0; i < AN_BINS / 2; i++)
        for (int k = 0; k < AN_BIN_VALUES; k++)
            tb->bins[i].v[k] = tb->bins[2 * i].v[k] + tb->bins[2 * i + 1].v[k];
    memset(&tb->bins[AN_BINS / 2], 0, sizeof tb->bins[0] * (AN_BINS / 2));
    tb->shift++;
    tb->width = 1ull << tb->shift;
}

/* Whether the last k bins hold nothing (k < AN_BINS): the bins can move k places on. */
static int tail_empty(const struct an_timebins *tb, uint64_t k)
{
    for (uint64_t i = AN_BINS - k; i < AN_BINS; i++)
        for (int v = 0; v < AN_BIN_VALUES; v++)
            if (tb->bins[i].v[v] != 0)
                return 0;
    return 1;
}

/* Moves the origin back to t: the first bins call is not always the earliest time (an idle
 * interval is added at its end, GPU records come late), and what lies before the origin
 * would otherwise be piled into bin 0, where a steady state starting there would count
 * it. Whole bins are put in front (widening first when they would not fit), so the bins
 * keep their edges. A time so early that the origin cannot go back to it stays clamped. */
static void extend_back(struct an_timebins *tb, uint64_t t)
{
    for (;;) {
        uint64_t k = (tb->origin - t + tb->width - 1) >> tb->shift;  /* bins to put in front */
        if (k * tb->width > tb->origin)
            return;
        if (k < AN_BINS && tail_empty(tb, k)) {
            memmove(&tb->bins[k], &tb->bins[0], sizeof tb->bins[0] * (AN_BINS - k));
            memset(&tb->bins[0], 0, sizeof tb->bins[0] * k);
            tb->origin -= k * tb->width;
            return;
        }
        if (tb->shift >= 50)
            return;
        widen(tb);
    }
}

/* Bins that cover t: started, extended back or widened as needed. */
static void ensure(struct an_timebins *tb, uint64_t t)
{
    if (!tb->started)
        start_at(tb, t);
    if (t < tb->origin)
        extend_back(tb, t);
    /* (a corrupt time far in the future stops the doubling at a width that cannot wrap) */
    while (t >= tb->origin && (t - tb->origin) >> tb->shift >= AN_BINS && tb->shift < 50)
        widen(tb);
}

struct an_bin *an_bins_slot_slow(struct an_timebins *tb, uint64_t t)
{
    ensure(tb, t);
    uint64_t i = t < tb->origin ? 0 : (t - tb->origin) >> tb->shift;
    return &tb->bins[i < AN_BINS ? i : AN_BINS - 1];
}

void an_bins_point(struct an_timebins *tb, int what, uint64_t t, double amount)
{
    an_bins_slot(tb, t)->v[what] += amount;
}

static inline uint64_t clamp_start(const struct an_timebins *tb, uint64_t t)
{
    return t < tb->origin ? tb->origin : t;  /* earlier than extend_back reaches: bin 0 */
}

void an_bins_add(struct an_timebins *tb, int what, uint64_t start, uint64_t end,
                 double amount)
{
    if (end < start)
        end = start;
    ensure(tb, start);
    ensure(tb, end);
    start = clamp_start(tb, start);
    end = clamp_start(tb, end);
    uint64_t a = (start - tb->origin) >> tb->shift, b = (end - tb->origin) >> tb->shift;
    if (a >= AN_BINS)
        a = AN_BINS - 1;
    if (b >= AN_BINS)
        b = AN_BINS - 1;
    if (a == b || end == start) {
        tb->bins[a].v[what] += amount;
        return;
    }
    double per_ns = amount / (double)(end - start);
    for (uint64_t i = a; i <= b; i++) {
        uint64_t lo = tb->origin + i * tb->width, hi = i == AN_BINS - 1 ? UINT64_MAX : lo + tb->width;
        uint64_t s = start > lo ? start : lo, e = end < hi ? end : hi;
        if (e > s)
            tb->bins[i].v[what] += per_ns * (double)(e - s);
    }
}

double an_bins_sum(const struct an_timebins *tb, int what, uint64_t start, uint64_t end)
{
    if (!tb->started || end <= start)
        return 0;
    if (end <= tb->origin)
        return 0;
    /* only the bins the range touches: a report sums hundreds of ranges per process */
    uint64_t first = start > tb->origin ? (start - tb->origin) >> tb->shift : 0;
    uint64_t last = (end - 1 - tb->origin) >> tb->shift;
    if (last >= AN_BINS)
        last = AN_BINS - 1;
    double sum = 0;
    for (uint64_t i = first; i <= last; i++) {
        uint64_t lo = tb->origin + i * tb->width, hi = lo + tb->width;
        if (hi <= start || lo >= end)
            continue;
        uint64_t s = start > lo ? start : lo, e = end < hi ? end : hi;
        sum += tb->bins[i].v[what] * (double)(e - s) / (double)tb->width;
    }
    return sum;
}
