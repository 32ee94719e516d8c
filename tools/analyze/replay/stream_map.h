/*
 * A stream's clocks moved lazily (replay.c, run_op). A GPU operation moves its stream's
 * clock in every live world w by
 *     g[w] = max(g[w], h[w] + l) + d
 * where h is its call's thread clock when issued, and l (delay) and d (length) depend on
 * the world only through its class (an_world_set: the same group, the same remover set).
 * While one thread issues in its rhythm, h is the same for every operation (only its
 * lazy clocks move, which are in l), so a run of operations is one map per class,
 *     g[w] = max(g[w] + a, h[w] + b),
 * composed in a few steps per class and applied world by world only where a clock is read:
 * the per-world loop was half of a GPU record's replay. Exact: l, a and b are real
 * offsets, never below zero (an_rp_map_compose), and no sum wraps.
 */
#ifndef GPUWATCH_ANALYZE_STREAM_MAP_H
#define GPUWATCH_ANALYZE_STREAM_MAP_H

#include <stdint.h>
#include <string.h>

#include "replay.h"

struct an_rp_map {
    int on;
    uint64_t from;                   /* the operations' issuer (replay.c, op_from) */
    unsigned touched;                /* their changes: making[touched] holds the classes */
    size_t device;                   /* its kernel_end follows g (+ 1; 0: none) */
    uint64_t h[AN_WORLDS];           /* their calls' thread clocks, by slot */
    uint64_t a[AN_WORLDS], b[AN_WORLDS];  /* by class */
};

static inline void an_rp_map_start(struct an_rp_map *m, const struct an_world_set *in,
                                   unsigned nlive, uint64_t from, unsigned touched,
                                   size_t device, const uint64_t *h)
{
    m->on = 1;
    m->from = from;
    m->touched = touched;
    m->device = device;
    memcpy(m->h, h, nlive * sizeof *h);
    memset(m->a, 0, in->nclasses * sizeof *m->a);
    memset(m->b, 0, in->nclasses * sizeof *m->b);
}

/* One more operation: its delay off[remover set] + lat_adj[group] after its call's start,
 * its length dur_in[group]. (The delay is never below zero: off is the launch latency plus
 * a lazy offset, base less what the class's changes removed of it, and lat_adj takes away
 * at most that latency: replay.c, lazy clocks and run_op.) */
static inline void an_rp_map_compose(struct an_rp_map *m, const struct an_world_set *in,
                                     const uint64_t *off, const uint64_t *lat_adj,
                                     const uint64_t *dur_in)
{
    for (unsigned c = 0; c < in->nclasses; c++) {
        unsigned group = in->class_group[c];
        uint64_t l = off[in->class_set[c]] + lat_adj[group], d = dur_in[group];
        m->a[c] += d;
        m->b[c] = (m->b[c] > l ? m->b[c] : l) + d;
    }
}

/* One more operation whose length is dur in every class (work other than a copy), its
 * delay base less what each bit of the class's class_bits takes away: minus[k], a lazy
 * offset's removed time k, or (bit AN_RP_REMOVERS) the launch a graph removes. The same
 * composition as an_rp_map_compose, without its per-group arrays (they were a fifth of a
 * kernel record's replay). */
static inline void an_rp_map_compose_work(struct an_rp_map *m, const struct an_world_set *in,
                                          uint64_t base, const uint64_t *minus, uint64_t dur)
{
    for (unsigned c = 0; c < in->nclasses; c++) {
        unsigned bits = in->class_bits[c];
        uint64_t l = base;
        for (unsigned k = 0; k <= AN_RP_REMOVERS; k++)
            l -= (bits >> k) & 1u ? minus[k] : 0;
        m->a[c] += dur;
        m->b[c] = (m->b[c] > l ? m->b[c] : l) + dur;
    }
}

/* The map applied to g (and to kernel_end, which then equals it, where not NULL). */
static inline void an_rp_map_apply(const struct an_rp_map *m, const struct an_world_set *in,
                                   unsigned nlive, uint64_t *g, uint64_t *kernel_end)
{
    for (unsigned w = 0; w < nlive; w++) {
        unsigned c = in->class_of[w];
        uint64_t moved = g[w] + m->a[c], issued = m->h[w] + m->b[c];
        g[w] = moved > issued ? moved : issued;
    }
    if (kernel_end)
        memcpy(kernel_end, g, nlive * sizeof *g);
}

#endif
