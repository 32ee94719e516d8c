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
/* Passes ev (copied) to the model in time order, releasing what is due. Inline: the
 * per-event path of the analysis. */
static inline void an_feeder_push(struct an_feeder *f, const struct an_ev *ev);
/* Releases what waits, finishes the model and frees the reorders. */
void an_feeder_finish(struct an_feeder *f);
/* Late events and forced releases of both windows. */
uint64_t an_feeder_late(const struct an_feeder *f);

static inline void an_feeder_push(struct an_feeder *f, const struct an_ev *ev)
{
    const struct an_ev *due;
    if (an_is_gpu(ev)) {
        struct an_reorder *r = f->gpu;
        if (!an_reorder_insert(r, 1ull << 63 | (uint64_t)ev->tid << 40 |
                                      (ev->stream & 0xFFFFFFFFFFull), ev)) {
            an_model_feed_gpu(f->m, ev);  /* out of memory: released at once */
            return;
        }
        while ((due = an_reorder_next(r, 0)) != NULL)
            an_model_feed_gpu(f->m, due);
    } else {
        struct an_reorder *r = f->host;
        if (!an_reorder_insert(r, ev->tid, ev)) {
            an_model_feed_host(f->m, ev);
            an_model_host_progress(f->m, ev->ts);
            return;
        }
        while ((due = an_reorder_next(r, 0)) != NULL) {
            an_model_feed_host(f->m, due);
            an_model_host_progress(f->m, due->ts);
        }
    }
}

#endif
