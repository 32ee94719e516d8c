/*
 * Each what-if as a transformation of the replayed graph (replay.h): how it changes a CPU
 * stretch of a host thread, a call's own host time, whether a call still waits for the
 * GPU, and how a GPU operation is timed. A world makes a set of changes at once (a mask of
 * 1 << enum an_whatif); each question is answered for the whole set. One case per change
 * in each function, so a new change is one enum value, its cases here, and the rule that
 * words it.
 */
#ifndef GPUWATCH_ANALYZE_WHATIF_H
#define GPUWATCH_ANALYZE_WHATIF_H

#include <stdint.h>

#include "an_event.h"
#include "gpuwatch/trace_format.h"
#include "replay.h"

#define AN_WI_BIT(w) (1u << (w))

/* DataLoader batches each worker keeps ready at most (PyTorch's prefetch_factor default). */
#define AN_PREFETCH_FACTOR 2

/* A no-call stretch of the host, ended by ev, that is a batch load (input_workers takes it
 * over): input_gap_ns or more, under pause_min_ns or, longer, a repeated one that is no
 * pause of the loop (st->long_rhythm: long stretches every few iterations are the input's
 * rhythm, batches that take 100 ms or more to make), and not the last part of a step
 * (ended by the step range's end: AN_F_STEP_END). */
int an_wi_batch_load(const struct an_replay_state *st, const struct an_ev *ev, uint64_t gap);

/* A no-call stretch of `gap` ns on a thread that ran `iterations` iterations of its loop
 * since its previous pause: a pause of the loop (AN_WI_BACKGROUND takes it off the
 * thread) when pause_min_ns or more; or, right after the thread read a tensor back
 * (after_readback), input_gap_ns or more where no such stretch, nor a read-back in another
 * iteration, came since its previous pause (readback_stretches 0): what the loop does with
 * its state every so many steps (a checkpoint's torch.save, an evaluation's metrics) is
 * rare, however short; an offloaded optimizer's step after every download is not. */
static inline int an_wi_loop_pause(const struct an_replay_state *st, uint64_t gap,
                                   uint32_t iterations, int after_readback,
                                   uint32_t readback_stretches)
{
    if (iterations < st->th.pause_every_min)
        return 0;
    return gap >= st->th.pause_min_ns ||
           (after_readback && !readback_stretches && gap >= st->th.input_gap_ns);
}
/* A blocking read-back of more than a scalar (scalar_bytes) where a pause may follow it:
 * the thread's loop ran pause_every_min iterations since its previous pause with no
 * stretch after a read-back between (an_wi_loop_pause's other conditions; whether a
 * stretch follows is not known yet). A checkpoint's torch.save reads the state so. */
static inline int an_wi_checkpoint_read(const struct an_replay_state *st,
                                        const struct an_ev *ev, uint32_t iterations,
                                        uint32_t readback_stretches, uint64_t scalar_bytes)
{
    return ev->kind == AN_COPY && ev->dir == GW_COPY_DTOH && ev->bytes > scalar_bytes &&
           (ev->flags & (AN_F_BLOCKING | AN_F_DRAINS)) && !(ev->flags & AN_F_ERROR) &&
           iterations >= st->th.pause_every_min && !readback_stretches;
}
/* A wait for the GPU that reads its results (a sync, a read-back): followed by a pause, the
 * pause used them (a checkpoint's state_dict), and the wait stays whatever the changes. */
int an_wi_gathers(const struct an_replay_state *st, const struct an_ev *ev);

/* (These four run for every event replayed: inline, they are a tenth of its cost less.) */
/* Calls that put an operation on a stream that CUPTI records (host functions, failed
 * calls and host-to-host copies put none). */
static inline int an_wi_issues(const struct an_ev *ev)
{
    if (ev->flags & AN_F_ERROR)
        return 0;
    if (ev->kind == AN_LAUNCH)
        return ev->api != GW_API_cuLaunchHostFunc && ev->api != GW_API_cuLaunchHostFunc_ptsz;
    if (ev->kind == AN_COPY)
        return ev->dir != GW_COPY_HTOH;
    return ev->kind == AN_SET;
}
/* A launch of a named kernel (not a graph, not a host function). */
static inline int an_wi_kernel_launch(const struct an_ev *ev)
{
    return ev->kind == AN_LAUNCH && (ev->flags & AN_F_KERNEL);
}
/* Calls after which the host waited for the GPU as measured: drains, blocking copies. */
static inline int an_wi_waits_measured(const struct an_ev *ev)
{
    return (ev->flags & (AN_F_DRAINS | AN_F_BLOCKING)) != 0;
}

/* The changes that transform anything about ev (its stretch before it, as st->load and
 * st->pause classify it; its cost, its wait, its operation): worlds making none of them
 * replay ev as measured. (Inline for a launch in the loop's rhythm, most of the events.) */
unsigned an_wi_touched_any(const struct an_replay_state *st, const struct an_ev *ev);
static inline unsigned an_wi_touched(const struct an_replay_state *st, const struct an_ev *ev)
{
    if (ev->kind == AN_LAUNCH && !st->load && !st->pause && !st->ckpt_read &&
        !an_wi_waits_measured(ev))
        return an_wi_kernel_launch(ev) ? AN_WI_BIT(AN_WI_GRAPHS) : 0;
    return an_wi_touched_any(st, ev);
}
/* The stretch before a call that follows one of its kind (after): the per-item host work
 * of a run of them (Python, the dispatcher), unless long. */
