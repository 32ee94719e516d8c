/*
 * The model of one process: dispatches each event to the parts that care (host history,
 * host-only drains, GPU timeline, memory, transfers, step candidates) and, at the end,
 * derives the figures the rules read.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "pauses.h"
#include "totals.h"

/* Host history entries kept at most (each kind): about 24 MB in all at the cap. */
#define HISTORY_MAX (1u << 18)
/* How often (host events) the history is pruned. */

const char *an_cause_name(enum an_cause cause)
{
    static const char *const names[AN_CAUSE_COUNT] = {
        "input_pipeline", "h2d_stall", "sync_bubble", "launch_bound", "allocator", "other",
    };
    return (unsigned)cause < AN_CAUSE_COUNT ? names[cause] : "unknown";
}

/* Whether the run's GPU records are to be replayed: host events then wait for them. A
 * timeline with gaps (sampled) is replayed from the host's record. */
static int gpu_records_replayed(const struct gw_file_header *h, uint64_t records_seen)
{
    return (records_seen || h->cupti_status == GW_CUPTI_ACTIVE ||
            (h->feature_flags & GW_FEAT_GPU_ACTIVITY)) &&
           !(h->feature_flags & GW_FEAT_GPU_SAMPLED);
}

struct an_model *an_model_new(const struct an_thresholds *th, const struct gw_file_header *h)
{
    struct an_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->state = calloc(1, sizeof *m->state);
    if (!m->state) {
        free(m);
        return NULL;
    }
    m->th = th ? *th : AN_THRESHOLDS_DEFAULT;
    an_history_init(&m->state->hist, m->th.host_gap_min_ns, HISTORY_MAX);
    an_phases_init(&m->state->phases);
    /* (without a header GPU records may come) */
    int expect_gpu = !h || gpu_records_replayed(h, 0);
    an_replay_init(&m->state->replay, &m->th, expect_gpu,
                   h && (h->feature_flags & GW_FEAT_CPU_COUNT) ? h->cpus_usable : 0);
    if (h) {
        m->header = *h;
        m->has_header = 1;
        m->mem.capacity = h->device_total_mem;
        if (h->device_total_mem && h->device_free_at_start &&
            h->device_free_at_start <= h->device_total_mem)
            m->mem.others_at_start = h->device_total_mem - h->device_free_at_start;
    }
    return m;
}

/* Cumulative totals as of now, GPU periods still open included. */
static unsigned log2_bucket(uint64_t bytes)
{
    unsigned b = 0;
    while (bytes >>= 1)
        b++;
    return b;
}

static void step_candidate(struct an_model *m, const struct an_ev *ev)
{
    enum an_step_tier tier;
    uint64_t key, boundary = ev->ts, name = 0;
    int sub = 0;
    if (ev->kind == AN_RANGE_PUSH || ev->kind == AN_RANGE_START || ev->kind == AN_MARK) {
        if (!(ev->flags & AN_F_STEP_NAME))
            return;
        tier = AN_TIER_NVTX;
        key = ev->key;
        name = ev->bytes;
    } else if (ev->kind == AN_SYNC) {
        tier = AN_TIER_DRAIN;
        key = (uint64_t)ev->api << 48 ^ ev->stream;
        boundary = ev->end;
    } else if (ev->kind == AN_COPY && ev->dir == GW_COPY_DTOH && (ev->flags & AN_F_DRAINS)) {
        tier = AN_TIER_DRAIN;
        sub = 1;
        key = (uint64_t)ev->api << 48 ^ (uint64_t)log2_bucket(ev->bytes) << 40 ^ ev->stream;
        boundary = ev->end;
    } else if (ev->kind == AN_COPY && ev->dir == GW_COPY_HTOD) {
        tier = AN_TIER_H2D;
        key = (uint64_t)ev->api << 48 ^ (uint64_t)log2_bucket(ev->bytes) << 40 ^ ev->stream;
    } else if (ev->kind == AN_LAUNCH && (ev->flags & AN_F_KERNEL)) {
        tier = AN_TIER_KERNEL;
        key = ev->key;
        name = ev->key;
    } else {
        return;
    }
    key = an_step_key_of(key, tier);
    an_steps_occurrence(&m->state->steps, m, key, tier, sub, ev->api, name, boundary,
                        m->mem.live_total);
}

