/*
 * Busy time of one resource (a GPU): the length of the union of [start, end) intervals
 * added in any order, so that overlapping work (kernels on two streams, a copy beside a
 * kernel) counts once.
 *
 * Intervals that touch or overlap the last one added are merged on the spot, and ones that
 * come after everything so far are appended in order, so work that arrives roughly in time
 * order costs no sorting; the rest are merged by a sort whenever their number doubles.
 *
 * Memory is bounded: past 2 * keep disjoint busy periods (idle gaps between them), all but
 * the latest `keep` are settled into `retired_ns`, and `frontier` is where they end. An
 * interval that arrives later still, starting before the frontier, is clipped there and
 * its part before it counted in late/late_ns: the true busy time then lies in
 * [total, total + late_ns]. With the default keep (2^18, 8 MiB at most) that takes a record
 * arriving a quarter of a million idle gaps out of order.
 */
#ifndef GPUWATCH_GW_BUSY_H
#define GPUWATCH_GW_BUSY_H

#include <stddef.h>
#include <stdint.h>

struct gw_interval {
    uint64_t start, end;
};

struct gw_busy {
    struct gw_interval *items;
    size_t count, cap;
    size_t merged;      /* items[0, merged) are sorted and disjoint */
    uint64_t first;     /* earliest start, 0 before any interval */
    uint64_t last;      /* latest end */
    uint64_t added;     /* intervals added (empty ones included) */
    int failed;         /* memory ran out: the total is then a lower bound */
    size_t keep;        /* disjoint periods kept when settling; 0: GW_BUSY_KEEP */
    uint64_t retired_ns;  /* busy time settled before the frontier */
    uint64_t frontier;    /* end of the settled part, 0 before any */
    uint64_t late;        /* intervals that started before the frontier */
    uint64_t late_ns;     /* their length before it (not in the total) */
};

#define GW_BUSY_KEEP ((size_t)1 << 18)

/* Adds [start, end); empty or reversed intervals only count in `added`. */
void gw_busy_add(struct gw_busy *busy, uint64_t start, uint64_t end);
/* Length of the union of everything added so far, in the intervals' unit. */
uint64_t gw_busy_total(struct gw_busy *busy);
/* last - first: the span the intervals cover, gaps included (0 when none). */
uint64_t gw_busy_span(const struct gw_busy *busy);
void gw_busy_free(struct gw_busy *busy);

#endif
