/*
 * Host-only GPU idle: without the GPU's own timeline, idle time is what host calls prove.
 * A synchronizing call proves its streams had finished their work when it returned; if
 * every stream that was given work has been proven done, the GPU is idle from then until
 * the next call that issues work. A blocking host-to-device copy made while the GPU was
 * idle is itself idle compute time (an H2D stall). Everything else counts as possibly busy,
 * so the GPU busy figure of a host-only trace is an upper bound.
 *
 * One assumption: work on a stream that nothing ever synchronizes (a memset on the legacy
 * stream at start-up, while the loop syncs its own stream) is taken as done once two
 * drains of other streams happened after it: no op outlives two training steps.
 */
#include <string.h>
#include <stdlib.h>

#include "drains.h"
#include "history.h"
#include "model.h"
#include "totals.h"

static struct an_stream_state *stream_state(struct an_drains *d, uint64_t id)
{
    if (d->last_stream && d->last_stream_id == id)
        return d->last_stream;
    uint64_t *slot = gw_map_get(&d->stream_index, id);
    if (slot) {
        d->last_stream_id = id;
        d->last_stream = &d->streams[*slot];
        return d->last_stream;
    }
    if (d->nstreams == d->streams_cap) {
        size_t cap = d->streams_cap ? d->streams_cap * 2 : 16;
        struct an_stream_state *grown = realloc(d->streams, cap * sizeof *grown);
        if (!grown)
            return NULL;
        d->streams = grown;
        d->streams_cap = cap;
        d->last_stream = NULL;  /* it pointed into the old array */
    }
    if (gw_map_put(&d->stream_index, id, d->nstreams) != 0)
        return NULL;
    struct an_stream_state *s = &d->streams[d->nstreams++];
    memset(s, 0, sizeof *s);
    return s;
}

/* Stream s proven done by a drain that returned at `end`: the proof holds from then on
 * (calls are taken by start time, another thread's may end earlier). So is what s waited
 * for (cuStreamWaitEvent), when the other stream got no work after the event's record:
 * a side stream's copies or a DDP communication stream that only the default stream's
 * sync ever proves done. */
static void drain_one(struct an_drains *d, struct an_stream_state *s, uint64_t end)
{
    for (int depth = 0; s && depth < 8; depth++) {
        if (s->pending) {
            s->pending = 0;
            d->streams_pending--;
            if (end > d->proof_end)
                d->proof_end = end;
        }
        struct an_stream_state *dep = s->dep_plus1 ? &d->streams[s->dep_plus1 - 1] : NULL;
        s = dep && dep->pending && dep->last_issue <= s->dep_time ? dep : NULL;
    }
}

static int is_wait_api(unsigned api)
{
    return api == GW_API_cuStreamWaitEvent || api == GW_API_cuStreamWaitEvent_ptsz;
}

/* The stream an event was last recorded on (its index + 1; 0 unknown) and when. */
static size_t recorded_on(struct an_drains *d, uint64_t event, uint64_t *when)
{
    uint64_t *index = gw_map_get(&d->event_stream, event);
    uint64_t *at = gw_map_get(&d->event_time, event);
    if (!index || !at)
        return 0;
    *when = *at;
    return (size_t)*index;
}

/* cuStreamWaitEvent: the stream's later work waits for the event's stream up to the
 * record (the latest such wait is kept). */
static void on_wait(struct an_drains *d, const struct an_ev *ev)
{
    uint64_t when;
    size_t other = recorded_on(d, ev->key, &when);
    struct an_stream_state *s = stream_state(d, ev->stream);
    if (!other || !s || other - 1 == (size_t)(s - d->streams))
        return;
    s->dep_plus1 = other;
    s->dep_time = when;
}

static void drain_all(struct an_drains *d, uint64_t end)
{
    for (size_t i = 0; i < d->nstreams; i++)
        drain_one(d, &d->streams[i], end);
}

static int is_event_api(unsigned api)
{
    return api == GW_API_cuEventSynchronize || api == GW_API_cuEventQuery;
}

static int is_record_api(unsigned api)
{
    return api == GW_API_cuEventRecord || api == GW_API_cuEventRecord_ptsz;
}

