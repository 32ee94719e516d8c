/* The working state of one pass (model.c and its helpers); rules never see it. */
#ifndef GPUWATCH_ANALYZE_MODEL_INTERNAL_H
#define GPUWATCH_ANALYZE_MODEL_INTERNAL_H

#include "cpu_use.h"
#include "gw_map.h"
#include "history.h"
#include "comm_overlap.h"
#include "drains.h"
#include "gpu_timeline.h"
#include "kernel_times.h"
#include "model.h"
#include "ptrmap.h"
#include "reorder.h"
#include "replay.h"
#include "steps.h"
#include "timebins.h"

struct an_model_state {
    struct an_history hist;
    struct an_kernel_times kernel_times;
    struct an_comm_overlap comm;  /* collectives against compute (comm_overlap.h) */
    /* GPU records: idle gaps waiting for the host side to be seen past them, and how far
     * it has been (gpu_timeline.h) */
    struct an_gpu_timeline gpu;

    struct an_drains drains;     /* host-only drains (drains.h) */

    /* memory */
    struct an_ptrmap live;       /* device allocations: ptr/handle -> size, kind, time */
    struct an_ptrmap pinned;     /* pinned host memory */
    uint64_t last_meminfo_free;
    /* OOM-retry storm in progress */
    int in_storm;
    uint64_t storm_start, storm_request, storm_deadline, storm_frees, storm_freed;
    uint64_t storm_last;         /* end of the storm's latest memory call */

    struct an_step_finder steps;
    struct an_phase_state phases;  /* the open top-level NVTX range, the closed ones */
    struct an_cpu_samples cpu;
    struct an_timebins bins;     /* GPU-side figures by time, for the steady state */
    struct an_replay_state replay;  /* the what-if replay (replay.h) */
    /* per thread that uploads (the first AN_UPLOAD_THREADS), its latest upload that did
     * not block: its stream (+ 1; 0: taken), bytes, and the run's work_calls once it was
     * issued; a sync of that stream with no work issued since is its wait (x.cuda()
     * without non_blocking=True: the copy, then the stream's sync; model.c) */
#define AN_UPLOAD_THREADS 16
    struct { uint32_t tid; uint64_t stream, bytes, work_at; } upload[AN_UPLOAD_THREADS];
    unsigned nupload;
    /* streams being captured (AN_CAPTURE): a handful at most in real programs; past the
     * table's size, further captures are not told apart (their launches count as run) */
    uint64_t capturing[8];
    unsigned ncapturing;
    uint64_t window_opened;      /* when the sampled timeline's window opened (0: shut) */

    /* the longest idle intervals, host-only [0] and GPU records [1] */
    struct an_interval keep[2][AN_KEEP_INTERVALS];
    size_t nkeep[2];
};

/* The run's first start and latest end, for every event (host or GPU). */
static inline void an_note_time(struct an_model *m, const struct an_ev *ev)
{
    if (!m->first_ts || ev->ts < m->first_ts)
        m->first_ts = ev->ts;
    if (ev->end > m->last_ts)
        m->last_ts = ev->end;
}

/* A copy of `bytes` that took ns, a call's or a GPU record's: the best bandwidth seen in its
 * direction (copies of 256 KiB or more: smaller ones time their set-up, not the link). */
static inline void an_note_bandwidth(struct an_model *m, unsigned dir, uint64_t bytes,
                                     uint64_t ns)
{
    if (ns && bytes >= (256u << 10)) {
        uint64_t bw = an_u64((double)bytes * 1e9 / (double)ns);
        if (bw > m->best_bw[dir])
            m->best_bw[dir] = bw;
    }
}

/* A kernel record's own figures (at its start: the mean kernel time is all that is taken
 * from these). */
static inline void an_gpu_kernel_figures(struct an_model *m, const struct an_ev *ev)
{
    m->total.gpu_kernels++;
    m->total.gpu_kernel_ns += ev->end - ev->ts;
    struct an_kernel_sum *k = an_kernel_times_add(&m->state->kernel_times, ev->key,
                                                  ev->end - ev->ts);
    if (k && !k->kind)  /* a kernel's first record: a collective's, or compute */
        k->kind = (uint8_t)(1 + an_is_comm_kernel(m->resolve ? m->resolve(m->resolve_user, 1,
                                                                            ev->key) : NULL));
    an_comm_feed(&m->state->comm, ev->ts, ev->end, k && k->kind == 2);
    struct an_bin *bin = an_bins_slot(&m->state->bins, ev->ts);
    bin->v[AN_BIN_KERNEL_NS] += (double)(ev->end - ev->ts);
    bin->v[AN_BIN_KERNELS] += 1;
}

/* A record that occupied its device: the device's busy period grows, or closes and the
 * gap before this one waits to be explained. */
