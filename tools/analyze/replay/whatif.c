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
        "as_measured", "no_sync",     "input_workers", "pinned_async",
        "cuda_graphs", "no_churn",    "background",
    };
    return (unsigned)w < AN_WI_COUNT ? names[w] : "unknown";
}

const char *an_whatif_advice(enum an_whatif w)
{
    switch (w) {
    case AN_WI_NO_SYNC:
        return "take the per-step synchronization out of the step (no loss.item(), "
               "print(tensor) or .cpu() every step: accumulate on the GPU and read it every N "
               "steps)";
    case AN_WI_INPUT_WORKERS:
        return "load the batches in DataLoader workers (num_workers, persistent_workers=True)";
    case AN_WI_PINNED_ASYNC:
        return "copy the batches from pinned memory without waiting (pin_memory=True, "
               ".to(device, non_blocking=True))";
    case AN_WI_GRAPHS:
        return "replay the step's kernels as a CUDA graph (torch.compile(mode="
               "\"reduce-overhead\") or torch.cuda.graphs)";
    case AN_WI_NO_CHURN:
        return "keep the per-step device buffers allocated (reuse them, or "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) so that no cudaFree waits "
               "for the GPU each step";
    case AN_WI_BACKGROUND:
        return "take the loop's pauses off the training thread (save checkpoints "
               "asynchronously: torch.distributed.checkpoint.async_save, or write the "
               "state_dict from a background thread)";
    default:
        return "";
    }
}

/* A download of this many bytes or more is data the host goes on to use (an offloaded
 * optimizer's gradients, a state_dict), not a scalar read to log: dropping .item() does not
 * remove it, pinning it does make it faster (thresholds.h's h2d_min_bytes default: the
 * copy rules' line between a batch and a scalar). */
#define BULK_DOWNLOAD_BYTES (64u * 1024)

static int bulk_download(const struct an_ev *ev)
{
    return ev->kind == AN_COPY && ev->dir == GW_COPY_DTOH && ev->bytes >= BULK_DOWNLOAD_BYTES;
}

/* A user's synchronization: what "take the sync out of the step" removes (cuMemFree's
 * wait is the allocator's, a blocking upload the copy advice's, and so is a stream's sync
 * right after an upload to it: PyTorch's x.cuda() without non_blocking=True, replay.h
 * upload_wait; a bulk download's the host needs whatever the sync advice does; an event
 * sync on older work bounds how far the loop runs ahead, and stays: replay.h,
 * run_ahead_bound). */
static int user_sync(const struct an_replay_state *st, const struct an_ev *ev)
{
    if (st->upload_wait || st->run_ahead_bound)
        return 0;
    return ev->kind == AN_SYNC ||
           (ev->kind == AN_COPY && ev->dir == GW_COPY_DTOH && !bulk_download(ev));
}

static int blocking_copy(const struct an_ev *ev)
{
    return ev->kind == AN_COPY && ev->dir == GW_COPY_HTOD && (ev->flags & AN_F_BLOCKING);
}

