/*
 * The changes the advice proposes, as transformations of the replayed graph. Each case
 * says what the change removes and what it leaves, in the replay's terms; the rule that
 * words the advice (rule_<id>.c) reads the replayed difference.
 */
#include "whatif.h"

#include "gpuwatch/trace_format.h"
#include "trace_reader.h"

const char *an_whatif_name(enum an_whatif w)
{
    static const char *const names[AN_WI_COUNT] = {
        "as_measured", "no_sync", "input_workers", "pinned_async", "cuda_graphs", "no_churn",
    };
    return (unsigned)w < AN_WI_COUNT ? names[w] : "unknown";
}

int an_wi_issues(const struct an_ev *ev)
{
    if (ev->flags & AN_F_ERROR)
        return 0;
    if (ev->kind == AN_LAUNCH)
        return ev->api != GW_API_cuLaunchHostFunc && ev->api != GW_API_cuLaunchHostFunc_ptsz;
    if (ev->kind == AN_COPY)
        return ev->dir != GW_COPY_HTOH;
    return ev->kind == AN_SET;
}

int an_wi_waits_measured(const struct an_ev *ev)
{
    return (ev->flags & (AN_F_DRAINS | AN_F_BLOCKING)) != 0;
}

/* A user's synchronization: what "take the sync out of the step" removes (cuMemFree's
 * wait is the allocator's, a blocking upload the copy advice's). */
static int user_sync(const struct an_ev *ev)
{
    return ev->kind == AN_SYNC || (ev->kind == AN_COPY && ev->dir == GW_COPY_DTOH);
}

static int blocking_upload(const struct an_ev *ev)
{
    return ev->kind == AN_COPY && ev->dir == GW_COPY_HTOD && (ev->flags & AN_F_BLOCKING);
}

static int allocator_call(const struct an_ev *ev)
{
    return ev->kind == AN_ALLOC || ev->kind == AN_FREE;
}

static int kernel_launch(const struct an_ev *ev)
{
    return ev->kind == AN_LAUNCH && (ev->flags & AN_F_KERNEL);
}

/*
 * DataLoader workers: a stretch with no call of input_gap_ns or more (thresholds.h) is the
 * training thread loading a batch itself. With N workers, batch k is loaded by worker
 * k mod N as soon as it is free and the loop has taken batch k - N x prefetch (PyTorch's
 * prefetch_factor, 2), and takes as long as it took the thread; the loop waits only for
 * what is not ready yet. Stretches of pause_min_ns or more are not batch loads
 * (evaluation, checkpoints: the pauses advice's) and stay.
 */
#define PREFETCH_FACTOR 2

static uint64_t worker_gap(struct an_replay_state *st, uint64_t gap, uint64_t h)
{
    if (!st->nworkers)
        return gap;
    uint64_t k = st->loads;
    size_t w = (size_t)(k % st->nworkers), slot = (size_t)(k % st->ntaken);
    uint64_t start = st->worker_free[w];
    if (st->taken[slot] > start)
        start = st->taken[slot];  /* prefetch full: batch k - ntaken not taken yet */
    uint64_t ready = start + gap;
    st->worker_free[w] = ready;
    uint64_t wait = ready > h ? ready - h : 0;
    if (wait > gap)
        wait = gap;  /* (workers never make a load slower than the thread made it) */
    st->taken[slot] = h + wait;
    return wait;
}

uint64_t an_wi_gap(struct an_replay_state *st, enum an_whatif w, const struct an_ev *ev,
                   uint64_t gap, uint64_t h)
{
    switch (w) {
    case AN_WI_INPUT_WORKERS:
        if (gap >= st->th.input_gap_ns && gap < st->th.pause_min_ns)
            return worker_gap(st, gap, h);
        return gap;
    case AN_WI_GRAPHS:
        /* a replayed graph skips the per-op host work between launches too (Python,
         * the dispatcher); longer stretches are not per-op work */
        return kernel_launch(ev) && gap < st->th.input_gap_ns ? 0 : gap;
    default:
        return gap;
    }
}

uint64_t an_wi_cost(enum an_whatif w, const struct an_ev *ev, uint64_t own_ns)
{
    switch (w) {
    case AN_WI_GRAPHS:
        return kernel_launch(ev) ? 0 : own_ns;
    case AN_WI_NO_CHURN:
        return allocator_call(ev) ? 0 : own_ns;
    default:
        return own_ns;
    }
}

int an_wi_waits(enum an_whatif w, const struct an_ev *ev)
{
    if (!an_wi_waits_measured(ev))
        return 0;
    switch (w) {
    case AN_WI_NO_SYNC:
        return !user_sync(ev);
    case AN_WI_PINNED_ASYNC:
        return !blocking_upload(ev);
    case AN_WI_NO_CHURN:
        return !allocator_call(ev);
    default:
        return 1;
    }
}

int an_wi_back_to_back(enum an_whatif w, const struct an_ev *ev)
{
    return w == AN_WI_GRAPHS && kernel_launch(ev);
}

/* Pinned host memory moves 2-4x what pageable memory does (the driver no longer copies
 * through its own staging buffer first): the middle of that, when the run shows no pinned
 * upload to measure it by. */
#define PINNED_SPEEDUP 3

uint64_t an_wi_op_ns(const struct an_replay_state *st, enum an_whatif w,
                     const struct an_ev *ev, uint64_t dur_ns)
{
    if (w != AN_WI_PINNED_ASYNC || !blocking_upload(ev) || ev->host_kind != GW_HOST_PAGEABLE)
        return dur_ns;
    /* from pinned memory the copy runs at the best pinned bandwidth the run showed; with
     * none shown, at PINNED_SPEEDUP x what the pageable one moved */
    if (!st->best_pinned_bw)
        return dur_ns / PINNED_SPEEDUP;
    double pinned = (double)ev->bytes * 1e9 / (double)st->best_pinned_bw;
    return pinned < (double)dur_ns ? (uint64_t)pinned : dur_ns;
}
