/*
 * Events in file order -> the model in time order: host events (and NVTX) through one
 * reorder window, GPU records through another (CUPTI's buffers reach the file apart from
 * the threads' chunks), telling the model how far the host side has been seen.
 */
#ifndef GPUWATCH_ANALYZE_FEEDER_H
#define GPUWATCH_ANALYZE_FEEDER_H

#include "model.h"
#include "reorder.h"

/* Host chunks are flushed every 50 ms by default (GPUWATCH_FLUSH_MS up to 1 s): a window of
 * 250 ms covers the default's disorder, and grows (to the maximum, 2 s by default) when an
 * event arrives later than it; the cap bounds memory (64 B an event) whatever the event
 * rate. */
#define AN_FEEDER_WINDOW_NS 250000000ull
#define AN_FEEDER_MAX_WINDOW_NS 2000000000ull
#define AN_FEEDER_MAX_WAITING (1u << 20)

struct an_feeder {
    struct an_model *m;
    struct an_reorder *host, *gpu;
};

int an_feeder_init(struct an_feeder *f, struct an_model *m, uint64_t max_window_ns,
                   size_t max_waiting);
void an_feeder_push(struct an_feeder *f, const struct an_ev *ev);
/* Releases what waits, finishes the model and frees the reorders. */
void an_feeder_finish(struct an_feeder *f);
/* Late events and forced releases of both windows. */
uint64_t an_feeder_late(const struct an_feeder *f);

#endif
