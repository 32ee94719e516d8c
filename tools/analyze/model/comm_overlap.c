/* Communication kernels against compute kernels (comm_overlap.h). */
#include "comm_overlap.h"

#include <stdlib.h>
#include <string.h>

int an_is_comm_kernel(const char *name)
{
    return name && (!strncmp(name, "ncclDevKernel", 13) || !strncmp(name, "ncclKernel", 10));
}

static int grow(struct an_comm_span **v, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 64;
    struct an_comm_span *grown = realloc(*v, n * sizeof *grown);
    if (!grown)
        return -1;
    *v = grown;
    *cap = n;
    return 0;
}

/* The communication interval's time that no compute interval covers. */
static uint64_t uncovered(const struct an_comm_overlap *c, struct an_comm_span s)
{
    uint64_t covered = 0;
    for (size_t i = 0; i < c->ncompute; i++) {
        uint64_t a = c->compute[i].start > s.start ? c->compute[i].start : s.start;
        uint64_t b = c->compute[i].end < s.end ? c->compute[i].end : s.end;
        if (b > a)
            covered += b - a;  /* (the intervals are disjoint: merged as they come) */
    }
    return s.end - s.start - covered;
}

/* Settles the pending intervals that end by `now` (all of them with now UINT64_MAX), then
 * drops the compute intervals no pending one, nor any later, can reach. */
static void settle(struct an_comm_overlap *c, uint64_t now)
{
    size_t kept = 0;
    for (size_t i = 0; i < c->npending; i++) {
        struct an_comm_span s = c->pending[i];
        if (s.end <= now) {
            c->comm_ns += s.end - s.start;
            c->exposed_ns += uncovered(c, s);
        } else {
            c->pending[kept++] = s;
        }
    }
    c->npending = kept;
    uint64_t reach = now;  /* the earliest time a pending or later interval covers */
    for (size_t i = 0; i < c->npending; i++)
        if (c->pending[i].start < reach)
            reach = c->pending[i].start;
    size_t first = 0;
    while (first < c->ncompute && c->compute[first].end <= reach)
        first++;
    if (first) {
        memmove(c->compute, c->compute + first, (c->ncompute - first) * sizeof *c->compute);
        c->ncompute -= first;
    }
}

void an_comm_feed_slow(struct an_comm_overlap *c, uint64_t start, uint64_t end, int comm)
{
    if (end < start)
        end = start;
    if (!c->kernels && c->recent.end > start &&  /* the first collective: what ran before */
        grow(&c->compute, &c->compute_cap, 1) == 0) {
        c->compute[0] = c->recent;
        c->ncompute = 1;
    }
    settle(c, start);
    if (comm) {
        c->kernels++;
        an_comm_sample_add(&c->samples, start, end);
        if (c->npending == AN_COMM_KEEP) {  /* (merge the oldest two: still bounded) */
            c->pending[1].start = c->pending[0].start;
            if (c->pending[0].end > c->pending[1].end)
                c->pending[1].end = c->pending[0].end;
            memmove(c->pending, c->pending + 1, (c->npending - 1) * sizeof *c->pending);
            c->npending--;
        }
        if (grow(&c->pending, &c->pending_cap, c->npending + 1) == 0)
            c->pending[c->npending++] = (struct an_comm_span){start, end};
        return;
    }
    struct an_comm_span *last = c->ncompute ? &c->compute[c->ncompute - 1] : NULL;
    if (last && start <= last->end) {
        if (end > last->end)
            last->end = end;
        return;
    }
    if (c->ncompute == AN_COMM_KEEP) {  /* (merge the oldest two: overlap counts high) */
        c->compute[1].start = c->compute[0].start;
        memmove(c->compute, c->compute + 1, (c->ncompute - 1) * sizeof *c->compute);
        c->ncompute--;
    }
    if (grow(&c->compute, &c->compute_cap, c->ncompute + 1) == 0)
        c->compute[c->ncompute++] = (struct an_comm_span){start, end};
}

void an_comm_finish(struct an_comm_overlap *c)
{
    settle(c, UINT64_MAX);
}

void an_comm_free(struct an_comm_overlap *c)
{
    free(c->pending);
    free(c->compute);
    an_comm_samples_free(&c->samples);
    memset(c, 0, sizeof *c);
}