/* A copy call's figures (its GPU record's are record_copy_figures). */
static void call_copy_figures(struct an_model *m, const struct an_ev *ev)
{
    if (ev->dir >= AN_DIRS || ev->host_kind >= AN_HOST_KINDS)
        return;
    struct an_xfer *x = &m->xfer[ev->dir][ev->host_kind];
    uint64_t ns = ev->end - ev->ts;
    x->count++;
    x->bytes += ev->bytes;
    x->host_ns += ns;
    x->small += ev->bytes < (64u << 10);
    x->sync_api += !(ev->flags & AN_F_ASYNC_API);
    if (ev->flags & AN_F_BLOCKING) {
        x->blocking++;
        x->blocking_ns += ns;
        x->blocking_bytes += ev->bytes;
        if (ev->bytes >= m->th.h2d_min_bytes) {
            x->bulk++;
            x->bulk_ns += ns;
            x->bulk_bytes += ev->bytes;
        }
        an_note_bandwidth(m, ev->dir, ev->bytes, ns);  /* (a blocking call times the copy) */
    }
}

/* A copy record's figures (its call's are call_copy_figures). */
static void record_copy_figures(struct an_model *m, const struct an_ev *ev)
{
    if (ev->dir >= AN_DIRS || ev->host_kind >= AN_HOST_KINDS)
        return;
    struct an_xfer *x = &m->xfer[ev->dir][ev->host_kind];
    uint64_t ns = ev->end - ev->ts;
    x->gpu_count++;
    x->gpu_bytes += ev->bytes;
    x->gpu_ns += ns;
    an_note_bandwidth(m, ev->dir, ev->bytes, ns);
}

/* Every GPU record (the feeder inlines the kernels' path, an_model_feed_gpu_record).
 * A host-to-device copy from pageable memory is not counted as busy: the driver stages it
 * through a pinned buffer on the host, one chunk after another, and the GPU computes
 * nothing meanwhile; its span is an idle interval that the host history explains (the
 * host was blocked in the copy: an H2D stall). Its bytes and time still count as a
 * transfer. */
void an_model_feed_gpu(struct an_model *m, const struct an_ev *ev)
{
    an_note_time(m, ev);
    if (ev->kind == AN_GPU_LOST) {
        m->gpu_lost += ev->bytes;
        return;
    }
    m->gpu_records++;
    an_replay_gpu(&m->state->replay, ev);
    if (ev->kind == AN_GPU_KERNEL) {
        an_gpu_kernel_figures(m, ev);
    } else if (ev->kind == AN_GPU_COPY) {
        record_copy_figures(m, ev);
    }
    if (ev->kind == AN_GPU_COPY && ev->dir == GW_COPY_HTOD && ev->host_kind == GW_HOST_PAGEABLE)
        return;
    an_gpu_busy(m, ev);
}

void an_model_prune(struct an_model *m)
{
    struct an_model_state *st = m->state;
    uint64_t before = st->gpu.host_seen;
    const struct an_drains *d = &st->drains;
    if (d->ever_drained && d->streams_pending == 0 && d->drained_at < before)
        before = d->drained_at;
    if (gpu_records_replayed(&m->header, m->gpu_records)) {
        if (!m->gpu_records)
            return;  /* the GPU side has not started: everything may still be needed */
        uint64_t wait = an_gpu_oldest_wait(&st->gpu, before);
        if (wait < before)
            before = wait;
        for (size_t i = 0; i < m->ndev; i++)
            if (m->dev[i].open_end < before)
                before = m->dev[i].open_end;
    }
    if (before > m->th.input_gap_ns)
        an_history_prune(&st->hist, before - m->th.input_gap_ns);
}

const struct an_ev *an_model_uncaptured(const struct an_model_state *st, const struct an_ev *ev,
                                        struct an_ev *tmp)
{
    if (!an_issues_work(ev))
        return ev;
    for (unsigned i = 0; i < st->ncapturing; i++)
        if (st->capturing[i] == ev->stream) {
            *tmp = *ev;
            tmp->kind = AN_CALL;
            tmp->flags &= (uint8_t)(AN_F_ERROR | AN_F_OOM);
            return tmp;
        }
    return ev;
}

