/*
 * Time order from file order, in bounded memory.
 *
 * A trace holds each thread's records in order, but chunks of different threads (and
 * CUPTI's buffers) are interleaved as the writer flushed them, so across sources the file
 * is only roughly in time order. Each source (a thread, a GPU stream) gets a FIFO; the
 * earliest head of all FIFOs is released once the newest time seen is the window past it
 * (or when more than max_events wait). An event older than one already released is still
 * released (next) and counted as late: consumers tolerate small disorder. The window starts
 * at window_ns and doubles, up to max_window_ns, at each late event: it stays as small (and
 * its events as cache-warm) as the trace's real disorder allows.
 */
#ifndef GPUWATCH_ANALYZE_REORDER_H
#define GPUWATCH_ANALYZE_REORDER_H

#include <stddef.h>
#include <stdint.h>

#include "an_event.h"

typedef void (*an_emit_fn)(void *user, const struct an_ev *ev);

struct an_reorder_stats {
    uint64_t pushed, emitted;
    uint64_t late;         /* emitted before an event released earlier */
    uint64_t forced;       /* released early because max_events were waiting */
    size_t max_waiting;    /* most events held at once */
    size_t sources;
    uint64_t window_ns;    /* the window in the end */
};

struct an_reorder;

/* NULL when out of memory. */
struct an_reorder *an_reorder_new(uint64_t window_ns, uint64_t max_window_ns,
                                  size_t max_events, an_emit_fn emit, void *user);
/* Returns 0, or -1 when out of memory (the event is then emitted at once). */
int an_reorder_push(struct an_reorder *r, uint64_t source, const struct an_ev *ev);
/* Releases everything still waiting, in time order. */
void an_reorder_flush(struct an_reorder *r);
/* Time of the latest event released (0 before any): everything earlier has been seen,
 * up to late events. */
uint64_t an_reorder_released(const struct an_reorder *r);
const struct an_reorder_stats *an_reorder_stats(const struct an_reorder *r);
void an_reorder_free(struct an_reorder *r);

/*
 * The same window without the callback, for a consumer that inlines the per-event path
 * (the feeder): an_reorder_insert, then an_reorder_next until it returns NULL. Pushing
 * with an_reorder_push is exactly that, emitting what an_reorder_next returns.
 *
 * The layout below is shown only for these inline functions; nothing else touches it.
 */
struct an_reorder_source {
    struct an_ev *ring;
    size_t mask;              /* ring capacity - 1 (a power of two); SIZE_MAX before any */
    size_t head, count;
    uint64_t tail_ts;         /* the latest time in the ring (it is sorted), when count */
    size_t heap_pos;          /* index in the heap, or SIZE_MAX when empty */
    uint64_t key;
    int current;              /* the ring its source key pushes to now */
};

/* The head time is kept in the heap itself: no pointer chase into a (cold) ring to compare.
 * Two entries of time UINT64_MAX always follow the heap's last: the root's children can be
 * compared without a length check. */
struct an_reorder_heap_entry {
    uint64_t ts;
    size_t source;
};

struct an_reorder {
    /* the per-event state */
    uint64_t last_key;        /* the source key pushed last ... */
    struct an_reorder_source *last;  /* ... and its current ring (none: one never taken) */
    uint64_t newest;          /* the latest time pushed */
    uint64_t due;             /* the root's time + the window (as the release test adds
                                 them); UINT64_MAX when nothing waits */
    size_t waiting, max_events;
    struct an_reorder_heap_entry *heap;  /* sources with events waiting, earliest head first */
    struct an_reorder_source *sources;
    uint64_t released;
    struct an_reorder_stats stats;  /* pushed is emitted + waiting, filled when asked */
    /* the rest */
    uint64_t window, max_window;
    size_t heap_len;
    an_emit_fn emit;
    void *user;
    size_t nsources, sources_cap;
    size_t *spare;            /* drained rings no key pushes to, for reuse */
    size_t nspare;
    struct gw_map *index;     /* source key -> index */
    struct an_reorder_source none;  /* r->last before the first push: never has room */
};