static int blocking_upload(const struct an_replay_state *st, const struct an_ev *ev)
{
    return blocking_copy(ev) || st->upload_wait;
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
 * training thread loading a batch itself. Only the part of it in which no other thread
 * issued GPU work counts (replay.h, alone): while PyTorch's autograd thread launches the
 * backward kernels the training thread waits in loss.backward(), and the autograd thread
 * waits in turn while the forward is launched; neither is loading anything. Nor is a
 * stretch before the thread's loop ran an iteration (replay.c): start-up, whose many
 * stretches a PyTorch program spends importing and building. The workers start with the
 * latest such stretch, the loop's first fetch (iter(loader)), so the first batch is never
 * ready early. With N workers, batch k is loaded by worker k mod N as soon as it is free and the
 * loop has taken batch k - N x AN_PREFETCH_FACTOR, and takes as long as it took the
 * thread, or longer where the CPUs are shared (worker_speed: the budget the CPU samples
 * give, worker_budget.h); the loop waits only for what is not ready yet. Stretches of pause_min_ns or more
 * are not batch loads (evaluation, checkpoints: the pauses advice's) and stay; nor is the
 * host work of a step after its last call, where NVTX says the step ended after it: the
 * loop fetches the next batch after the step's range ends (its own range, or a profiler's
 * ProfilerStep#N that opens before the fetch), so what came before the end was the step's
 * own (logging the loss it read): workers cannot take it over.
 */

static uint64_t worker_gap(struct an_replay_state *st, int world, uint64_t gap, uint64_t h)
{
    if (!st->nworkers)
        return gap;
    /* batch k; after a first fetch before the loop (replay.c), that fetch was batch 0 */
    uint64_t k = st->loads + (st->asked ? 1 : 0);
    uint64_t *worker_free = st->worker_free + (size_t)world * st->nworkers;
    uint64_t *taken = st->taken + (size_t)world * st->ntaken;
    size_t w = (size_t)(k % st->nworkers), slot = (size_t)(k % st->ntaken);
    /* the workers start when the loop first asks: the first batch waits whole, the first
     * worker loading it; the others load the next ones meanwhile */
    if (st->loads == 0)
        for (size_t i = 0; i < st->nworkers; i++)
            worker_free[i] = !st->asked ? h : i ? st->first_ask[world] : st->first_fetched[world];
    uint64_t start = worker_free[w];
    if (taken[slot] > start)
        start = taken[slot];  /* prefetch full: batch k - ntaken not taken yet */
    /* (a worker sharing the CPUs with more runnable threads than there are loads slower) */
    uint64_t ready = start + (uint64_t)((double)gap / st->worker_speed);
    worker_free[w] = ready;
    uint64_t wait = ready > h ? ready - h : 0;
    if (wait > gap)
        wait = gap;  /* (workers never make a load slower than the thread made it) */
    taken[slot] = h + wait;
    st->batch_wait[world] = wait;
    st->batch_from[world] = h;
    return wait;
}

/*
 * The loop's pauses: a stretch with no call of pause_min_ns or more, on a thread that ran
 * pause_every_min iterations of its loop or more since its previous long stretch (or its
 * start). An iteration is a step range's end (NVTX), or a wait for the GPU or a batch's
 * upload after the thread launched kernels (a loop with no sync uploads its batches).
 * Stretches before the loop ran (imports, building the model and the data set, a compile
 * in the first steps) are start-up, which nothing takes off the loop; long stretches more
 * often than that are the input's rhythm (a DataLoader delivering in bursts), not pauses.
 * AN_WI_BACKGROUND runs each pause on one background thread (an asynchronous checkpoint
 * save: torch.distributed.checkpoint.async_save, or a thread writing the state_dict): the
 * loop goes on at once, unless the previous pause's work is still running, which it waits
 * for first (one in flight); the run ends when the last is done. What the loop read back
 * from the GPU before the pause (the state_dict) it still reads: a sync or read-back
 * followed by a pause is the pause's own, and no_sync keeps its wait (replay.c).
 */
int an_wi_gathers(const struct an_replay_state *st, const struct an_ev *ev)
{
    return an_wi_waits_measured(ev) && user_sync(st, ev);
}

static uint64_t background_gap(struct an_replay_state *st, int world, uint64_t gap, uint64_t h)
{
    uint64_t wait = st->bg_free[world] > h ? st->bg_free[world] - h : 0;
    /* (after the checkpoint read it waits for, when there was one) */
    uint64_t from = st->bg_from[world] > h + wait ? st->bg_from[world] : h + wait;
    st->bg_free[world] = from + gap;
    st->bg_from[world] = 0;
    return wait;
}

int an_wi_batch_load(const struct an_replay_state *st, const struct an_ev *ev, uint64_t gap)
{
    /* (under pause_min_ns only, a loop whose batches took 85-160 ms each on an H200's
     * training thread kept the longer ones in every world: 57 % predicted where 8 workers
     * gained 85 %) */
    return gap >= st->th.input_gap_ns && (gap < st->th.pause_min_ns || st->long_rhythm) &&
           !(ev->kind == AN_CALL && (ev->flags & AN_F_STEP_END));
}

/* blocking uploads from pageable memory move faster once pinned */
static int pageable_upload(const struct an_ev *ev)
{
    return blocking_copy(ev) && ev->host_kind == GW_HOST_PAGEABLE;
}

/* Bulk downloads to pageable memory move faster once pinned too (the driver stages them
 * through its own pinned buffer and copies again); the host still waits for them, as it
 * reads what they bring (the fix users write, pinned + non_blocking + an event, waits for
 * the event before using the data), so only the copy's time changes. */
static int pageable_download(const struct an_ev *ev)
{
    return bulk_download(ev) && ev->host_kind == GW_HOST_PAGEABLE &&
           (ev->flags & AN_F_BLOCKING);
}

/* A blocking upload under BULK_DOWNLOAD_BYTES (the copy rules' line between a batch and a
 * scalar, either way): one of a step's many small copies (a dict of tensors moved one by
 * one, metadata, per-sample copies). pinned_async coalesces them, as the fix users write
 * does (small_copies' advice: gather them on the host into one pinned staging buffer, copy
 * it once with cuMemcpyHtoDAsync): each costs the host only its bytes' memcpy into the
 * buffer, no longer waits, and moves on the GPU right after the one before it at pinned
 * speed, with no copy's fixed cost or launch latency between them. Needs no steps: each
 * copy changes where it stands. */
static int small_upload(const struct an_ev *ev)
{
    return blocking_copy(ev) && ev->bytes < BULK_DOWNLOAD_BYTES;
}

int an_wi_small_upload(const struct an_ev *ev)
{
    return small_upload(ev);
}

/* Gathered, the small uploads leave the per-tensor host work between them too (the loop's
 * .cuda() per tensor, the dispatcher): the stretch between two of them goes, as the one
 * between two kernel launches does in a graph (an_wi_launch_overhead); the one before the
 * first (building the tensors) stays, as do long stretches. (140 uploads of 4 KiB a step,
 * a microsecond each and one between: coalescing gained twice what the calls alone took.) */
static int upload_overhead(const struct an_replay_state *st, uint64_t gap)
{
    return an_wi_between(st, st->after_small, gap);
}

/* what the host's memcpy into a pinned staging buffer moves per second where the trace
 * did not measure it (GW_REC_HOST_COPY; a conservative single-core figure: 4 GB/s, a
 * microsecond per 4 KiB) */
#define STAGING_BPS 4e9

static uint64_t staging_ns(const struct an_replay_state *st, uint64_t bytes)
{
    double bps = st->host_copy_bps ? (double)st->host_copy_bps : STAGING_BPS;
    return (uint64_t)((double)bytes * 1e9 / bps);
}

/* What a small upload costs the host where it is coalesced: with the host's memcpy rate
 * measured, the memcpy of the bytes it gathers (replay.c, gather_of; the one copy's call
 * is a few us a step); without, each its own bytes' memcpy at STAGING_BPS, or its own
 * time where that is less. */
static uint64_t gathered_cost(const struct an_replay_state *st, const struct an_ev *ev,
                              uint64_t own_ns, uint64_t gathered)
{
    if (st->host_copy_bps)
        return staging_ns(st, gathered);
    uint64_t staging = staging_ns(st, ev->bytes);
    return staging < own_ns ? staging : own_ns;
}

unsigned an_wi_touched_any(const struct an_replay_state *st, const struct an_ev *ev)
{
    unsigned t = 0;
    if (st->load)
        t |= AN_WI_BIT(AN_WI_INPUT_WORKERS);
    if (st->pause || st->ckpt_read)
        t |= AN_WI_BIT(AN_WI_BACKGROUND);
    if (kernel_launch(ev))
        t |= AN_WI_BIT(AN_WI_GRAPHS);
    if (allocator_call(ev))
        t |= AN_WI_BIT(AN_WI_NO_CHURN);
    if (an_wi_waits_measured(ev)) {
        if (user_sync(st, ev))
            t |= AN_WI_BIT(AN_WI_NO_SYNC);
        if (blocking_upload(st, ev))
            t |= AN_WI_BIT(AN_WI_PINNED_ASYNC);
    }
    if (pageable_upload(ev) || (pageable_download(ev) && !st->rare_download))
        t |= AN_WI_BIT(AN_WI_PINNED_ASYNC);
    return t;
}

/* The changes under which ev costs the host nothing: a replayed graph's kernel launches, a
 * warm allocator's allocs and frees. */
static unsigned costless(const struct an_ev *ev)
{
    if (kernel_launch(ev))
        return AN_WI_BIT(AN_WI_GRAPHS);
    return allocator_call(ev) ? AN_WI_BIT(AN_WI_NO_CHURN) : 0;
}

void an_wi_transform(struct an_replay_state *st, const struct an_world_set *in, unsigned touched,
                     const struct an_ev *ev, uint64_t gap, uint64_t dur, uint64_t *start,
                     uint64_t *cost)
{
    int overhead = an_wi_launch_overhead(st, ev, gap);
    uint64_t covered = gap > st->alone ? gap - st->alone : 0;
    /* (the per-event tests once: which changes take the stretch away, or the call's cost) */
    int small = small_upload(ev);
    unsigned no_gap = (overhead ? AN_WI_BIT(AN_WI_GRAPHS) : 0) |
                      (small && upload_overhead(st, gap) ? AN_WI_BIT(AN_WI_PINNED_ASYNC) : 0);
    unsigned no_cost = costless(ev);
    for (unsigned i = 0; i < in->n; i++) {
        int w = in->world[i];
        unsigned c = st->changes[w] & touched;
        uint64_t h = start[w] - gap, g = gap;  /* (the thread's time before the stretch) */
        if (c & no_gap)
            g = 0;
        else if ((c & AN_WI_BIT(AN_WI_INPUT_WORKERS)) && st->load)
            g = covered + st->step_own +
                worker_gap(st, w, st->alone - st->step_own, h + st->step_own);
        else if ((c & AN_WI_BIT(AN_WI_BACKGROUND)) && st->pause)
            g = covered + background_gap(st, w, st->alone, h);
        start[w] = h + g;
        cost[w] = c & no_cost ? 0 : dur;
        if ((c & AN_WI_BIT(AN_WI_PINNED_ASYNC)) && small)
            cost[w] = gathered_cost(st, ev, cost[w], st->gathered);
    }
}

/* (whatif.h, an_wi_staged_ns: pinned_async, a rate measured) */
uint64_t an_wi_pinned_staged_ns(const struct an_replay_state *st, const struct an_ev *ev,
                                uint64_t gathered)
{
    return small_upload(ev) ? staging_ns(st, gathered) : 0;
}

uint64_t an_wi_cost(const struct an_replay_state *st, unsigned changes, const struct an_ev *ev,
                    uint64_t own_ns, uint64_t gathered)
{
    if ((changes & AN_WI_BIT(AN_WI_PINNED_ASYNC)) && small_upload(ev))
        return gathered_cost(st, ev, own_ns, gathered);
    return changes & costless(ev) ? 0 : own_ns;
}

int an_wi_waits(const struct an_replay_state *st, unsigned changes, const struct an_ev *ev)
{
    if (!an_wi_waits_measured(ev))
        return 0;
    if ((changes & AN_WI_BIT(AN_WI_BACKGROUND)) && st->ckpt_read)
        return 0;
    if ((changes & AN_WI_BIT(AN_WI_NO_SYNC)) && user_sync(st, ev))
        return 0;
    if ((changes & AN_WI_BIT(AN_WI_PINNED_ASYNC)) && blocking_upload(st, ev))
        return 0;
    if ((changes & AN_WI_BIT(AN_WI_NO_CHURN)) && allocator_call(ev))
        return 0;
    return 1;
}

/* Pinned host memory moves 2-4x what pageable memory does (the driver no longer copies
 * through its own staging buffer first): the middle of that, when the run shows no pinned
 * upload to measure it by. */
#define PINNED_SPEEDUP 3

/* (whatif.h, an_wi_op_ns: the changes include pinned_async) */
uint64_t an_wi_pinned_op_ns(const struct an_replay_state *st, const struct an_ev *ev,
                            uint64_t dur_ns, uint64_t gathered)
{
    /* a download: the pinned upload bandwidth is the other direction's, so the middle of
     * what pinning gives */
    if (pageable_download(ev))
        return dur_ns / PINNED_SPEEDUP;
    if (small_upload(ev) && st->host_copy_bps) {
        /* gathered (replay.c, gather_of): the bytes it moves in the one copy, at the pinned
         * bandwidth seen, or PINNED_SPEEDUP x its own rate */
        if (st->best_pinned_bw)
            return (uint64_t)((double)gathered * 1e9 / (double)st->best_pinned_bw);
        return ev->bytes ? (uint64_t)((double)dur_ns * (double)gathered / (double)ev->bytes /
                                      PINNED_SPEEDUP)
                         : 0;
    }
    if (small_upload(ev) && st->best_pinned_bw) {
        /* coalesced: its bytes within the one copy, at the pinned bandwidth seen */
        double moved = (double)ev->bytes * 1e9 / (double)st->best_pinned_bw;
        return moved < (double)dur_ns ? (uint64_t)moved : dur_ns;
    }
    if (!pageable_upload(ev))
        return dur_ns;
    /* from pinned memory the copy runs at the best pinned bandwidth the run showed; with
     * none shown, at PINNED_SPEEDUP x what the pageable one moved */
    if (!st->best_pinned_bw)
        return dur_ns / PINNED_SPEEDUP;
    double pinned = (double)ev->bytes * 1e9 / (double)st->best_pinned_bw;
    return pinned < (double)dur_ns ? (uint64_t)pinned : dur_ns;
}
