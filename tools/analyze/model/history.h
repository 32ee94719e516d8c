/*
 * What the host was doing, kept just long enough to explain GPU idle intervals that close
 * later: busy segments (calls closer than host_gap_min merged, with how many issued work),
 * blocking host-to-device copies, and calls that waited for the device. Bounded rings,
 * sorted by start time, pruned from the front as the GPU side moves on.
 */
#ifndef GPUWATCH_ANALYZE_HISTORY_H
#define GPUWATCH_ANALYZE_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "an_event.h"
#include "model.h"

struct an_ring {
    unsigned char *data;
    size_t elem, cap, head, count, max;
    uint64_t dropped;            /* oldest elements pushed out at the cap */
};

struct an_span {
    uint64_t start, end;
    uint32_t work;               /* segments: calls that issued GPU work */
    uint32_t type;               /* waits: AN_WAIT_*; segments: 1 when records were lost
                                    just before it (the gap before it is unknown) */
    uint64_t work_ns;            /* segments: host time inside those calls */
};

enum { AN_WAIT_SYNC = 0, AN_WAIT_ALLOC = 1 };

struct an_history {
    struct an_ring segs;         /* closed busy segments */
    struct an_span cur;          /* the open one */
    int have_cur;
    struct an_ring h2d;          /* blocking H2D copies */
    struct an_ring waits;        /* drains (AN_WAIT_SYNC) and allocator waits */
    uint64_t gap_min;
};

/* The time of an idle interval, split by cause. */
struct an_split {
    uint64_t ns[AN_CAUSE_COUNT];
};

void an_history_init(struct an_history *h, uint64_t gap_min, size_t max_entries);
void an_history_free(struct an_history *h);
/* Every host call, in start order. Returns the no-call gap this call ended (0 when it
 * came within gap_min of the previous ones). */
uint64_t an_history_call(struct an_history *h, const struct an_ev *ev);
/* Extends the open busy segment by a call that came within gap_min of it. */
static inline void an_history_extend(struct an_history *h, const struct an_ev *ev,
                                     uint32_t work, uint64_t work_ns)
{
    if (ev->end > h->cur.end)
        h->cur.end = ev->end;
    h->cur.work += work;
    h->cur.work_ns += work_ns;
}

/* an_history_call for a kernel launch (AN_LAUNCH) that does not drain (no AN_F_DRAINS) and
 * follows no hole: the common case, a call within gap_min of the open segment, inline. */
static inline uint64_t an_history_launch(struct an_history *h, const struct an_ev *ev)
{
    if (h->have_cur && ev->ts <= h->cur.end + h->gap_min) {
        an_history_extend(h, ev, 1, ev->end - ev->ts);
        return 0;
    }
    return an_history_call(h, ev);
}
/* Splits the idle interval [g0, g1) by what the host did meanwhile; host_now is how far the
 * host side has been seen (a trailing gap is at least that long). */
void an_history_attribute(const struct an_history *h, const struct an_thresholds *th,
                          uint64_t g0, uint64_t g1, uint64_t host_now, struct an_split *out);
/* Forgets what ended before `before`. */
void an_history_prune(struct an_history *h, uint64_t before);
uint64_t an_history_dropped(const struct an_history *h);

#endif
