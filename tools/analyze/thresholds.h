/*
 * Every threshold the analyzer uses, in one place. docs/analyze.md explains each one and
 * why it has its value; the rule unit tests (tests/analyze/test_rule_*.c) feed event
 * streams just below and just above them.
 *
 * Times are nanoseconds, shares are fractions of a time (0.05 = 5 %).
 */
#ifndef GPUWATCH_ANALYZE_THRESHOLDS_H
#define GPUWATCH_ANALYZE_THRESHOLDS_H

#include <stdint.h>

struct an_thresholds {
    /* ---- timeline ---- */
    /* A stretch with no CUDA call on any thread shorter than this is host "busy" (the
     * interpreter between two calls), not a gap worth keeping. */
    uint64_t host_gap_min_ns;
    /* A GPU-idle interval whose host side holds a no-call gap at least this long is
     * charged to the input pipeline (a DataLoader batch takes milliseconds; the Python
     * between two steps' calls takes tens of microseconds). A loop whose steps are short
     * is read again with a gap of AN_SHORT_LOAD_STEP_SHARE of its median step, not under
     * AN_SHORT_LOAD_MIN_NS, where its stretches that long are worth a finding
     * (run_analysis.c). */
    uint64_t input_gap_ns;
    /* ... and right after a wait for the GPU (a sync, a read of the loss), a stretch is a
     * batch load from this long only: shorter, it is the step's own host work on what it
     * read (logging the loss), which no worker takes over (the replay's; input_gap_ns
     * unless a short loop's pass lowered that one). */
    uint64_t input_gap_after_wait_ns;
    /* Slack when deciding that a synchronizing call was waiting when the GPU went idle
     * (host and GPU clocks agree to about this). */
    uint64_t drain_slack_ns;
    /* An idle gap the host filled with calls that issued work is launch-bound only up to
     * this long (kernel-to-kernel gaps); longer ones are something else (start-up). */
    uint64_t launch_gap_max_ns;
    /* GPU records that stop this long (and this share of the run) before the end of the
     * program's last call that issued GPU work are a cut timeline: CUPTI's later records
     * never reached the trace (another profiler took its activity buffers, or the process
     * died before its last flush). Idle time would be everything after the cut; the host
     * evidence is used instead. */
    uint64_t gpu_cut_min_ns;
    double gpu_cut_share;

    /* ---- steps ---- */
    unsigned min_steps;           /* fewer repetitions than this: no step pattern */
    double step_regularity;       /* found pattern: intervals in 0.5x..1.5x median */
    double step_regularity_same_work; /* ... or this share of them, where as many as
                                     step_regularity carry the same work calls */
    double step_coverage;         /* a found (not NVTX) pattern spans this share of the
                                     work: first to last launch, upload or drain */
    double step_work_coverage;    /* ... or holds this share of the work calls */
    double step_time_share;       /* ... and its intervals in band, after its warm-up, fill
                                     this share of the time ... */
    double step_work_share;       /* ... or hold this share of the work calls */
    double step_nest_share;       /* a kernel coarser than the finest regular one is the
                                     step when this share of its intervals hold the same
                                     number of the finest one's launches */
    double warmup_factor;         /* a step this many times the median is warm-up */
    double warmup_max_share;      /* warm-up is at most this share of the steps */

    /* ---- findings: a time-saving finding needs at least this share of the loop (the steady
     * state; the run without steps). 5 %: below, one run of the same program differs by as
     * much on a busy machine, and a run whose GPU is 95 % busy has nothing to report */
    double min_share;

    /* pauses: an input-pipeline stretch this many median steps long, and at least
     * pause_min_ns, is a pause (evaluation, checkpoint, epoch start), not a batch load */
    unsigned pause_steps;
    uint64_t pause_min_ns;
    /* ... and such stretches at least this many steps apart on average (the replay: this
     * many iterations of the loop before each, whatif.c): more often, they are DataLoader
     * workers delivering in bursts (the input is too slow), not pauses; fewer since the
     * thread started, its start-up */
    unsigned pause_every_min;

    /* input_pipeline: also advises DALI / caching when this many workers are suggested
     * already (the input is heavy, not merely serial) */
    unsigned input_many_workers;
    double cpu_busy_share;        /* CPU samples: a training thread on a CPU this share of
                                     the steady state is busy (not waiting) */
    double worker_busy_share;     /* ... workers on a CPU this share each cannot keep up */

    /* pageable_h2d: copies that count (smaller ones are noise) */
    uint64_t h2d_min_bytes;

