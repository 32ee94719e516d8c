/*
 * GPU records' idle gaps (gpu_timeline.c): a gap between a device's busy periods is
 * explained from the host history, which may not have been read that far yet (the writer
 * flushes CUPTI's buffers apart from the threads' chunks), so gaps wait here, in order,
 * until the host side has been seen past their end. The state is gpu_timeline.c's own:
 * the model holds one, tells it how far the host has been seen, and reads how far back
 * its history must be kept (an_gpu_oldest_wait); gpu_timeline.c reaches none of the
 * model's other parts but its devices, the history that explains a gap, the time bins a
 * busy period is added to and the totals a gap is added to.
 */
#ifndef GPUWATCH_ANALYZE_GPU_TIMELINE_H
#define GPUWATCH_ANALYZE_GPU_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

struct an_device_busy;
struct an_history;
struct an_model;
struct an_timebins;

/* A GPU idle interval waiting for the host side to be seen up to its end. */
struct an_pending_gap {
    uint64_t start, end;
};

struct an_gpu_timeline {
    uint64_t host_seen;          /* host side released up to here */
    /* idle intervals not yet explained: a ring of pending_cap (a power of two) */
    struct an_pending_gap *pending;
    size_t npending, pending_head, pending_cap;
};

/* The device's busy period and its counts (m->dev, lumped past AN_MAX_DEVICES). */
struct an_device_busy *an_gpu_device(struct an_model *m, uint32_t ordinal);
/* The device's open busy period is over: its length into the device, the totals and bins. */
void an_gpu_close_period(struct an_model *m, struct an_timebins *bins,
                         struct an_device_busy *d);
/* The gap [start, end) between two busy periods: explained now when the host has been seen
 * past it and none waits before it, else it waits. */
void an_gpu_push_gap(struct an_gpu_timeline *g, struct an_model *m,
                     const struct an_history *h, uint64_t start, uint64_t end);
/* Explains the waiting gaps the host has been seen past (all: every one). */
void an_gpu_attribute_ready(struct an_gpu_timeline *g, struct an_model *m,
                            const struct an_history *h, int all);
/* End of the records: each device's open period closes and every gap is explained. */
void an_gpu_close(struct an_gpu_timeline *g, struct an_model *m, const struct an_history *h,
                  struct an_timebins *bins);
void an_gpu_timeline_free(struct an_gpu_timeline *g);

/* Whether the oldest waiting gap can be explained now. */
static inline int an_gpu_gap_ready(const struct an_gpu_timeline *g)
{
    return g->npending && g->pending[g->pending_head].end <= g->host_seen;
}

/* The host side has been seen up to ts (never back): the gaps that end by then are
 * explained. */
static inline void an_gpu_host_seen(struct an_gpu_timeline *g, struct an_model *m,
                                    const struct an_history *h, uint64_t ts)
{
    if (ts > g->host_seen)
        g->host_seen = ts;
    if (g->npending)
        an_gpu_attribute_ready(g, m, h, 0);
}

/* The start of the oldest gap still waiting (the history must reach back to it), or
 * `otherwise` when none waits. */
static inline uint64_t an_gpu_oldest_wait(const struct an_gpu_timeline *g, uint64_t otherwise)
{
    return g->npending ? g->pending[g->pending_head].start : otherwise;
}

#endif
