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

#endif
