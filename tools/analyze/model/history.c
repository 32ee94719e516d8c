/* Host history rings and the attribution of one GPU idle interval to causes. */
#include "history.h"

#include <stdlib.h>
#include <string.h>

/* How many waits or copies before an idle interval are looked at (they are sorted by start,
 * and a long one may begin well before the interval). */
#define LOOK_BACK 64

static void ring_init(struct an_ring *r, size_t elem, size_t max)
{
    memset(r, 0, sizeof *r);
    r->elem = elem;
    r->max = max ? max : 1;
}

static void ring_free(struct an_ring *r)
{
    free(r->data);
    r->data = NULL;
    r->cap = r->count = r->head = 0;
}

static inline void *ring_at(const struct an_ring *r, size_t i)
{
    return r->data + ((r->head + i) & (r->cap - 1)) * r->elem;
}

static void ring_pop_front(struct an_ring *r)
{
    if (r->count) {
        r->head = (r->head + 1) & (r->cap - 1);
        r->count--;
    }
}

static void ring_push(struct an_ring *r, const void *item)
{
    if (r->count == r->cap) {
        if (r->cap >= r->max) {
            ring_pop_front(r);
            r->dropped++;
        } else {
            size_t cap = r->cap ? r->cap * 2 : 64;
            unsigned char *data = malloc(cap * r->elem);
            if (!data) {
                ring_pop_front(r);
                r->dropped++;
            } else {
                for (size_t i = 0; i < r->count; i++)
                    memcpy(data + i * r->elem, ring_at(r, i), r->elem);
                free(r->data);
                r->data = data;
                r->cap = cap;
                r->head = 0;
            }
        }
    }
    memcpy(ring_at(r, r->count), item, r->elem);
    r->count++;
}

static inline const struct an_span *span_at(const struct an_ring *r, size_t i)
{
    return (const struct an_span *)ring_at(r, i);
}

