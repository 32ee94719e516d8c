/* The run's phases: top-level NVTX ranges by name, their idle time by cause (phases.h). */
#include "phases.h"

#include <stdlib.h>
#include <string.h>

#include "model.h"

_Static_assert(AN_CAUSE_COUNT == 6, "phases.h sizes its idle arrays by the causes");

void an_phases_init(struct an_phase_state *st)
{
    memset(st, 0, sizeof *st);
    st->open = -1;
}

static int phase_of(struct an_phases *out, uint64_t name_id)
{
    for (size_t i = 0; i < out->count; i++)
        if (out->phase[i].name_id == name_id)
            return (int)i;
    if (out->count == AN_KEEP_PHASES)
        return -1;
    struct an_phase *p = &out->phase[out->count];
    memset(p, 0, sizeof *p);
    p->name_id = name_id;
    return (int)out->count++;
}

static void close_open(struct an_phase_state *st, struct an_phases *out, uint64_t end)
{
    if (st->open < 0)
        return;
    struct an_phase *p = &out->phase[st->open];
    p->count++;
    p->ns += end > st->open_start ? end - st->open_start : 0;
    if (st->n == st->cap && st->cap < AN_PHASE_SPANS_MAX) {
        size_t cap = st->cap ? st->cap * 2 : 64;
        struct an_phase_span *spans = realloc(st->spans, cap * sizeof *spans);
        if (spans) {
            st->spans = spans;
            st->cap = cap;
        }
    }
    if (st->n < st->cap)
        st->spans[st->n++] = (struct an_phase_span){st->open_start, end, (uint32_t)st->open};
    else
        out->spans_dropped++;
    st->open = -1;
}

void an_phases_range(struct an_phase_state *st, struct an_phases *out, const struct an_ev *ev)
{
    if (ev->kind != AN_RANGE_PUSH && ev->kind != AN_RANGE_POP)
        return;
    if (!st->have_tid) {
        if (ev->kind != AN_RANGE_PUSH)
            return;
        st->have_tid = 1;
        st->tid = ev->tid;
    }
    if (ev->tid != st->tid)
        return;
    an_phases_thread_event(st, ev);
    if (ev->kind == AN_RANGE_PUSH) {
        if (st->depth++ == 0) {
            st->open = phase_of(out, ev->bytes);
            st->open_start = ev->ts;
            if (st->open < 0)
                out->ranges_untold++;
        }
    } else if (st->depth > 0 && --st->depth == 0) {
        close_open(st, out, ev->ts);
    }
}

static void add(struct an_phases *out, uint32_t phase, int gpu, const uint64_t *ns,
                double share)
{
    double *idle = gpu ? out->phase[phase].idle_gpu_ns : out->phase[phase].idle_host_ns;
    for (int c = 0; c < AN_CAUSE_COUNT; c++)
        idle[c] += (double)ns[c] * share;
}

void an_phases_idle(const struct an_phase_state *st, struct an_phases *out, int gpu,
                    uint64_t start, uint64_t end, const uint64_t *ns)
{
    if (end <= start || (!st->n && st->open < 0))
        return;
    double len = (double)(end - start);
    /* the first closed range that ends after start (they are in time order, apart) */
    size_t lo = 0, hi = st->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (st->spans[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < st->n && st->spans[i].start < end; i++) {
        uint64_t a = st->spans[i].start > start ? st->spans[i].start : start;
        uint64_t b = st->spans[i].end < end ? st->spans[i].end : end;
        if (b > a)
            add(out, st->spans[i].phase, gpu, ns, (double)(b - a) / len);
    }
    if (st->open >= 0 && st->open_start < end) {
        uint64_t a = st->open_start > start ? st->open_start : start;
        add(out, (uint32_t)st->open, gpu, ns, (double)(end - a) / len);
    }
}

void an_phases_finish(struct an_phase_state *st, struct an_phases *out,
                      const char *(*resolve)(void *user, int what, uint64_t id), void *user)
{
    close_open(st, out, st->thread_last);
    for (size_t i = 0; i < out->count; i++) {
        const char *name = resolve ? resolve(user, 0, out->phase[i].name_id) : NULL;
        if (name) {
            strncpy(out->phase[i].name, name, sizeof out->phase[i].name - 1);
            out->phase[i].name[sizeof out->phase[i].name - 1] = 0;
        }
    }
}

void an_phases_free(struct an_phase_state *st)
{
    free(st->spans);
    an_phases_init(st);
}