static void on_drain(struct an_drains *d, struct an_model *m, const struct an_ev *ev)
{
    int had_work = d->streams_pending > 0;
    if ((ev->flags & AN_F_ALL_STREAMS) || (ev->kind == AN_SYNC && !is_event_api(ev->api) &&
                                           ev->stream == 0)) {
        /* a context sync, a synchronous copy, or the legacy stream (which waits for the
         * blocking streams) */
        drain_all(d, ev->end);
    } else if (is_event_api(ev->api)) {
        uint64_t when;
        size_t index = recorded_on(d, ev->key, &when);
        if (index && when >= d->streams[index - 1].last_issue)  /* recorded after its work */
            drain_one(d, &d->streams[index - 1], ev->end);
    } else {
        drain_one(d, stream_state(d, ev->stream), ev->end);
    }
    d->drain_epoch++;
    int assumed = 0;
    for (size_t i = 0; i < d->nstreams && d->streams_pending; i++)
        if (d->streams[i].pending && d->drain_epoch >= d->streams[i].issue_epoch + 2) {
            drain_one(d, &d->streams[i], ev->end);
            m->assumed_drains++;
            assumed = 1;
        }
    if (d->streams_pending)
        return;
    /* Idle from when the last stream was proven done: the latest end of the drains that
     * proved them (another thread's drain, started earlier, may end later). A drain of a
     * GPU already proven idle moves nothing (the time since counts: the host waiting for
     * the DataLoader between .item() and a synchronize made for timing), unless that was
     * only assumed (a later proof is surer). */
    uint64_t proven = d->proof_end > ev->end ? d->proof_end : ev->end;
    d->proof_end = 0;
    if (!d->ever_drained || had_work || d->drain_assumed) {
        m->total.drains += !d->ever_drained || had_work;
        if (!d->ever_drained || proven > d->drained_at)
            d->drained_at = proven;
        d->drain_assumed = assumed;
        d->ever_drained = 1;
    }
}

/* Proven idle [start, end), the part not counted yet: two threads' proofs may overlap (one
 * thread's drain ends after another's started), and the GPU is idle only once. Events
 * come by start time, so what lies before the last counted end is counted already. */
static void add_idle(struct an_drains *d, struct an_model *m, struct an_history *h,
                     uint64_t start, uint64_t end)
{
    if (start < d->idle_until)
        start = d->idle_until;
    if (start >= end)
        return;
    struct an_split split;
    an_history_attribute(h, &m->th, start, end, end, &split);
    an_totals_add_idle(m, 0, start, end, &split);
    d->idle_until = end;
}

void an_drains_call(struct an_drains *d, struct an_model *m, struct an_history *h,
                    const struct an_ev *ev)
{
    if (is_record_api(ev->api) && ev->kind == AN_CALL && !(ev->flags & AN_F_ERROR)) {
        struct an_stream_state *s = stream_state(d, ev->stream);
        if (s) {
            gw_map_put(&d->event_stream, ev->key, (uint64_t)(s - d->streams) + 1);
            gw_map_put(&d->event_time, ev->key, ev->ts);
        }
        return;
    }
    if (is_wait_api(ev->api) && ev->kind == AN_CALL && !(ev->flags & AN_F_ERROR)) {
        on_wait(d, ev);
        return;
    }
    if (an_issues_work(ev)) {
        int idle = d->ever_drained && d->streams_pending == 0;
        int blocking_h2d = ev->kind == AN_COPY && (ev->flags & AN_F_BLOCKING) &&
                           ev->dir == GW_COPY_HTOD;
        if (!(idle && blocking_h2d)) {
            if (idle && ev->ts > d->drained_at)
                add_idle(d, m, h, d->drained_at, ev->ts);
            struct an_stream_state *s = stream_state(d, ev->stream);
            if (s)
                an_stream_issued(d, s, ev->end);
        }
        /* else nothing else is queued: the GPU computes nothing while the host stages the
         * copy, so it stays idle until a call gives it work, from this thread or another
         * (which may come before the copy ends); the history, which keeps the blocking
         * copies, makes their part of that interval h2d_stall */
    }
    if (ev->flags & AN_F_DRAINS)
        on_drain(d, m, ev);
}

/* Lost records may have given any stream work: each one known is taken as holding work
 * until a drain proves it done again (a drain of one stream proves nothing of the
 * others). */
void an_drains_forget(struct an_drains *d)
{
    for (size_t i = 0; i < d->nstreams; i++) {
        d->streams[i].pending = 1;
        d->streams[i].issue_epoch = d->drain_epoch;
    }
    d->streams_pending = d->nstreams;
    d->proof_end = 0;
    d->ever_drained = 0;
}

uint64_t an_drains_last_issue(const struct an_drains *d)
{
    uint64_t last = 0;
    for (size_t i = 0; i < d->nstreams; i++)
        if (d->streams[i].last_issue > last)
            last = d->streams[i].last_issue;
    return last;
}

void an_drains_free(struct an_drains *d)
{
    gw_map_free(&d->stream_index);
    gw_map_free(&d->event_stream);
    gw_map_free(&d->event_time);
    free(d->streams);
}