/* First index whose start is > t (spans are pushed in start order). */
static size_t upper_bound(const struct an_ring *r, uint64_t t)
{
    size_t lo = 0, hi = r->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (span_at(r, mid)->start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

void an_history_init(struct an_history *h, uint64_t gap_min, size_t max_entries)
{
    memset(h, 0, sizeof *h);
    h->gap_min = gap_min;
    ring_init(&h->segs, sizeof(struct an_span), max_entries);
    ring_init(&h->h2d, sizeof(struct an_span), max_entries);
    ring_init(&h->waits, sizeof(struct an_span), max_entries);
}

void an_history_free(struct an_history *h)
{
    ring_free(&h->segs);
    ring_free(&h->h2d);
    ring_free(&h->waits);
}

uint64_t an_history_call(struct an_history *h, const struct an_ev *ev)
{
    uint32_t work = an_issues_work(ev) ? 1u : 0u;
    uint64_t work_ns = work ? ev->end - ev->ts : 0, gap = 0;
    if (h->have_cur && ev->ts <= h->cur.end + h->gap_min && !ev->after_hole) {
        an_history_extend(h, ev, work, work_ns);
    } else {
        if (h->have_cur) {
            ring_push(&h->segs, &h->cur);
            gap = ev->ts - h->cur.end;
        }
        h->cur = (struct an_span){.start = ev->ts, .end = ev->end, .work = work,
                                  .work_ns = work_ns, .type = ev->after_hole ? 1u : 0u};
        if (ev->after_hole)
            gap = 0;  /* not a gap: records are missing */
        h->have_cur = 1;
    }
    if (ev->kind == AN_COPY && (ev->flags & AN_F_BLOCKING) && ev->dir == GW_COPY_HTOD) {
        struct an_span s = {.start = ev->ts, .end = ev->end};
        ring_push(&h->h2d, &s);
    }
    int alloc_wait = (ev->kind == AN_FREE && (ev->flags & AN_F_DRAINS)) ||
                     (ev->kind == AN_ALLOC && (ev->flags & AN_F_ERROR));
    if (alloc_wait || (ev->flags & AN_F_DRAINS)) {
        struct an_span s = {.start = ev->ts, .end = ev->end,
                            .type = alloc_wait ? AN_WAIT_ALLOC : AN_WAIT_SYNC};
        ring_push(&h->waits, &s);
    }
    return gap;
}

/* Input time, work calls and (estimated) time inside them in [g0, g1), from the busy
 * segments and the gaps between. */
static void scan_segments(const struct an_history *h, const struct an_thresholds *th,
                          uint64_t g0, uint64_t g1, uint64_t host_now, uint64_t *input,
                          uint64_t *work, double *work_ns)
{
    const struct an_ring *r = &h->segs;
    size_t i = upper_bound(r, g0);
    if (i > 0)
        i--;
    int have_prev = 0;
    uint64_t prev_end = 0;
    size_t n = r->count + (h->have_cur ? 1 : 0);
    for (; i < n; i++) {
        const struct an_span *s = i < r->count ? span_at(r, i) : &h->cur;
        /* the gap before this segment; before the first one kept, it reaches back to g0 */
        uint64_t gap_start = have_prev ? prev_end : (s->start > g0 ? g0 : s->start);
        if (!s->type && s->start > gap_start && s->start - gap_start >= th->input_gap_ns)
            *input += overlap(gap_start, s->start, g0, g1);
        if (s->start <= g1 && s->end > g0) {
            *work += s->work;
            if (s->end > s->start)  /* spread evenly over the segment */
                *work_ns += (double)s->work_ns * (double)overlap(s->start, s->end, g0, g1) /
                            (double)(s->end - s->start);
        }
        have_prev = 1;
        prev_end = s->end;
        if (s->start >= g1)
            return;
    }
    /* a trailing gap: nothing since the last segment, as far as the host has been seen */
    uint64_t gap_start = have_prev ? prev_end : g0;
    uint64_t seen = host_now > g1 ? host_now : g1;
    if (gap_start < g1 && seen - gap_start >= th->input_gap_ns)
        *input += overlap(gap_start, g1, g0, g1);
}

void an_history_attribute(const struct an_history *h, const struct an_thresholds *th,
                          uint64_t g0, uint64_t g1, uint64_t host_now, struct an_split *out)
{
    memset(out, 0, sizeof *out);
    if (g1 <= g0)
        return;
    uint64_t len = g1 - g0, input = 0, work = 0, h2d = 0, alloc = 0;
    double work_ns = 0;
    scan_segments(h, th, g0, g1, host_now, &input, &work, &work_ns);

    size_t i = upper_bound(&h->h2d, g1);
    for (size_t k = 0; i > 0 && k < LOOK_BACK; k++, i--)
        h2d += overlap(span_at(&h->h2d, i - 1)->start, span_at(&h->h2d, i - 1)->end, g0, g1);

    /* the wait the host was in when the GPU ran dry (if any) decides what the rest is:
     * a synchronizing call (sync bubble) or cudaFree waiting for the device (allocator) */
    int drained_by = -1;
    i = upper_bound(&h->waits, g1);
    for (size_t k = 0; i > 0 && k < LOOK_BACK; k++, i--) {
        const struct an_span *w = span_at(&h->waits, i - 1);
        if (w->type == AN_WAIT_ALLOC)
            alloc += overlap(w->start, w->end, g0, g1);
        if (drained_by < 0 && w->start <= g0 + th->drain_slack_ns &&
            w->end + th->drain_slack_ns >= g0 && w->end <= g1 + th->drain_slack_ns)
            drained_by = (int)w->type;
    }

    uint64_t rest = len;
    out->ns[AN_CAUSE_H2D] = h2d < rest ? h2d : rest;
    rest -= out->ns[AN_CAUSE_H2D];
    out->ns[AN_CAUSE_INPUT] = input < rest ? input : rest;
    rest -= out->ns[AN_CAUSE_INPUT];
    out->ns[AN_CAUSE_ALLOC] = alloc < rest ? alloc : rest;
    rest -= out->ns[AN_CAUSE_ALLOC];
    /* launch-bound: the host issued work during a short gap, or spent most of a long one
     * inside calls that issue work */
    int launching = work && (len <= th->launch_gap_max_ns || work_ns * 2 >= (double)len);
    enum an_cause rest_cause = drained_by == AN_WAIT_SYNC    ? AN_CAUSE_SYNC
                               : drained_by == AN_WAIT_ALLOC ? AN_CAUSE_ALLOC
                               : launching                   ? AN_CAUSE_LAUNCH
                                                             : AN_CAUSE_OTHER;
    out->ns[rest_cause] += rest;
}

static void prune_ring(struct an_ring *r, uint64_t before)
{
    while (r->count && span_at(r, 0)->end < before)
        ring_pop_front(r);
}

void an_history_prune(struct an_history *h, uint64_t before)
{
    /* keep one segment before `before`: the gap after it may still matter */
    while (h->segs.count > 1 && span_at(&h->segs, 1)->end < before)
        ring_pop_front(&h->segs);
    prune_ring(&h->h2d, before);
    prune_ring(&h->waits, before);
}

uint64_t an_history_dropped(const struct an_history *h)
{
    return h->segs.dropped + h->h2d.dropped + h->waits.dropped;
}
