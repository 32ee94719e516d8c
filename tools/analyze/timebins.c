#include "timebins.h"

#include <string.h>

#define FIRST_SHIFT 10  /* 1024 ns wide: about 4 ms of run before the first doubling */

static void ensure(struct an_timebins *tb, uint64_t t)
{
    if (!tb->started) {
        tb->origin = t;
        tb->shift = FIRST_SHIFT;
        tb->width = 1ull << FIRST_SHIFT;
        tb->started = 1;
    }
    /* (a corrupt time far in the future stops the doubling at a width that cannot wrap) */
    while (t >= tb->origin && (t - tb->origin) >> tb->shift >= AN_BINS && tb->shift < 50) {
        for (int i = 0; i < AN_BINS / 2; i++)
            for (int k = 0; k < AN_BIN_VALUES; k++)
                tb->bins[i].v[k] = tb->bins[2 * i].v[k] + tb->bins[2 * i + 1].v[k];
        memset(&tb->bins[AN_BINS / 2], 0, sizeof tb->bins[0] * (AN_BINS / 2));
        tb->shift++;
        tb->width = 1ull << tb->shift;
    }
}

struct an_bin *an_bins_slot_slow(struct an_timebins *tb, uint64_t t)
{
    uint64_t i;
    if (!tb->started || t < tb->origin)
        i = 0;
    else if ((i = (t - tb->origin) >> tb->shift) >= AN_BINS) {
        ensure(tb, t);
        i = (t - tb->origin) >> tb->shift;
        if (i >= AN_BINS)
            i = AN_BINS - 1;
    }
    if (!tb->started)
        ensure(tb, t);
    return &tb->bins[i];
}

void an_bins_point(struct an_timebins *tb, int what, uint64_t t, double amount)
{
    an_bins_slot(tb, t)->v[what] += amount;
}

static inline uint64_t clamp_start(const struct an_timebins *tb, uint64_t t)
{
    return t < tb->origin ? tb->origin : t;  /* earlier than the first event: bin 0 */
}

void an_bins_add(struct an_timebins *tb, int what, uint64_t start, uint64_t end,
                 double amount)
{
    if (end < start)
        end = start;
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
    double sum = 0;
    for (int i = 0; i < AN_BINS; i++) {
        uint64_t lo = tb->origin + (uint64_t)i * tb->width, hi = lo + tb->width;
        if (hi <= start || lo >= end)
            continue;
        uint64_t s = start > lo ? start : lo, e = end < hi ? end : hi;
        sum += tb->bins[i].v[what] * (double)(e - s) / (double)tb->width;
    }
    return sum;
}