    /* small_copies: blocking H2D copies per step (each under h2d_min_bytes on average) */
    double small_copies_per_step;

    /* sync_bubble: share of steady steps that drain the queue */
    double sync_steps_share;

    /* launch_bound: per steady step */
    unsigned launch_min_per_step;     /* at least this many kernel launches */
    double launch_issue_share;        /* host-only: the step spends this share issuing work */
    double launch_wait_share;         /* host-only: ... and at most this share waiting */

    /* memory */
    double mem_low_share;         /* peak (ours + others) below this share: room to grow */
    double mem_high_share;        /* peak at or above this share: near capacity */
    double mem_low_util;          /* larger batch only when GPU utilization is below this */
    double mem_batch_target;      /* a larger batch may fill the device up to this share */
    uint64_t mem_batch_min_bytes; /* ... judged only from a step footprint of this or more */
    double others_min_share;      /* memory held by others at start, share of capacity */
    uint64_t others_min_bytes;    /* ... and at least this much */
    uint64_t retry_window_ns;     /* frees and a retried alloc within this after an OOM */
    double churn_per_step;        /* steady device alloc+free calls per step, in pairs */
    uint64_t growth_min_bytes;    /* steady growth of memory held that counts */
    double growth_steps_share;    /* share of steady steps in which memory held grew */
    /* ... or growth in jumps (a caching allocator takes a segment every few steps) that is
     * steady: at least growth_min_jumps of them, each half of the steady state carrying
     * growth_half_share of the growth, never falling back a quarter of it */
    unsigned growth_min_jumps;
    double growth_half_share;
};

/* A batch load of a loop whose steps are short: a no-call stretch of this share of the
 * median step or more (random draw 37: 0.91 ms loads in 0.93 ms steps, under input_gap_ns,
 * and two workers gained 37 %; the Python between two launches is tens of microseconds,
 * a step's own host work after its read-back is no load), and never under this. */
#define AN_SHORT_LOAD_STEP_SHARE 0.25
#define AN_SHORT_LOAD_MIN_NS 100000u

#define AN_THRESHOLDS_DEFAULT                                                             \
    ((struct an_thresholds){                                                              \
        .host_gap_min_ns = 50000,                                                         \
        .input_gap_ns = 1000000,                                                          \
        .input_gap_after_wait_ns = 1000000,                                               \
        .drain_slack_ns = 50000,                                                          \
        .launch_gap_max_ns = 1000000,                                                     \
        .gpu_cut_min_ns = 1000000000,                                                     \
        .gpu_cut_share = 0.05,                                                            \
        .min_steps = 4,                                                                   \
        .step_regularity = 0.7,                                                           \
        .step_regularity_same_work = 0.5,                                                 \
        .step_coverage = 0.5,                                                             \
        .step_work_coverage = 0.8,                                                        \
        .step_time_share = 0.2,                                                           \
        .step_work_share = 0.2,                                                           \
        .step_nest_share = 0.9,                                                           \
        .warmup_factor = 1.5,                                                             \
        .warmup_max_share = 0.34,                                                         \
        .min_share = 0.05,                                                                \
        .pause_steps = 10,                                                                \
        .pause_min_ns = 100000000,                                                        \
        .pause_every_min = 20,                                                            \
        .input_many_workers = 8,                                                          \
        .cpu_busy_share = 0.5,                                                            \
        .worker_busy_share = 0.7,                                                         \
        .h2d_min_bytes = 64 * 1024,                                                       \
        .small_copies_per_step = 8,                                                       \
        .sync_steps_share = 0.5,                                                          \
        .launch_min_per_step = 100,                                                       \
        .launch_issue_share = 0.5,                                                        \
        .launch_wait_share = 0.2,                                                         \
        .mem_low_share = 0.5,                                                             \
        .mem_high_share = 0.9,                                                            \
        .mem_low_util = 0.8,                                                              \
        .mem_batch_target = 0.85,                                                         \
        .mem_batch_min_bytes = 64ull << 20,                                               \
        .others_min_share = 0.05,                                                         \
        .others_min_bytes = 256ull << 20,                                                 \
        .retry_window_ns = 100000000,                                                     \
        .churn_per_step = 1.0,                                                            \
        .growth_min_bytes = 16ull << 20,                                                  \
        .growth_steps_share = 0.75,                                                       \
        .growth_min_jumps = 4,                                                            \
        .growth_half_share = 0.3,                                                         \
    })

#endif