static void capture_edge(struct an_model_state *st, const struct an_ev *ev)
{
    for (unsigned i = 0; i < st->ncapturing; i++)
        if (st->capturing[i] == ev->stream) {
            if (!ev->dir)
                st->capturing[i] = st->capturing[--st->ncapturing];
            return;
        }
    if (ev->dir && st->ncapturing < sizeof st->capturing / sizeof st->capturing[0])
        st->capturing[st->ncapturing++] = ev->stream;
}

/* A sampled timeline's window opening or shutting: the time the records cover. */
static void gpu_window(struct an_model *m, const struct an_ev *ev)
{
    struct an_model_state *st = m->state;
    if (ev->dir && !st->window_opened) {
        st->window_opened = ev->ts ? ev->ts : 1;
        m->gpu_windows++;
    } else if (!ev->dir && st->window_opened) {
        m->gpu_window_ns += ev->ts > st->window_opened ? ev->ts - st->window_opened : 0;
        st->window_opened = 0;
    }
}

/* The thread's slot in the uploads table (model_internal.h) + 1, made where `make`; 0 where
 * it is full or the thread has none. */
static unsigned upload_slot(struct an_model_state *st, uint32_t tid, int make)
{
    for (unsigned i = 0; i < st->nupload; i++)
        if (st->upload[i].tid == tid)
            return i + 1;
    if (!make || st->nupload == AN_UPLOAD_THREADS)
        return 0;
    st->upload[st->nupload].tid = tid;
    return ++st->nupload;
}

/* An upload that did not block (an async copy, pinned memory): noted for the sync that may
 * wait for it. */
static void note_upload(struct an_model *m, const struct an_ev *ev)
{
    if (ev->kind != AN_COPY || ev->dir != GW_COPY_HTOD || (ev->flags & AN_F_BLOCKING))
        return;
    unsigned slot = upload_slot(m->state, ev->tid, 1);
    if (!slot)
        return;
    m->state->upload[slot - 1].stream = ev->stream + 1;
    m->state->upload[slot - 1].bytes = ev->bytes;
    m->state->upload[slot - 1].work_at = m->total.work_calls;
}

/* A sync (ev) of the stream its thread last uploaded to, no work issued since by any
 * thread: the upload's wait, made synchronous (PyTorch's x.cuda() from pinned memory
 * without non_blocking=True); the upload's bytes, 0 where it is none. The replay's
 * upload_wait (replay.h), which the pinned_async world takes away, asks the same of the
 * thread's own calls only; here any thread's work since counts, as the launches' path
 * keeps no state per thread, so the two differ where another thread launched between
 * (none counted here, the wait still taken away there). The model reads the calls as
 * they come, the replay with CUPTI after the GPU's records: it cannot ask the replay. */
static uint64_t upload_waited(struct an_model *m, const struct an_ev *ev)
{
    unsigned slot = upload_slot(m->state, ev->tid, 0);
    if (!slot)
        return 0;
    __typeof__(m->state->upload[0]) *u = &m->state->upload[slot - 1];
    int waits = u->stream && u->work_at == m->total.work_calls &&
                (u->stream == ev->stream + 1 || (ev->flags & AN_F_ALL_STREAMS));
    u->stream = 0;
    return waits ? u->bytes : 0;
}

