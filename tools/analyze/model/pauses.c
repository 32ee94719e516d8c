#include "pauses.h"

#include <stdlib.h>

/* Bucket i holds lengths in [lower(i), lower(i + 1)): octave i / 8, eighth i % 8. */
static unsigned bucket_of(uint64_t ns)
{
    if (ns < 8)
        return (unsigned)ns;  /* octaves 0-2 are exact: buckets 0-7 hold 0-7 ns */
    unsigned octave = 63u - (unsigned)__builtin_clzll(ns);
    unsigned eighth = (unsigned)(ns >> (octave - 3)) & 7u;
    unsigned i = (octave - 2) * 8 + eighth;
    return i < AN_PAUSE_BUCKETS ? i : AN_PAUSE_BUCKETS - 1;
}

static uint64_t lower_of(unsigned i)
{
    if (i < 8)
        return i;
    unsigned octave = i / 8 + 2, eighth = i % 8;
    return (uint64_t)(8 + eighth) << (octave - 3);
}

void an_pauses_add(struct an_idle_lengths *lengths, uint64_t start, uint64_t ns,
                   uint64_t long_ns)
{
    unsigned i = bucket_of(ns);
    lengths->count[i]++;
    lengths->ns[i] += ns;
    if (ns < long_ns)
        return;
    if (lengths->nlongs == lengths->longs_cap) {
        size_t cap = lengths->longs_cap ? 2 * lengths->longs_cap : 64;
        struct an_idle_stretch *grown =
            cap <= AN_KEEP_LONG_STRETCHES ? realloc(lengths->longs, cap * sizeof *grown) : NULL;
        if (!grown) {
            lengths->longs_lost++;
            return;
        }
        lengths->longs = grown;
        lengths->longs_cap = cap;
    }
    lengths->longs[lengths->nlongs++] = (struct an_idle_stretch){start, ns};
}

uint64_t an_pause_threshold(const struct an_model *m)
{
    if (!m->steps.steady)
        return 0;
    uint64_t t = m->steps.median_ns * m->th.pause_steps;
    return t > m->th.pause_min_ns ? t : m->th.pause_min_ns;
}

/* The first bucket whose stretches are all pauses (AN_PAUSE_BUCKETS: none). */
static unsigned first_pause_bucket(const struct an_model *m)
{
    uint64_t threshold = an_pause_threshold(m);
    unsigned first = threshold ? bucket_of(threshold) : AN_PAUSE_BUCKETS;
    if (first < AN_PAUSE_BUCKETS && lower_of(first) < threshold)
        first++;  /* the threshold's own bucket holds shorter stretches too */
    return first;
}

static const struct an_idle_lengths *lengths_of(const struct an_model *m)
{
    return &m->input_lengths[m->gpu_timeline ? 1 : 0];
}

uint64_t an_pause_ns(const struct an_model *m, uint64_t *count)
{
    uint64_t ns = 0, n = 0;
    const struct an_idle_lengths *lengths = lengths_of(m);
    for (unsigned i = first_pause_bucket(m); i < AN_PAUSE_BUCKETS; i++) {
        ns += lengths->ns[i];
        n += lengths->count[i];
    }
    /* long waits this often are the input's rhythm (workers delivering in bursts) */
    if (n && m->steps.count / n < m->th.pause_every_min)
        ns = n = 0;
    if (count)
        *count = n;
    return ns;
}

uint64_t an_pause_steady_ns(const struct an_model *m, uint64_t *count)
{
    uint64_t n = 0, run = an_pause_ns(m, &n), ns = 0;
    const struct an_idle_lengths *lengths = lengths_of(m);
    if (!run || !m->steps.steady || lengths->longs_lost) {
        /* none; the steady state is the run; or not all of them placed */
        if (count)
            *count = n;
        return run;
    }
    unsigned first = first_pause_bucket(m);
    uint64_t shortest = first < AN_PAUSE_BUCKETS ? lower_of(first) : UINT64_MAX;
    n = 0;
    for (size_t i = 0; i < lengths->nlongs; i++) {
        const struct an_idle_stretch *s = &lengths->longs[i];
        if (s->ns >= shortest && s->start >= m->steady_start && s->start < m->steady_end) {
            ns += s->ns;
            n++;
        }
    }
    if (count)
        *count = n;
    return ns;
}
