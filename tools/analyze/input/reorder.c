/* Windowed k-way merge: FIFO rings, a binary heap of rings by head time.
 *
 * A source's records normally come in order. When one comes earlier than what its ring
 * already holds (a small disorder is sorted in, SOURCE_SORT_BACK deep), it starts a new
 * ring for that source: CUPTI hands its buffers over in any order, each one sorted, so a
 * source becomes a few sorted runs, merged by the heap like any other rings. Drained rings
 * that are no source's current one are reused.
 *
 * The per-event path (an in-order append to the source pushed last; releasing one head)
 * is inline in reorder.h; the rest is here. */
#include "reorder.h"

#include <stdlib.h>
#include <string.h>

#include "gw_map.h"

/* How far back a record that is out of order within its own source is sorted in (CUPTI
 * writes a stream's kernels and copies from separate buffers). */
#define SOURCE_SORT_BACK 64

struct an_reorder *an_reorder_new(uint64_t window_ns, uint64_t max_window_ns,
                                  size_t max_events, an_emit_fn emit, void *user)
{
    struct an_reorder *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->index = calloc(1, sizeof *r->index);
    if (!r->index) {
        free(r);
        return NULL;
    }
    r->window = window_ns < max_window_ns ? window_ns : max_window_ns;
    r->max_window = max_window_ns;
    r->stats.window_ns = r->window;
    r->max_events = max_events ? max_events : 1;
    r->emit = emit;
    r->user = user;
    r->none.mask = SIZE_MAX;
    r->last = &r->none;
    r->due = UINT64_MAX;
    return r;
}

static void set_due(struct an_reorder *r)
{
    r->due = r->heap_len ? r->heap[0].ts + r->window : UINT64_MAX;
}

static void heap_swap(struct an_reorder *r, size_t a, size_t b)
{
    struct an_reorder_heap_entry t = r->heap[a];
    r->heap[a] = r->heap[b];
    r->heap[b] = t;
    r->sources[r->heap[a].source].heap_pos = a;
    r->sources[r->heap[b].source].heap_pos = b;
}

static void sift_up(struct an_reorder *r, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (r->heap[parent].ts <= r->heap[i].ts)
            break;
        heap_swap(r, parent, i);
        i = parent;
    }
}

static void sift_down(struct an_reorder *r, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < r->heap_len && r->heap[l].ts < r->heap[m].ts)
            m = l;
        if (l + 1 < r->heap_len && r->heap[l + 1].ts < r->heap[m].ts)
            m = l + 1;
        if (m == i)
            return;
        heap_swap(r, i, m);
        i = m;
    }
}

/* an_reorder_next's slow paths. The head's source has a new, later head. */
void an_reorder_head_moved(struct an_reorder *r)
{
    sift_down(r, 0);
    set_due(r);
}

/* The head's source has nothing left waiting. */
void an_reorder_drained(struct an_reorder *r)
{
    size_t s = r->heap[0].source;
    struct an_reorder_source *src = &r->sources[s];
    src->heap_pos = SIZE_MAX;
    if (!src->current)
        r->spare[r->nspare++] = s;
    r->heap_len--;
    if (r->heap_len) {
        r->heap[0] = r->heap[r->heap_len];
        r->sources[r->heap[0].source].heap_pos = 0;
        sift_down(r, 0);
    }
    r->heap[r->heap_len].ts = UINT64_MAX;
    set_due(r);
}

/* An event older than one released before: the disorder is wider than the window. */
void an_reorder_late(struct an_reorder *r)
{
    r->stats.late++;
    if (r->window < r->max_window) {
        r->window = r->window * 2 < r->max_window ? r->window * 2 : r->max_window;
        r->stats.window_ns = r->window;
        set_due(r);
    }
}

/* Counts an event released at once, outside the window (out of memory). */
static int release_now(struct an_reorder *r, const struct an_ev *ev)
{
    if (ev->ts < r->released)
        an_reorder_late(r);
    else
        r->released = ev->ts;
    r->stats.emitted++;
    return 0;
}

/* A ring for a source: a spare one, or a new one. Returns its index or SIZE_MAX. */
static size_t new_ring(struct an_reorder *r, uint64_t key)
{
    size_t s;
    if (r->nspare) {
        s = r->spare[--r->nspare];
    } else {
        if (r->nsources == r->sources_cap) {
            size_t cap = r->sources_cap ? r->sources_cap * 2 : 16;
            size_t last = r->last != &r->none ? (size_t)(r->last - r->sources) : SIZE_MAX;
            struct an_reorder_source *grown = realloc(r->sources, cap * sizeof *grown);
            if (grown) {
                r->sources = grown;
                if (last != SIZE_MAX)
                    r->last = &r->sources[last];
            }
            struct an_reorder_heap_entry *heap = realloc(r->heap, (cap + 2) * sizeof *heap);
            if (heap) {
                r->heap = heap;
                r->heap[r->heap_len].ts = r->heap[r->heap_len + 1].ts = UINT64_MAX;
            }
            size_t *spare = realloc(r->spare, cap * sizeof *spare);
            if (spare)
                r->spare = spare;
            if (!grown || !heap || !spare)
                return SIZE_MAX;
            r->sources_cap = cap;
        }
        s = r->nsources++;
        memset(&r->sources[s], 0, sizeof r->sources[s]);
        r->sources[s].mask = SIZE_MAX;
        r->sources[s].heap_pos = SIZE_MAX;
        r->stats.sources = r->nsources;
    }
    r->sources[s].key = key;
    r->sources[s].current = 1;
    if (gw_map_put(r->index, key, s) != 0)
        return SIZE_MAX;
    r->last_key = key;
    r->last = &r->sources[s];
    return s;
}