/* Every other host event (kept out of line: the launches' path stays short). */
void an_model_feed_other(struct an_model *m, const struct an_ev *ev)
{
    struct an_model_state *st = m->state;
    if (ev->kind == AN_CPU_THREAD || ev->kind == AN_CPU_PROC) {
        an_cpu_sample(&st->cpu, ev);
        if (ev->kind == AN_CPU_THREAD)
            an_replay_host(&st->replay, ev);  /* (whether a thread's waits sleep) */
        return;
    }
    if (ev->kind == AN_GPU_WINDOW) {
        gpu_window(m, ev);
        return;
    }
    an_note_time(m, ev);
    if (ev->kind == AN_MEM_BLOCK) {  /* (no call: the host's stretches go on through it) */
        an_memory_block(m, ev);
        return;
    }
    if (ev->kind == AN_LOST || ev->after_hole)
        an_drains_forget(&st->drains);  /* what the lost records did is unknown */
    if (ev->kind == AN_LOST) {
        m->host_lost += ev->bytes;
        return;
    }
    if (ev->kind >= AN_RANGE_PUSH) {
        if (ev->kind <= AN_RANGE_END)
            an_replay_host(&st->replay, ev);  /* a step's start and end part the stretches */
        an_phases_range(&st->phases, &m->phases, ev);
        step_candidate(m, ev);
        an_steps_range(&st->steps, m, ev, an_step_key_of(ev->key, AN_TIER_NVTX));
        return;
    }
    if (ev->kind == AN_CAPTURE)
        capture_edge(st, ev);
    an_model_count_call(m, ev->api);
    uint64_t dur = ev->end - ev->ts;
    an_replay_host(&st->replay, ev);
    an_drains_call(&st->drains, m, &st->hist, ev);
    m->total.host_gap_ns += an_history_call(&st->hist, ev);
    if ((ev->flags & AN_F_DRAINS) && ev->api < GW_API_ID_LIMIT) {
        m->drains_by_api[ev->api]++;
        m->drain_ns_by_api[ev->api] += dur;
        m->scalar_d2h += ev->kind == AN_COPY && ev->dir == GW_COPY_DTOH && ev->bytes <= 64;
    }
    if (an_issues_work(ev)) {
        m->total.work_calls++;
        note_upload(m, ev);
    }
    switch (ev->kind) {
    case AN_LAUNCH:
        m->total.launches++;
        m->total.launch_ns += dur;
        m->total.graph_launches += an_is_graph_launch(ev);
        break;
    case AN_COPY:
        call_copy_figures(m, ev);
        m->total.uploads += ev->dir == GW_COPY_HTOD;
        m->total.d2h_blocked_bulk += ev->dir == GW_COPY_DTOH && (ev->flags & AN_F_BLOCKING) &&
                                     ev->host_kind == GW_HOST_PAGEABLE &&
                                     ev->bytes >= m->th.h2d_min_bytes;
        if ((ev->flags & AN_F_BLOCKING) && ev->dir == GW_COPY_HTOD) {
            m->total.h2d_blocked_ns += dur;
            m->total.h2d_blocked_calls++;
            m->total.h2d_blocked_bytes += ev->bytes;
        }
        if ((ev->flags & AN_F_DRAINS) && ev->dir == GW_COPY_DTOH) {
            m->total.sync_wait_ns += dur;
            m->total.syncs++;
        }
        break;
    case AN_SYNC:
        m->total.sync_wait_ns += dur;
        m->total.syncs++;
        uint64_t bytes = upload_waited(m, ev);
        if (bytes) {  /* an async upload, waited for right after: as if it blocked */
            m->total.h2d_blocked_ns += dur;
            m->total.h2d_blocked_calls++;
            m->total.h2d_blocked_bytes += bytes;
            m->total.h2d_waited_calls++;
        }
        break;
    case AN_ALLOC:
    case AN_FREE:
        m->total.allocs += ev->kind == AN_ALLOC;
        m->total.frees += ev->kind == AN_FREE;
        m->total.alloc_ns += dur;
        an_memory_call(m, ev);
        break;
    case AN_HOST_ALLOC:
    case AN_HOST_FREE:
    case AN_MEMINFO:
        an_memory_call(m, ev);
        break;
    default:
        break;
    }
    step_candidate(m, ev);
}

void an_model_feed_host(struct an_model *m, const struct an_ev *ev)
{
    struct an_ev plain;
    an_phases_thread_event(&m->state->phases, ev);
    if (m->state->ncapturing)
        ev = an_model_uncaptured(m->state, ev, &plain);
    if (ev->kind == AN_LAUNCH && !ev->after_hole && !(ev->flags & AN_F_DRAINS)) {
        an_note_time(m, ev);
        an_model_feed_launch(m, ev);
    } else {
        an_model_feed_other(m, ev);
    }
}

void an_model_host_progress(struct an_model *m, uint64_t ts)
{
    an_model_host_seen(m, ts);
}

void an_model_feed_host_released(struct an_model *m, const struct an_ev *ev)
{
    an_model_feed_released(m, ev);
}