static inline void an_gpu_busy(struct an_model *m, const struct an_ev *ev)
{
    struct an_device_busy *d = m->ndev && m->dev[0].ordinal == (int32_t)ev->tid
                                   ? &m->dev[0]
                                   : an_gpu_device(m, ev->tid);
    if (d->records++ == 0) {
        d->first = d->open_start = ev->ts;
        d->open_end = ev->end;
    } else if (ev->after_hole && ev->ts > d->open_end) {
        /* records were lost: the time between is unknown, not idle */
        an_gpu_close_period(m, &m->state->bins, d);
        d->open_start = ev->ts;
        d->open_end = ev->end;
    } else if (ev->ts <= d->open_end) {
        if (ev->ts < d->open_start)
            m->late_events++;  /* belongs to a closed period: its time may count twice */
        if (ev->end > d->open_end)
            d->open_end = ev->end;
    } else {
        an_gpu_close_period(m, &m->state->bins, d);
        an_gpu_push_gap(&m->state->gpu, m, &m->state->hist, d->open_end, ev->ts);
        d->open_start = ev->ts;
        d->open_end = ev->end;
    }
    if (ev->end > d->last)
        d->last = ev->end;
    if (an_gpu_gap_ready(&m->state->gpu))
        an_gpu_attribute_ready(&m->state->gpu, m, &m->state->hist, 0);
}

/* an_model_feed_gpu with a kernel record's path inline (the feeder's release loop). */
static inline void an_model_feed_gpu_record(struct an_model *m, const struct an_ev *ev)
{
    if (ev->kind != AN_GPU_KERNEL) {
        an_model_feed_gpu(m, ev);
        return;
    }
    an_note_time(m, ev);
    m->gpu_records++;
    an_replay_gpu(&m->state->replay, ev);
    an_gpu_kernel_figures(m, ev);
    an_gpu_busy(m, ev);
}

/* memory_model.c */
void an_memory_call(struct an_model *m, const struct an_ev *ev);
/* memory_model.c: a caching allocator's block (AN_MEM_BLOCK), held as an allocation is. */
void an_memory_block(struct an_model *m, const struct an_ev *ev);
void an_memory_finish(struct an_model *m);

/* alloc_sites.c: groups the live allocations by call stack into m->mem.site (at finish). */
void an_alloc_sites(struct an_model *m);


/* model.c: the host event path. How often (host events) the history is pruned. */
#define PRUNE_EVERY 1024
void an_model_prune(struct an_model *m);
/* Every host event but the common launch (out of line: the launches' path stays short),
 * its time noted (an_note_time) but for CPU samples: the writer takes them, not the
 * program, and they do not make the run longer. */
__attribute__((noinline)) void an_model_feed_other(struct an_model *m, const struct an_ev *ev);

/* Counts one host call (not NVTX, not LOST), pruning the history every PRUNE_EVERY. */
static inline void an_model_count_call(struct an_model *m, uint16_t api)
{
    m->host_calls++;
    m->calls_by_api[api < GW_API_ID_LIMIT ? api : 0]++;
    m->total.calls++;
    if ((m->host_calls & (PRUNE_EVERY - 1)) == 0)
        an_model_prune(m);
}

/* A launch that does not drain and follows no hole, most of a trace: exactly what the
 * general path (an_model_feed_other) does with it, in the same order, with the common cases
 * of the drains, the history and the step candidate inline. */
static inline void an_model_feed_launch(struct an_model *m, const struct an_ev *ev)
{
    struct an_model_state *st = m->state;
    an_model_count_call(m, ev->api);
    uint64_t dur = ev->end - ev->ts;
    an_replay_host(&st->replay, ev);
    an_drains_launch(&st->drains, m, &st->hist, ev);
    m->total.host_gap_ns += an_history_launch(&st->hist, ev);
    m->total.work_calls++;
    m->total.launches++;
    m->total.launch_ns += dur;
    m->total.graph_launches += an_is_graph_launch(ev);
    if (ev->flags & AN_F_KERNEL)
        an_steps_kernel(&st->steps, m, ev->key, ev->api, ev->ts, m->mem.live_total);
}

/* an_model_host_progress */
static inline void an_model_host_seen(struct an_model *m, uint64_t ts)
{
    an_gpu_host_seen(&m->state->gpu, m, &m->state->hist, ts);
}

/* A call that issues work on a stream being captured issues none: it is host time only
 * (an_model_capture). Returns ev, or tmp holding it as a plain call. */
const struct an_ev *an_model_uncaptured(const struct an_model_state *st, const struct an_ev *ev,
                                        struct an_ev *tmp);

/* an_model_feed_host_released, inline: the feeder's path for each host event released. */
static inline void an_model_feed_released(struct an_model *m, const struct an_ev *ev)
{
    struct an_ev plain;
    if (__builtin_expect(m->state->ncapturing != 0, 0))
        ev = an_model_uncaptured(m->state, ev, &plain);
    if (ev->kind == AN_LAUNCH && !ev->after_hole && !(ev->flags & AN_F_DRAINS)) {
        an_note_time(m, ev);
        an_model_feed_launch(m, ev);
    } else {
        an_model_feed_other(m, ev);  /* (notes the time itself) */
    }
    an_model_host_seen(m, ev->ts);
}

#endif