static int find_source(struct an_reorder *r, uint64_t key, size_t *out)
{
    if (r->last != &r->none && r->last_key == key) {
        *out = (size_t)(r->last - r->sources);
        return 0;
    }
    uint64_t *slot = gw_map_get(r->index, key);
    size_t s = slot ? (size_t)*slot : new_ring(r, key);
    if (s == SIZE_MAX)
        return -1;
    r->last_key = key;
    r->last = &r->sources[s];
    *out = s;
    return 0;
}

static int grow_ring(struct an_reorder_source *src)
{
    size_t cap = src->ring ? (src->mask + 1) * 2 : 256;
    struct an_ev *ring = malloc(cap * sizeof *ring);
    if (!ring)
        return -1;
    for (size_t i = 0; i < src->count; i++)
        ring[i] = src->ring[(src->head + i) & src->mask];
    free(src->ring);
    src->ring = ring;
    src->mask = cap - 1;
    src->head = 0;
    return 0;
}

/* Every case an_reorder_insert does not take inline: another source, an event earlier than
 * its source's tail, an empty or full ring. */
int an_reorder_insert_slow(struct an_reorder *r, uint64_t key, const struct an_ev *ev)
{
    size_t s;
    if (find_source(r, key, &s) != 0)
        return release_now(r, ev);
    struct an_reorder_source *src = &r->sources[s];
    if (src->count > SOURCE_SORT_BACK &&
        src->ring[(src->head + src->count - SOURCE_SORT_BACK) & src->mask].ts > ev->ts) {
        /* earlier than this run can sort in: a new sorted run of the same source */
        src->current = 0;
        size_t fresh = new_ring(r, key);
        if (fresh == SIZE_MAX)
            return release_now(r, ev);
        s = fresh;
        src = &r->sources[s];
    }
    if ((!src->ring || src->count == src->mask + 1) && grow_ring(src) != 0)
        return release_now(r, ev);
    size_t mask = src->mask;
    /* insert, sorting back a little when this source itself is out of order */
    size_t at = src->count;
    while (at > 0 && src->count - at < SOURCE_SORT_BACK &&
           src->ring[(src->head + at - 1) & mask].ts > ev->ts) {
        src->ring[(src->head + at) & mask] = src->ring[(src->head + at - 1) & mask];
        at--;
    }
    src->ring[(src->head + at) & mask] = *ev;
    src->count++;
    src->tail_ts = src->ring[(src->head + src->count - 1) & mask].ts;
    r->waiting++;
    if (r->waiting > r->stats.max_waiting)
        r->stats.max_waiting = r->waiting;
    if (src->heap_pos == SIZE_MAX) {
        src->heap_pos = r->heap_len;
        r->heap[r->heap_len++] = (struct an_reorder_heap_entry){ev->ts, s};
        r->heap[r->heap_len + 1].ts = UINT64_MAX;
        sift_up(r, src->heap_pos);
        set_due(r);
    } else if (at == 0) {
        r->heap[src->heap_pos].ts = ev->ts;  /* a new, earlier head */
        sift_up(r, src->heap_pos);
        set_due(r);
    }
    if (ev->ts > r->newest)
        r->newest = ev->ts;
    return 1;
}

int an_reorder_push(struct an_reorder *r, uint64_t key, const struct an_ev *ev)
{
    if (!an_reorder_insert(r, key, ev)) {
        r->emit(r->user, ev);
        return -1;
    }
    /* the slot stays valid: nothing is pushed while the consumer runs */
    const struct an_ev *due;
    while ((due = an_reorder_next(r, 0)) != NULL)
        r->emit(r->user, due);
    return 0;
}

void an_reorder_flush(struct an_reorder *r)
{
    const struct an_ev *due;
    while ((due = an_reorder_next(r, 1)) != NULL)
        r->emit(r->user, due);
}

uint64_t an_reorder_released(const struct an_reorder *r)
{
    return r->released;
}

const struct an_reorder_stats *an_reorder_stats(const struct an_reorder *r)
{
    struct an_reorder *w = (struct an_reorder *)r;  /* (never a const object) */
    w->stats.pushed = r->stats.emitted + r->waiting;
    return &r->stats;
}

void an_reorder_free(struct an_reorder *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nsources; i++)
        free(r->sources[i].ring);
    free(r->sources);
    free(r->heap);
    free(r->spare);
    gw_map_free(r->index);
    free(r->index);
    free(r);
}