/* The steady state's GPU-side figures, by time rather than by snapshot (GPU records are
 * read long after the host calls they belong with). */
static void steady_from_bins(struct an_model *m)
{
    const struct an_timebins *tb = &m->state->bins;
    uint64_t a = m->steady_start, b = m->steady_end;
    if (!m->steps.steady)
        return;  /* no steps: the steady state is the whole run, totals are exact */
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        m->steady.idle_gpu_ns[c] = an_u64(an_bins_sum(tb, AN_BIN_IDLE_GPU + c, a, b));
        m->steady.idle_host_ns[c] = an_u64(an_bins_sum(tb, AN_BIN_IDLE_HOST + c, a, b));
    }
    m->steady.gpu_busy_ns = an_u64(an_bins_sum(tb, AN_BIN_BUSY, a, b));
    m->steady.gpu_kernel_ns = an_u64(an_bins_sum(tb, AN_BIN_KERNEL_NS, a, b));
    m->steady.gpu_kernels = an_u64(an_bins_sum(tb, AN_BIN_KERNELS, a, b));
}

/* The run in equal slices of time from the time bins, before they go: the timeline the
 * figures come from (GPU records, or what drains proved). */
static void slices_from_bins(struct an_model *m)
{
    const struct an_timebins *tb = &m->state->bins;
    m->nover_time = 0;
    if (m->wall_ns < AN_TIME_SLICES)
        return;
    int idle_series = m->gpu_timeline ? AN_BIN_IDLE_GPU : AN_BIN_IDLE_HOST;
    for (size_t i = 0; i < AN_TIME_SLICES; i++) {
        struct an_time_slice *s = &m->over_time[i];
        s->start = m->first_ts + m->wall_ns * i / AN_TIME_SLICES;
        s->end = m->first_ts + m->wall_ns * (i + 1) / AN_TIME_SLICES;
        uint64_t idle = 0;
        for (int c = 0; c < AN_CAUSE_COUNT; c++) {
            s->idle_ns[c] = an_u64(an_bins_sum(tb, idle_series + c, s->start, s->end));
            idle += s->idle_ns[c];
        }
        uint64_t span = s->end - s->start;
        s->busy_ns = m->gpu_timeline ? an_u64(an_bins_sum(tb, AN_BIN_BUSY, s->start, s->end))
                                     : (span > idle ? span - idle : 0);
    }
    m->nover_time = AN_TIME_SLICES;
}

/* Whether the GPU records stop well before the host's GPU work does (thresholds.h,
 * gpu_cut_min_ns): then the idle time the records show after their end is not idle at all,
 * and the host evidence, kept for every trace, is what holds. */
static void find_cut(struct an_model *m)
{
    const struct an_model_state *st = m->state;
    for (size_t i = 0; i < m->ndev; i++)
        if (m->dev[i].records && m->dev[i].last > m->gpu_records_end)
            m->gpu_records_end = m->dev[i].last;
    uint64_t issued = an_drains_last_issue(&st->drains);
    if (issued > m->host_work_end)
        m->host_work_end = issued;
    if (!m->gpu_records || m->host_work_end <= m->gpu_records_end)
        return;
    uint64_t cut = m->host_work_end - m->gpu_records_end;
    if (cut >= m->th.gpu_cut_min_ns && (double)cut >= m->th.gpu_cut_share * (double)m->wall_ns)
        m->gpu_cut_ns = cut;
}

