#include "gw_busy.h"

#include <stdlib.h>
#include <string.h>

static int by_start(const void *a, const void *b)
{
    const struct gw_interval *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* Sorts everything and merges overlapping or touching intervals in place. */
static void compact(struct gw_busy *b)
{
    if (b->count == b->merged)
        return;
    qsort(b->items, b->count, sizeof *b->items, by_start);
    size_t out = 0;
    for (size_t i = 1; i < b->count; i++) {
        struct gw_interval *cur = &b->items[out];
        if (b->items[i].start <= cur->end) {
            if (b->items[i].end > cur->end)
                cur->end = b->items[i].end;
        } else {
            b->items[++out] = b->items[i];
        }
    }
    b->count = b->merged = b->count ? out + 1 : 0;
}

/* Settles all but the latest `keep` periods (the list is compacted). */
static void retire(struct gw_busy *b, size_t keep)
{
    size_t n = b->count - keep;
    for (size_t i = 0; i < n; i++)
        b->retired_ns += b->items[i].end - b->items[i].start;
    b->frontier = b->items[n - 1].end;
    memmove(b->items, b->items + n, keep * sizeof *b->items);
    b->count = b->merged = keep;
}

void gw_busy_add(struct gw_busy *b, uint64_t start, uint64_t end)
{
    b->added++;
    if (end <= start)
        return;
    if (b->first == 0 && b->last == 0)
        b->first = start;
    if (start < b->first)
        b->first = start;
    if (end > b->last)
        b->last = end;
    if (start < b->frontier) {  /* its part before the frontier may overlap settled work */
        b->late++;
        b->late_ns += (end < b->frontier ? end : b->frontier) - start;
        if (end <= b->frontier)
            return;
        start = b->frontier;
    }
    if (b->count) {
        /* the common case: the next piece of work starts inside or right at the end of the
         * last one added (back-to-back kernels, a second stream's work inside it) */
        struct gw_interval *tail = &b->items[b->count - 1];
        if (start >= tail->start && start <= tail->end) {
            if (end > tail->end)
                tail->end = end;  /* the last item: a sorted, disjoint prefix stays so */
            return;
        }
    }
    if (b->count == b->cap) {
        size_t keep = b->keep ? b->keep : GW_BUSY_KEEP;
        if (b->count >= 2 * b->merged + 1024 || b->count >= 2 * keep)
            compact(b);
        if (b->count >= 2 * keep) {
            retire(b, keep);
            if (start < b->frontier) {  /* it reaches back into what was just settled */
                b->late++;
                b->late_ns += (end < b->frontier ? end : b->frontier) - start;
                if (end <= b->frontier)
                    return;
                start = b->frontier;
            }
        }
    }
    if (b->count == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        struct gw_interval *items = realloc(b->items, cap * sizeof *items);
        if (!items) {
            b->failed = 1;
            return;
        }
        b->items = items;
        b->cap = cap;
    }
    /* past everything so far, onto a sorted, disjoint list: it stays so */
    if (b->merged == b->count && (b->count == 0 || start > b->items[b->count - 1].end))
        b->merged++;
    b->items[b->count++] = (struct gw_interval){start, end};
}

uint64_t gw_busy_total(struct gw_busy *b)
{
    compact(b);
    uint64_t total = b->retired_ns;
    for (size_t i = 0; i < b->count; i++)
        total += b->items[i].end - b->items[i].start;
    return total;
}

uint64_t gw_busy_span(const struct gw_busy *b)
{
    return b->last > b->first ? b->last - b->first : 0;
}

void gw_busy_free(struct gw_busy *b)
{
    free(b->items);
    *b = (struct gw_busy){0};
}
