/*
 * Time-indexed sums of what the GPU side produces (busy time, idle time by cause, kernel
 * time), so that the steady-state share can be taken once the steady state is known: GPU
 * records reach the file long after the host calls of the same moment (CUPTI buffers), so
 * snapshots taken at host events would miss them. A fixed number of bins whose width
 * doubles (pairs merged) as the run grows: memory is constant, and the edges of a range
 * are exact to one bin (1/2048 of the run at worst).
 */
#ifndef GPUWATCH_ANALYZE_TIMEBINS_H
#define GPUWATCH_ANALYZE_TIMEBINS_H

#include <stdint.h>

#include "model.h"

#define AN_BINS 4096

/* What each bin sums (indices into an_bin.v). */
enum {
    AN_BIN_IDLE_GPU = 0,                          /* + cause */
    AN_BIN_IDLE_HOST = AN_BIN_IDLE_GPU + AN_CAUSE_COUNT,  /* + cause */
    AN_BIN_BUSY = AN_BIN_IDLE_HOST + AN_CAUSE_COUNT,
    AN_BIN_KERNEL_NS,
    AN_BIN_KERNELS,                               /* counted at the kernel's start */
    AN_BIN_VALUES,
};

struct an_bin {
    double v[AN_BIN_VALUES];
};

struct an_timebins {
    uint64_t origin, width;      /* bin i covers [origin + i*width, origin + (i+1)*width) */
    unsigned shift;              /* width = 1 << shift */
    int started;
    struct an_bin bins[AN_BINS];
};

/* Spreads `amount` of value `what` over [start, end) (a point when start == end). */
void an_bins_add(struct an_timebins *tb, int what, uint64_t start, uint64_t end,
                 double amount);
/* Adds `amount` of value `what` at time t (a point, the common and cheap case). */
void an_bins_point(struct an_timebins *tb, int what, uint64_t t, double amount);
/* The bin an_bins_point adds time t to (growing the bins as it would): the common case
 * inline, the rest in an_bins_slot_slow. */
struct an_bin *an_bins_slot_slow(struct an_timebins *tb, uint64_t t);
static inline struct an_bin *an_bins_slot(struct an_timebins *tb, uint64_t t)
{
    uint64_t i;
    if (tb->started && t >= tb->origin && (i = (t - tb->origin) >> tb->shift) < AN_BINS)
        return &tb->bins[i];
    return an_bins_slot_slow(tb, t);
}
/* Sum of value `what` within [start, end), partial bins pro rata. */
double an_bins_sum(const struct an_timebins *tb, int what, uint64_t start, uint64_t end);

#endif
