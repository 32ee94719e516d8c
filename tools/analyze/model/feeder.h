/*
 * Events in file order -> the model in time order: host events (and NVTX) through one
 * reorder window, GPU records through another (CUPTI's buffers reach the file apart from
 * the threads' chunks), telling the model how far the host side has been seen.
 */
#ifndef GPUWATCH_ANALYZE_FEEDER_H
#define GPUWATCH_ANALYZE_FEEDER_H

#include "model.h"
#include "model_internal.h"
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
    /* an_feeder_slot: the reorder pushed last, and the free slot of its ring pushed last
     * that was handed out (NULL: none, the scratch event was) */
    struct an_reorder *slot_r;
    struct an_ev *ring_slot;
    struct an_ev scratch;
};

int an_feeder_init(struct an_feeder *f, struct an_model *m, uint64_t max_window_ns,
                   size_t max_waiting);
/* Passes ev (copied) to the model in time order, releasing what is due. Inline: the
 * per-event path of the analysis. */
static inline void an_feeder_push(struct an_feeder *f, const struct an_ev *ev);
/* Where to write the next event (an_event_convert) before an_feeder_push_slot: in place in
 * the reorder window when it can be, so that the common case takes it without a copy (a
 * copy right after the conversion's narrow stores stalls on store forwarding). Valid until
 * the next push; nothing happens when it is not pushed. */
static inline struct an_ev *an_feeder_slot(struct an_feeder *f);
/* an_feeder_push of the event written at an_feeder_slot(f). */
static inline void an_feeder_push_slot(struct an_feeder *f, struct an_ev *ev);
/* Releases what waits, finishes the model and frees the reorders. */
void an_feeder_finish(struct an_feeder *f);
/* Late events and forced releases of both windows. */
uint64_t an_feeder_late(const struct an_feeder *f);

static inline uint64_t an_feeder_gpu_key(const struct an_ev *ev)
{
    return 1ull << 63 | (uint64_t)ev->tid << 40 | (ev->stream & 0xFFFFFFFFFFull);
}

/* What is due after an insert into r. */
static inline void an_feeder_release_gpu(struct an_feeder *f, struct an_reorder *r)
{
    const struct an_ev *due;
    while ((due = an_reorder_next(r, 0)) != NULL)
        an_model_feed_gpu_record(f->m, due);
}

static inline void an_feeder_release_host(struct an_feeder *f, struct an_reorder *r)
{
    const struct an_ev *due;
    while ((due = an_reorder_next(r, 0)) != NULL)
        an_model_feed_released(f->m, due);
}

static inline void an_feeder_push(struct an_feeder *f, const struct an_ev *ev)
{
    if (an_is_gpu(ev)) {
        struct an_reorder *r = f->gpu;
        f->slot_r = r;
        if (!an_reorder_insert(r, an_feeder_gpu_key(ev), ev)) {
            an_model_feed_gpu(f->m, ev);  /* out of memory: released at once */
            return;
        }
        an_feeder_release_gpu(f, r);
    } else {
        struct an_reorder *r = f->host;
        f->slot_r = r;
        if (!an_reorder_insert(r, ev->tid, ev)) {
            an_model_feed_host_released(f->m, ev);
            return;
        }
        an_feeder_release_host(f, r);
    }
}

static inline struct an_ev *an_feeder_slot(struct an_feeder *f)
{
    f->ring_slot = an_reorder_free_slot(f->slot_r);
    return f->ring_slot ? f->ring_slot : &f->scratch;
}

static inline void an_feeder_push_slot(struct an_feeder *f, struct an_ev *ev)
{
    if (an_is_gpu(ev)) {
        struct an_reorder *r = f->gpu;
        uint64_t key = an_feeder_gpu_key(ev);
        if (ev != f->ring_slot || r != f->slot_r || !an_reorder_insert_at(r, key, ev)) {
            struct an_ev copy = *ev;  /* (the insert may write where ev lies) */
            f->slot_r = r;
            if (!an_reorder_insert(r, key, &copy)) {
                an_model_feed_gpu(f->m, &copy);  /* out of memory: released at once */
                return;
            }
        }
        an_feeder_release_gpu(f, r);
    } else {
        struct an_reorder *r = f->host;
        if (ev != f->ring_slot || r != f->slot_r || !an_reorder_insert_at(r, ev->tid, ev)) {
            struct an_ev copy = *ev;
            f->slot_r = r;
            if (!an_reorder_insert(r, ev->tid, &copy)) {
                an_model_feed_host_released(f->m, &copy);
                return;
            }
        }
        an_feeder_release_host(f, r);
    }
}

#endif
