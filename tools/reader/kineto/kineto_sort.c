/* Records into time order with bounded memory. A Kineto file is not sorted: each thread's
 * and stream's events are mostly in order, but PyTorch writes the CPU side and the GPU
 * side apart, so a kernel may come megabytes after its launch. Records are kept KIN_WINDOW
 * at a time; a full window is sorted and spilled to an anonymous temporary file as one
 * run; at the end the runs are merged, KIN_READ_AHEAD records of each in memory. One
 * window (nothing spilled) never touches the disk. */
#include <stdlib.h>
#include <string.h>

#include "kineto.h"

#define KIN_WINDOW (1u << 16)       /* records sorted in memory: 64 Ki x 120 bytes, 8 MB */
#define KIN_READ_AHEAD 256          /* records of each run read at once while merging */

struct kin_cursor {
    struct kin_rec buf[KIN_READ_AHEAD];
    size_t len, at;
    uint64_t next, end;             /* record index in the spill file */
};

static int rec_before(const struct kin_rec *a, const struct kin_rec *b)
{
    if (a->ts != b->ts)
        return a->ts < b->ts;
    if (a->order != b->order)
        return a->order < b->order;
    if (a->tie != b->tie)
        return a->tie < b->tie;
    return a->seq < b->seq;
}

static int rec_cmp(const void *pa, const void *pb)
{
    const struct kin_rec *a = pa, *b = pb;
    return rec_before(a, b) ? -1 : rec_before(b, a) ? 1 : 0;
}

static int spill_run(struct kin_sort *s)
{
    if (!s->n)
        return 0;
    qsort(s->buf, s->n, sizeof *s->buf, rec_cmp);
    if (!s->spill && !(s->spill = tmpfile()))
        return -1;
    if (s->nruns + 1 >= s->runs_cap) {
        size_t cap = s->runs_cap ? s->runs_cap * 2 : 16;
        uint64_t *grown = realloc(s->run_start, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->run_start = grown;
        s->runs_cap = cap;
    }
    s->run_start[s->nruns++] = s->spilled;
    if (fwrite(s->buf, sizeof *s->buf, s->n, s->spill) != s->n)
        return -1;
    s->spilled += s->n;
    s->run_start[s->nruns] = s->spilled;
    s->n = 0;
    return 0;
}

int kin_sort_add(struct kin_sort *s, const struct kin_rec *rec)
{
    if (s->n == s->cap) {
        if (s->cap == KIN_WINDOW) {
            if (spill_run(s) != 0)
                return -1;
        } else {
            size_t cap = s->cap ? s->cap * 2 : 1024;
            struct kin_rec *grown = realloc(s->buf, cap * sizeof *grown);
            if (!grown)
                return -1;
            s->buf = grown;
            s->cap = cap;
        }
    }
    s->buf[s->n] = *rec;
    s->buf[s->n].seq = s->seq++;
    s->n++;
    return 0;
}

static int cursor_fill(struct kin_sort *s, struct kin_cursor *c)
{
    c->at = c->len = 0;
    if (c->next >= c->end)
        return 0;
    size_t want = c->end - c->next < KIN_READ_AHEAD ? (size_t)(c->end - c->next)
                                                     : KIN_READ_AHEAD;
    if (fseeko(s->spill, (off_t)(c->next * sizeof(struct kin_rec)), SEEK_SET) != 0)
        return -1;
    c->len = fread(c->buf, sizeof(struct kin_rec), want, s->spill);
    c->next += c->len;
    return c->len ? 1 : -1;
}

static const struct kin_rec *head_of(const struct kin_sort *s, size_t i)
{
    const struct kin_cursor *c = &s->cursors[s->heap[i]];
    return &c->buf[c->at];
}

static void sift_down(struct kin_sort *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < s->heap_len && rec_before(head_of(s, l), head_of(s, m)))
            m = l;
        if (l + 1 < s->heap_len && rec_before(head_of(s, l + 1), head_of(s, m)))
            m = l + 1;
        if (m == i)
            return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

/* All records are in: sort the last window; with runs spilled, start the merge. */
int kin_sort_finish(struct kin_sort *s)
{
    s->next = 0;
    if (!s->nruns) {
        qsort(s->buf, s->n, sizeof *s->buf, rec_cmp);
        return 0;
    }
    if (spill_run(s) != 0 || fflush(s->spill) != 0)
        return -1;
    free(s->buf);  /* the window's memory goes to the merge's read-ahead */
    s->buf = NULL;
    s->cap = 0;
    s->cursors = calloc(s->nruns, sizeof *s->cursors);
    s->heap = calloc(s->nruns, sizeof *s->heap);
    if (!s->cursors || !s->heap)
        return -1;
    s->heap_len = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        s->cursors[i].next = s->run_start[i];
        s->cursors[i].end = s->run_start[i + 1];
        if (cursor_fill(s, &s->cursors[i]) > 0)
            s->heap[s->heap_len++] = i;
    }
    for (size_t i = s->heap_len; i-- > 0;)
        sift_down(s, i);
    s->merging = 1;
    return 0;
}

/* The next record in time order: 1, or 0 when none is left. */
int kin_sort_next(struct kin_sort *s, struct kin_rec *out)
{
    if (!s->merging) {
        if (s->next >= s->n)
            return 0;
        *out = s->buf[s->next++];
        return 1;
    }
    if (!s->heap_len)
        return 0;
    struct kin_cursor *c = &s->cursors[s->heap[0]];
    *out = c->buf[c->at++];
    if (c->at == c->len && cursor_fill(s, c) <= 0)
        s->heap[0] = s->heap[--s->heap_len];
    if (s->heap_len)
        sift_down(s, 0);
    return 1;
}

void kin_sort_free(struct kin_sort *s)
{
    free(s->buf);
    free(s->run_start);
    free(s->cursors);
    free(s->heap);
    if (s->spill)
        fclose(s->spill);
    memset(s, 0, sizeof *s);
}
