/*
 * The run's phases: the top-level NVTX ranges of the thread that opens the first one
 * (train / eval / checkpoint ...), summed by name, with the GPU's idle time by cause
 * inside them: what `--gpu-price` turns into the cost of each phase (issue 38).
 */
#ifndef GPUWATCH_ANALYZE_PHASES_H
#define GPUWATCH_ANALYZE_PHASES_H

#include <stddef.h>
#include <stdint.h>

#include "an_event.h"

#define AN_KEEP_PHASES 16
/* Ranges remembered to place idle time that is attributed late (the GPU side lags the
 * host's); past this, later ranges still count but their idle time is not split. */
#define AN_PHASE_SPANS_MAX (1u << 20)

struct an_phase {
    uint64_t name_id;            /* NVTX name string id */
    char name[64];               /* resolved at finish ("" unknown) */
    uint64_t count, ns;          /* ranges and their summed length */
    /* idle time inside them, by cause (enum an_cause), of either timeline (model.h) */
    double idle_gpu_ns[6], idle_host_ns[6];
};

struct an_phases {
    struct an_phase phase[AN_KEEP_PHASES];  /* in the order first opened */
    size_t count;
    uint64_t ranges_untold;      /* ranges of names past the table */
    uint64_t spans_dropped;      /* ranges whose idle time was not split (past the cap) */
};

struct an_phase_span {
    uint64_t start, end;
    uint32_t phase;
};

struct an_phase_state {
    int have_tid;
    uint32_t tid;
    unsigned depth;              /* of NVTX push ranges open on that thread */
    int open;                    /* phase index of the open top-level range, -1 none */
    uint64_t open_start;
    uint64_t thread_last;        /* the last event that thread wrote itself */
    struct an_phase_span *spans; /* closed ranges, in time order */
    size_t n, cap;
};

void an_phases_init(struct an_phase_state *st);
/* An NVTX event (AN_RANGE_PUSH / AN_RANGE_POP; others are ignored). */
void an_phases_range(struct an_phase_state *st, struct an_phases *out, const struct an_ev *ev);
/* An idle interval [start, end) split by cause (ns[c]): each phase gets the share of it
 * that overlaps its ranges. */
void an_phases_idle(const struct an_phase_state *st, struct an_phases *out, int gpu,
                    uint64_t start, uint64_t end, const uint64_t *ns);
/* An event the host wrote (any kind but CPU samples, which the sampler writes). */
static inline void an_phases_thread_event(struct an_phase_state *st, const struct an_ev *ev)
{
    if (st->have_tid && ev->tid == st->tid && ev->ts > st->thread_last &&
        ev->kind != AN_CPU_THREAD && ev->kind != AN_CPU_PROC && ev->kind != AN_GPU_WINDOW)
        st->thread_last = ev->ts;
}
/* Closes a range still open at the end of what was read, at the last event its own thread
 * wrote: the range lasted at least that long, and no longer is known. (The run's last
 * event can be later than the range's pop when the pop is still in the thread's unflushed
 * buffer: `serve` reads the trace mid-run, and its counters may not go down.) Names the
 * phases. */
void an_phases_finish(struct an_phase_state *st, struct an_phases *out,
                      const char *(*resolve)(void *user, int what, uint64_t id), void *user);
void an_phases_free(struct an_phase_state *st);

#endif