static inline int an_wi_between(const struct an_replay_state *st, int after, uint64_t gap)
{
    return after && gap < st->th.input_gap_ns;
}
/* A replayed graph skips the per-op host work between its launches too (Python, the
 * dispatcher): the stretch between two kernel launches; the one before a sequence's first
 * launch (preparing the batch) stays, as do long stretches. */
static inline int an_wi_launch_overhead(const struct an_replay_state *st,
                                        const struct an_ev *ev, uint64_t gap)
{
    return an_wi_kernel_launch(ev) && an_wi_between(st, st->after_kernel, gap);
}

/* For every world of `in` (those some change touching ev makes; the others replay it as
 * measured): start[w] (the thread's time in w plus gap, on entry) = the thread's time plus
 * the stretch before ev as transformed (loads made by workers, launch overhead gone),
 * cost[w] = ev's own time dur transformed (an_wi_cost). One call per event: the per-event
 * tests are made once, not once per world. */
void an_wi_transform(struct an_replay_state *st, const struct an_world_set *in, unsigned touched,
                     const struct an_ev *ev, uint64_t gap, uint64_t dur, uint64_t *start,
                     uint64_t *cost);
/* Whether ev moves the worlds alike but for one change, which only takes time away, the
 * same in every world making it: a kernel launch under cuda_graphs (the launch, and the
 * stretch before it where that is launch overhead), an allocator call under a warm
 * allocator (the call). Returns that change, with the part of the stretch it takes in
 * *gap_removed (ev's own time it takes whole); AN_WI_AS_MEASURED where ev touches no
 * change (touched 0); -1 where the worlds move otherwise (a wait, a batch load, a pause,
 * a copy), which an_wi_transform says world by world. The replay keeps such time aside
 * per thread instead of moving every world's clock by it (replay.c, lazy clocks). */
static inline int an_wi_removes(const struct an_replay_state *st, unsigned touched,
                                const struct an_ev *ev, uint64_t gap, uint64_t *gap_removed)
{
    *gap_removed = 0;
    if (an_wi_waits_measured(ev))
        return -1;
    if (!touched)
        return AN_WI_AS_MEASURED;
    /* (an_wi_transform's cases for these two alone: no load, pause or staging) */
    if (touched == AN_WI_BIT(AN_WI_GRAPHS) && an_wi_kernel_launch(ev)) {
        if (an_wi_launch_overhead(st, ev, gap))
            *gap_removed = gap;
        return AN_WI_GRAPHS;
    }
    if (touched == AN_WI_BIT(AN_WI_NO_CHURN) && (ev->kind == AN_ALLOC || ev->kind == AN_FREE))
        return AN_WI_NO_CHURN;
    return -1;
}
/* The call's own host time with the changes, from what it took without waiting. */
/* gathered: the bytes ev stages where small uploads are coalesced (replay.h) */
uint64_t an_wi_cost(const struct an_replay_state *st, unsigned changes, const struct an_ev *ev,
                    uint64_t own_ns, uint64_t gathered);
/* Whether the call still waits for the GPU with the changes. */
int an_wi_waits(const struct an_replay_state *st, unsigned changes, const struct an_ev *ev);
/* One of a step's many small blocking uploads, which pinned_async coalesces (whatif.c). */
int an_wi_small_upload(const struct an_ev *ev);
/* (The next three run for every GPU operation replayed: inline where pinned_async is not
 * among the changes, which only it makes otherwise.) */
/* Whether the operation ev issues starts right after the previous one on its stream, with
 * no launch latency (kernels replayed from a graph). */
static inline int an_wi_back_to_back(unsigned changes, const struct an_ev *ev)
{
    return ((changes & AN_WI_BIT(AN_WI_GRAPHS)) && an_wi_kernel_launch(ev)) ||
           ((changes & AN_WI_BIT(AN_WI_PINNED_ASYNC)) && an_wi_small_upload(ev));
}
/* The GPU duration of an operation issued by ev (measured dur_ns, bytes) with the changes. */
uint64_t an_wi_pinned_op_ns(const struct an_replay_state *st, const struct an_ev *ev,
                            uint64_t dur_ns, uint64_t gathered);
static inline uint64_t an_wi_op_ns(const struct an_replay_state *st, unsigned changes,
                                   const struct an_ev *ev, uint64_t dur_ns, uint64_t gathered)
{
    if (!(changes & AN_WI_BIT(AN_WI_PINNED_ASYNC)))
        return dur_ns;
    return an_wi_pinned_op_ns(st, ev, dur_ns, gathered);
}
/* How long after its call's start the host has staged what op moves, where it is coalesced
 * and the trace measured the host's memcpy rate: the copy cannot start before (0 else). */
uint64_t an_wi_pinned_staged_ns(const struct an_replay_state *st, const struct an_ev *ev,
                                uint64_t gathered);
static inline uint64_t an_wi_staged_ns(const struct an_replay_state *st, unsigned changes,
                                       const struct an_ev *ev, uint64_t gathered)
{
    if (!st->host_copy_bps || !(changes & AN_WI_BIT(AN_WI_PINNED_ASYNC)))
        return 0;
    return an_wi_pinned_staged_ns(st, ev, gathered);
}

#endif