void an_model_finish(struct an_model *m)
{
    struct an_model_state *st = m->state;
    if (!st)
        return;
    st->gpu.host_seen = UINT64_MAX;
    an_gpu_close(&st->gpu, m, &st->hist, &st->bins);
    an_memory_finish(m);
    m->wall_ns = m->last_ts > m->first_ts ? m->last_ts - m->first_ts : 0;
    an_replay_finish(&st->replay, m->first_ts, m->wall_ns, &m->replay);
    m->kernel_time = st->replay.kernel_time;  /* (kept: an_model_seed_kernels) */
    memset(&st->replay.kernel_time, 0, sizeof st->replay.kernel_time);
    an_replay_free(&st->replay);
    m->gpu_sampled = (m->header.feature_flags & GW_FEAT_GPU_SAMPLED) != 0;
    if (st->window_opened && m->last_ts > st->window_opened)
        m->gpu_window_ns += m->last_ts - st->window_opened;
    if (m->gpu_sampled)  /* (the records are the windows') */
        m->gpu_window_busy_ns =
            an_u64(an_bins_sum(&st->bins, AN_BIN_BUSY, m->first_ts, m->last_ts));
    find_cut(m);
    if (m->gpu_sampled)
        m->gpu_cut_ns = 0;  /* (the gaps are the windows', said apart) */
    m->gpu_timeline = m->gpu_records > 0 && !m->gpu_cut_ns && !m->gpu_sampled;
    m->nlargest = st->nkeep[m->gpu_timeline];
    memcpy(m->largest, st->keep[m->gpu_timeline], sizeof m->largest);
    an_phases_finish(&st->phases, &m->phases, m->resolve, m->resolve_user);
    an_phases_free(&st->phases);
    an_steps_choose(m, &st->steps, &st->cpu);
    steady_from_bins(m);
    slices_from_bins(m);
    an_steps_top_kernels(m, &st->steps);
    m->nkernel_times = an_kernel_times_top(&st->kernel_times, m->kernel_times,
                                           AN_KEEP_KERNEL_TIMES, m->resolve, m->resolve_user);
    an_kernel_times_free(&st->kernel_times);
    an_comm_finish(&st->comm);
    m->comm_kernels = st->comm.kernels;
    m->comm_ns = st->comm.comm_ns;
    m->comm_exposed_ns = st->comm.exposed_ns;
    m->comm_samples = st->comm.samples;
    memset(&st->comm.samples, 0, sizeof st->comm.samples);
    an_comm_free(&st->comm);
    an_cpu_summarize(&st->cpu, m->steady_start, m->steady_end, m->header.pid, &m->cpu);
    an_cpu_free(&st->cpu);
    m->history_dropped = an_history_dropped(&st->hist);
    an_history_free(&st->hist);
    an_ptrmap_free(&st->live);
    an_ptrmap_free(&st->pinned);
    an_drains_free(&st->drains);
    an_steps_free(&st->steps);
    an_gpu_timeline_free(&st->gpu);
    free(st);
    m->state = NULL;
}

void an_model_set_resolver(struct an_model *m, const char *(*resolve)(void *, int, uint64_t),
                           const struct gw_stack *(*stack)(void *, uint64_t), void *user)
{
    m->resolve = resolve;
    m->stack = stack;
    m->resolve_user = user;
    if (m->state) {
        m->state->replay.shape_name = resolve;
        m->state->replay.shape_name_user = user;
    }
}

int an_model_seed_kernels(struct an_model *m, const struct an_model *earlier)
{
    const struct gw_map *from = &earlier->kernel_time;
    for (size_t i = 0; m->state && i < from->cap; i++)
        if (from->used[i] &&
            gw_map_put(&m->state->replay.kernel_time, from->keys[i], from->values[i]) != 0)
            return -1;
    return 0;
}

void an_model_set_cpus(struct an_model *m, unsigned cpus)
{
    struct an_replay_state *rp = &m->state->replay;
    int expect_gpu = rp->expect_gpu;
    an_replay_free(rp);
    an_replay_init(rp, &m->th, expect_gpu, cpus);
    rp->shape_name = m->resolve;
    rp->shape_name_user = m->resolve_user;
}

void an_model_set_host_copy(struct an_model *m, uint64_t bytes_per_s, uint64_t wake_ns)
{
    m->state->replay.host_copy_bps = bytes_per_s;
    m->state->replay.wake_ns = wake_ns;
}

int an_model_set_workers(struct an_model *m, const struct an_worker_budget *b)
{
    m->budget = *b;
    m->budgeted = 1;
    return an_replay_set_workers(&m->state->replay, b->replayed, b->speed);
}

void an_model_free(struct an_model *m)
{
    if (!m)
        return;
    if (m->state) {
        an_model_set_resolver(m, NULL, NULL, m->resolve_user);
        an_model_finish(m);
    }
    for (int i = 0; i < 2; i++)
        free(m->input_lengths[i].longs);
    an_comm_samples_free(&m->comm_samples);
    gw_map_free(&m->kernel_time);
    free(m);
}