/* The out-of-line parts of an_reorder_insert and an_reorder_next. */
int an_reorder_insert_slow(struct an_reorder *r, uint64_t key, const struct an_ev *ev);
void an_reorder_head_moved(struct an_reorder *r);
void an_reorder_drained(struct an_reorder *r);
void an_reorder_late(struct an_reorder *r);

/* Takes a copy of *ev into the window: 1. When out of memory, 0: *ev is released at once
 * (counted as an_reorder_next would) and the caller passes it on itself. */
static inline int an_reorder_insert(struct an_reorder *r, uint64_t key, const struct an_ev *ev)
{
    /* The common case: the source pushed last, in order (no earlier than its ring's tail,
     * so at the end and no new run), into a ring neither empty nor full. */
    struct an_reorder_source *src = r->last;
    size_t n = src->count;
    if (r->last_key == key && n - 1 < src->mask && src->tail_ts <= ev->ts) {
        src->ring[(src->head + n) & src->mask] = *ev;
        src->count = n + 1;
        src->tail_ts = ev->ts;
        if (++r->waiting > r->stats.max_waiting)
            r->stats.max_waiting = r->waiting;
        if (ev->ts > r->newest)
            r->newest = ev->ts;
        return 1;
    }
    return an_reorder_insert_slow(r, key, ev);
}

/* Where an event for the source pushed last can be written in place, so that
 * an_reorder_insert_at takes it without a copy: the free slot after its ring's tail, when
 * that ring is neither empty nor full; NULL otherwise. */
static inline struct an_ev *an_reorder_free_slot(struct an_reorder *r)
{
    struct an_reorder_source *src = r->last;
    size_t n = src->count;
    return n - 1 < src->mask ? &src->ring[(src->head + n) & src->mask] : NULL;
}

/* An event already written at an_reorder_free_slot(r) (nothing inserted since): taken
 * where it lies, 1, when it is the source pushed last's (key) and in order, which is
 * exactly when an_reorder_insert would append it there; else 0, and the caller inserts a
 * copy of it (the slot may be overwritten by the insert). */
static inline int an_reorder_insert_at(struct an_reorder *r, uint64_t key,
                                       const struct an_ev *slot)
{
    struct an_reorder_source *src = r->last;
    if (r->last_key != key || src->tail_ts > slot->ts)
        return 0;
    src->count++;
    src->tail_ts = slot->ts;
    if (++r->waiting > r->stats.max_waiting)
        r->stats.max_waiting = r->waiting;
    if (slot->ts > r->newest)
        r->newest = slot->ts;
    return 1;
}

/* The next event due: the earliest head once the newest time seen is the window past it
 * (or when more than max_events wait), or with flush, the earliest of all; NULL when none.
 * The event stays valid until the next insert. */
static inline const struct an_ev *an_reorder_next(struct an_reorder *r, int flush)
{
    if (!flush && r->newest < r->due) {
        if (r->waiting <= r->max_events)
            return NULL;  /* (an empty window: nothing waits, due is UINT64_MAX) */
        r->stats.forced++;
    } else if (!r->heap_len) {
        return NULL;
    }
    struct an_reorder_heap_entry *heap = r->heap;
    struct an_reorder_source *src = &r->sources[heap[0].source];
    const struct an_ev *ev = &src->ring[src->head];
    src->head = (src->head + 1) & src->mask;
    r->waiting--;
    if (--src->count) {
        uint64_t ts = src->ring[src->head].ts;
        heap[0].ts = ts;
        r->due = ts + r->window;
        if (heap[1].ts < ts || heap[2].ts < ts)
            an_reorder_head_moved(r);  /* another source's head is earlier now */
    } else {
        an_reorder_drained(r);
    }
    if (ev->ts < r->released)
        an_reorder_late(r);
    else
        r->released = ev->ts;
    r->stats.emitted++;
    return ev;
}

#endif
