/*
 * Host-only GPU idle (drains.c): which streams hold work not yet proven done, and when the
 * GPU was last proven idle. The state is drains.c's own: the model holds one, calls in
 * with each host call and reads the result (when the GPU was proven idle, the last work
 * issued); drains.c reaches none of the model's other parts but the history that explains
 * an idle interval and the totals it is added to.
 */
#ifndef GPUWATCH_ANALYZE_DRAINS_H
#define GPUWATCH_ANALYZE_DRAINS_H

#include <stddef.h>
#include <stdint.h>

#include "an_event.h"
#include "gw_map.h"

struct an_model;
struct an_history;

/* Host-only: which streams hold work not yet proven done. */
struct an_stream_state {
    uint64_t last_issue;         /* end of the latest call that issued work on it */
    uint64_t issue_epoch;        /* drains seen (any stream) when it last got work */
    int pending;                 /* work issued since its last drain */
    /* cuStreamWaitEvent: this stream's later work waits for stream dep_plus1 - 1's work
     * issued before dep_time (the event's record), so a drain of this one proves that */
    size_t dep_plus1;
    uint64_t dep_time;
};

struct an_drains {
    struct gw_map stream_index;  /* stream id -> index in streams */
    struct an_stream_state *streams;
    size_t nstreams, streams_cap;
    /* cache of the last lookup: NULL none (reset when streams moves) */
    struct an_stream_state *last_stream;
    uint64_t last_stream_id;
    size_t streams_pending;      /* how many hold work */
    uint64_t drained_at;         /* when the last stream was proven done (0: never) */
    uint64_t drain_epoch;        /* drains seen so far */
    uint64_t idle_until;         /* proven idle counted up to here: threads' proofs overlap */
    int ever_drained;
    int drain_assumed;           /* the last stream was taken as done by the two-drains rule */
    uint64_t proof_end;          /* latest end of the drains proving streams done, since the
                                    GPU was last proven idle */
    struct gw_map event_stream;  /* event handle -> stream index + 1 */
    struct gw_map event_time;    /* event handle -> time recorded */
};

void an_drains_call(struct an_drains *d, struct an_model *m, struct an_history *h,
                    const struct an_ev *ev);
/* Records were lost: every stream may hold work until a drain proves it done. */
void an_drains_forget(struct an_drains *d);
/* The end of the latest call that issued work on any stream (0: none). */
uint64_t an_drains_last_issue(const struct an_drains *d);
void an_drains_free(struct an_drains *d);

/* Work issued on stream s until `end`: the stream holds work now. */
static inline void an_stream_issued(struct an_drains *d, struct an_stream_state *s,
                                    uint64_t end)
{
    s->last_issue = end;
    s->issue_epoch = d->drain_epoch;
    if (!s->pending) {
        s->pending = 1;
        d->streams_pending++;
    }
}

/* an_drains_call for a launch (AN_LAUNCH) that does not drain (no AN_F_DRAINS): the common
 * case, work on the last stream looked up while some stream holds work (or the GPU was not
 * proven idle before this call), inline. */
static inline void an_drains_launch(struct an_drains *d, struct an_model *m,
                                    struct an_history *h, const struct an_ev *ev)
{
    struct an_stream_state *s = d->last_stream;
    if (s && d->last_stream_id == ev->stream &&
        (d->streams_pending || !d->ever_drained || ev->ts <= d->drained_at)) {
        an_stream_issued(d, s, ev->end);
        return;
    }
    an_drains_call(d, m, h, ev);
}

#endif
