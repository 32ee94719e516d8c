/*
 * The what-if replay (docs/analyze.md, "The model"): the run as a graph of host threads
 * and GPU streams, replayed in one streaming pass once as measured and once per change an
 * advice proposes, so that each saving is the difference between two replays and not an
 * upper bound measured on one slice of the run.
 *
 * The graph, as the replay walks it:
 *   - per host thread, CPU stretches between calls and each call's own host time;
 *   - per stream, GPU operations in issue order, each matched to the call that issued it
 *     (stream FIFO order; the records of one graph launch share its correlation id), with
 *     its measured duration and the delay from its call's start to its own start;
 *   - host-waits-for-GPU edges: synchronizes, synchronous and pageable copies, frees that
 *     synchronize.
 * Without GPU records (host-only) the work a drain waited for is a virtual operation: it
 * ends when the drain returned and began at the later of its stream's previous work and
 * its last issuing call, when the drain waited at all; otherwise its length is unknown and
 * taken as nil, so host-only savings lean towards the host's side (said in the report).
 *
 * Replaying the unchanged graph must give the measured wall time back: replay_error says
 * how far it is (tests/analyze/test_replay.c, test_properties.c).
 */
#ifndef GPUWATCH_ANALYZE_REPLAY_H
#define GPUWATCH_ANALYZE_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "an_event.h"
#include "gw_map.h"
#include "thresholds.h"

/* The changes the replay tries, each a transformation of the graph (whatif.c). */
enum an_whatif {
    AN_WI_AS_MEASURED = 0, /* the graph unchanged: must reproduce the run */
    AN_WI_NO_SYNC,         /* per-step syncs gone: drains no longer wait, their copies async */
    AN_WI_INPUT_WORKERS,   /* batch loads (no-call stretches) made by N DataLoader workers */
    AN_WI_PINNED_ASYNC,    /* blocking host-to-device copies pinned and asynchronous */
    AN_WI_GRAPHS,          /* kernel launches replayed from a CUDA graph */
    AN_WI_NO_CHURN,        /* device alloc/free calls gone (a warm caching allocator) */
    AN_WI_BACKGROUND,      /* the loop's pauses run on a background thread, one at a time */
    AN_WI_COUNT,
};
const char *an_whatif_name(enum an_whatif w);
/* A change in one line of advice, as the finding that makes it alone words it ("" for none):
 * for findings that name several changes (rule_changes_together.c). */
const char *an_whatif_advice(enum an_whatif w);

/* The worlds replayed: the run as measured, each change alone, and each pair of changes
 * (so that, the top change made, the others are ranked again on the changed run). A world
 * is the set of its changes, a mask of 1 << enum an_whatif. */
#define AN_CHANGES (AN_WI_COUNT - 1)
#define AN_PAIRS_END (1 + AN_CHANGES + AN_CHANGES * (AN_CHANGES - 1) / 2)
/* Host-only, work a drain waited for lies anywhere from its first issuing call to the
 * drain's return: the worlds take it busy all along (the GPU's upper bound, the host's
 * savings floors). A world that also makes AN_WI_LEAST, no change of the program's, takes
 * it at its least, from its last issuing call on: the ceiling of a saving that the GPU
 * busy through the host's stretches between those calls would cap (replay.c, run_virtual;
 * a loop that reads the loss every third step after three batch loads: the workers'
 * floor 43 ms, what two workers gained 221 ms). One such world per change whose saving
 * that caps: the loader workers', and the background checkpoint's (work on a stream the
 * checkpoint's read did not drain, waited for only steps after the pause, as if the GPU
 * ran it through the pause: random draw 192, nothing replayed where the background save
 * gained 115 ms); and the run at its least alone, which the ceilings are savings from (it
 * is the run as measured, but for drains the replay cannot take at their least alike: an
 * event's wait across streams). */
#define AN_WI_LEAST AN_WI_COUNT
#define AN_CEILINGS 2
#define AN_WORLDS (AN_PAIRS_END + AN_CEILINGS + 1)
unsigned an_world_changes(int world);
/* The world making exactly `changes`, or -1 when none is replayed. */
int an_world_of(unsigned changes);
/* Some of the live worlds (an_replay_state), by slot: those that make a change touching the
 * event replayed now, the only ones whose clocks it moves otherwise than as measured. */
struct an_world_set {
    unsigned n;
    uint8_t world[AN_WORLDS];
    /* ... the distinct sets of changes they make among those touching the event (a world's
     * changes & the set's mask), and each live slot's group: its index there + 1 (0: the
     * slot is none of them) */
    unsigned ngroups;
    uint8_t group_changes[AN_WORLDS];
    uint8_t group_of[AN_WORLDS];
    /* ... and the classes of live slots that one GPU operation touching the mask moves
     * alike but for their own clocks: the same group, the same kinds of time removed
     * (remover_set). Each slot's class, and each class's group (0: none) and remover set
     * (replay.c, stream maps) */
    unsigned nclasses;
    uint8_t class_of[AN_WORLDS], class_group[AN_WORLDS], class_set[AN_WORLDS];
    /* each class's remover set, with bit AN_RP_REMOVERS set where its group's changes
     * remove kernel launches (cuda_graphs: replay.c, map_work) */
    uint8_t class_bits[AN_WORLDS];
};

/* What the replay found, kept in the model after the pass. */
struct an_replay {
    int done;
    uint64_t measured_ns;            /* the run's wall time as traced */
    uint64_t wall_ns[AN_WORLDS];     /* replayed wall time of each world (an_world_of) */
    double error;                    /* |replayed as measured - measured| / measured */
    /* of each world, the time the threads that loaded batches themselves waited for the
     * GPU (a drain or a blocking copy beyond its own cost): where CUDA spins, CPU time
     * the workers' budget leaves them (worker_budget.c). Where workers load, a wait for
     * a batch counts too, as far as the GPU ran work through it that the thread's next
     * wait waited for: the thread finds its batch ready as often as not and spins
     * through that work instead (replay.c, spun_through) */
    uint64_t loader_wait_ns[AN_WORLDS];
    unsigned workers;                /* DataLoader workers AN_WI_INPUT_WORKERS assumed */
    double worker_speed;             /* ... each loading at this share of the thread's speed */
    uint64_t loads;                  /* no-call stretches taken as batch loads */
    uint64_t load_ns;                /* ... their length, the thread alone */
    uint64_t loop_ns;                /* from the first of them to the last call replayed */
    /* no-call stretches of a looping thread alone, from AN_SHORT_LOAD_MIN_NS to under
     * input_gap_ns, not right after a wait for the GPU: batch loads of a loop whose steps
     * are short, where run_analysis.c reads the file again with a gap relative to the step */
    uint64_t short_stretch_ns;
    /* the loops' iterations, all threads: uploads, or waits for the GPU, each after work
     * was launched (whichever counts more; a step range may hold several) */
    uint64_t iterations;
    uint64_t pauses, pause_ns;       /* ... taken as the loop's pauses, and their length */
    uint64_t pause_cycles;           /* the loop's iterations before each of them, summed */
    uint64_t readback_pauses;        /* ... of them right after a read-back (whatif.h) */
    uint64_t shortest_pause_ns;      /* ... the shortest of them (0: none) */
    uint64_t ops_matched;            /* GPU records matched to the call that issued them */
    uint64_t ops_virtual;            /* issued work replayed from what drains proved */
    uint64_t ops_unproven;           /* ... of it, work whose length nothing proved, taken as
                                        nil (host-only: no drain waited for it) */
    uint64_t ops_unlearnt;           /* ... of that, drained before a sampled timeline's
                                        first kernel record was read (kernel_time) */
    /* waits whose work no GPU record timed and whose thread slept in them, each taken to
     * end the machine's wake-up latency (HOST_COPY's wake_ns) before it returned: a floor,
     * a CPU that idled longer waking later (savings through them are lower bounds) */
    uint64_t waits_woken;
    uint64_t wake_ns;
    uint64_t records_unmatched;      /* GPU records no issuing call was found for */
    /* host-only: of the pinned_async world's saving, the part that takes downloads' time as
     * their moves where it may have been waits for earlier work (the kernels queued before
     * them ran nothing proven): what it gives back where those kernels ran long is this
     * much less, their moves as short as the fastest copy that waited for nothing, else the
     * host's memcpy, moves them (replay.c, move_unknown) */
    uint64_t pinned_unknown_ns;
    /* host-only: the checkpoint reads' moves at their least (at the faster of the fastest
     * rate a copy that waited for nothing showed and the host's memcpy; 0 with neither),
     * the GPU time a background save could overlap with the loop's work beyond the idle
     * the waits prove (rule_pauses.c) */
    uint64_t ckpt_least_ns;
    uint64_t forced;                 /* host events replayed before the GPU side was seen */
};

/* The saving of a what-if: replayed as measured minus replayed with the change. */
uint64_t an_replay_saving(const struct an_replay *r, enum an_whatif w);
/* Host-only: the saving of w with drained work at its least (AN_WI_LEAST), its ceiling:
 * from the run at its least; an_replay_saving with a timeline, or where no such world of
 * w's is replayed. */
uint64_t an_replay_ceiling(const struct an_replay *r, enum an_whatif w);
/* The saving of w once `first` is made: replayed with first minus with both (0 when w is
 * first, or either is not a change). */
uint64_t an_replay_saving_after(const struct an_replay *r, enum an_whatif first,
                                enum an_whatif w);

struct an_rp_thread;
struct an_rp_stream;
#define AN_RP_DEVICES 16

struct an_replay_state {
    struct an_thresholds th;
    int expect_gpu;              /* GPU records will come: host events wait for them */
    uint64_t gpu_seen;           /* GPU records released up to here */
    uint64_t horizon;            /* records that started by here may meet their calls */
    size_t npending;             /* records waiting, all streams */
    uint64_t replayed_to;        /* every host call that started before this is replayed */
    uint64_t first_ts;
    /* host events waiting until the GPU side has been seen past their end */
    struct an_ev *fifo;
    size_t fifo_head, fifo_n, fifo_cap;
    struct an_rp_thread *threads;
    size_t nthreads, threads_cap;
    struct an_rp_stream *streams;
    size_t nstreams, streams_cap;
    struct gw_map stream_index;  /* stream id -> index + 1 */
    struct gw_map event_at;      /* event handle -> stream index << 40 | operations before it */
    /* a sampled timeline (replayed from the host's calls): kernel (by name) -> its time in
     * the windows' records so far, ns << 20 | records. A record and the call that issued
     * it define their shapes apart (CUPTI's has registers), so they meet by the kernel's
     * name: shape_name is the run's resolver while the file is read (NULL: none), and
     * name_of_shape caches shape id -> a hash of that name (0: unnamed) */
    struct gw_map kernel_time, name_of_shape;
    const char *(*shape_name)(void *user, int what, uint64_t id);
    void *shape_name_user;
    int after_kernel;            /* the thread replayed now last made a kernel launch */
    int after_small;             /* ... one of a step's small uploads (whatif.c) */
    size_t last_stream;          /* the stream looked up last, + 1 (0: none) */
    size_t last_thread;          /* the thread replayed last, + 1 (0: none yet) */
    /* Live worlds. A change no event has touched yet (active: those some event has) has
     * changed nothing: every world making it is, so far, the world without it, and only
     * the worlds making active changes alone are replayed, each in a slot of every
     * per-world array (in the order they came alive; slot 0 the run as measured). When an
     * event first touches a change, the worlds it brings to life start as copies of the
     * ones they were until then (wake_worlds). A loop whose changes never touch the
     * batch loads, pauses or allocator replays 7 worlds, not 22 (host-only, one more:
     * the run at its least, AN_WI_LEAST). */
    unsigned active;
    unsigned nlive;
    unsigned changes[AN_WORLDS]; /* each slot's changes (an_world_changes of its world) */
    /* the kinds of time the lazy clocks keep aside (replay.c: cuda_graphs's, a warm
     * allocator's), per slot: a bit (1 << kind) for each its world's changes remove */
#define AN_RP_REMOVERS 2
    uint8_t remover_set[AN_WORLDS];
    /* for each mask of changes, the slots making one of them (most events touch none, or
     * only the kernel launches of the slots with cuda_graphs: the others move alike) */
    struct an_world_set making[1u << AN_WI_COUNT];
    /* AN_WI_INPUT_WORKERS, per world: when each worker is free, and when each of the last
     * workers x prefetch batches was taken by the training loop */
    uint64_t *worker_free, *taken;
    size_t nworkers, ntaken;
    double worker_speed;         /* (0, 1]: CPUs shared with the loop and others (budget) */
    /* the event replayed now syncs a stream its thread last uploaded to, nothing issued
     * since: the upload's wait (x.cuda() without non_blocking=True does the copy, then
     * syncs the stream), which pinned memory and non_blocking=True take away, not the
     * no-sync world */
    int upload_wait;
    /* the event replayed now waits for an event with work issued on its stream since its
     * record: it bounds how far the host runs ahead (the loss two steps back), drains
     * nothing, and stays in the no-sync world, which takes out the per-step reads alone */
    int run_ahead_bound;
    uint64_t loads, load_ns, first_load_ts, short_stretch_ns;
    uint64_t upload_iterations, wait_iterations;  /* (an_replay.iterations) */
    /* where the workers start (iter(loader)): the latest stretch a batch load would be
     * before any thread's loop ran an iteration (start-up, no load: replay.c), the loop's
     * first fetch, per world: when it began, and when it ended (the first worker was
     * loading that first batch all along); asked: there was one */
    uint64_t first_ask[AN_WORLDS], first_fetched[AN_WORLDS];
    int asked;
    /* the stretch ending at the call replayed now: a batch load (an_wi_batch_load), a pause
     * of the loop (an_wi_loop_pause); and, for AN_WI_BACKGROUND, when the background
     * thread is free again, per world; long_rhythm: a stretch of pause_min_ns or more that
     * is no pause and repeats an earlier one (replay.c, long_seen) */
    int load, pause, long_rhythm;
    /* ... of a batch load's stretch, the step's own work before the fetch (0: none known),
     * which stays on the thread in every world: a stretch right after a wait for the GPU
     * holds the step's work on what it read (logging the loss) before the next batch's
     * load, and where the loop also loads batches after no wait, those say how long a
     * load is (replay.c, step_own_of) */
    uint64_t step_own;
    uint64_t bg_free[AN_WORLDS];
    uint64_t loader_wait[AN_WORLDS];  /* per slot (an_replay.loader_wait_ns) */
    /* AN_WI_INPUT_WORKERS, per slot: of the loading thread's latest wait for a batch
     * since its latest wait for the GPU, how long (0: none), from when, and until when
     * the GPU ran work issued before it (whatif.c, worker_gap; replay.c, spun_through) */
    uint64_t batch_wait[AN_WORLDS], batch_from[AN_WORLDS], batch_busy[AN_WORLDS];
    /* the call replayed now reads tensors back where a pause of the loop may follow (a
     * checkpoint's state: an_wi_checkpoint_read): AN_WI_BACKGROUND copies it on a side
     * stream into pinned memory and the background thread waits for it, not the loop;
     * per world, when such a read was done, for the pause after it to start no earlier
     * (0: none pending). A read no pause follows is waited for after all, but its copy
     * stays pinned there (timed before the stretch after it is seen): without pauses the
     * background world's saving is no finding's */
    int ckpt_read;
    uint64_t bg_from[AN_WORLDS];
    /* the call replayed now is a download into pageable memory of a size the thread did
     * not download in the loop's latest pause_every_min iterations (replay.c,
     * rare_download): its state read every so many steps, which pinned_async leaves as
     * it is (the background change copies a checkpoint's into pinned memory) */
    int rare_download;
    /* the host's memcpy rate the trace measured, bytes/s (0: none; whatif.c, staging_ns),
     * and the bytes the small upload replayed now stages and moves where small uploads are
     * coalesced (replay.c, gather_of: with no rate, its own) */
    uint64_t host_copy_bps, gathered;
    /* how late a sleeping thread ran after its wake-up was due on the traced machine (0:
     * not given): a wait for the GPU that slept ended that much after the work; and the
     * waits, with no GPU record of their work, taken so */
    uint64_t wake_ns, waits_woken;
    /* the part of the stretch before the call replayed now in which no other thread issued
     * GPU work (what batch loads and pauses are made of), and the latest end of a call that
     * issued work, and the latest on a thread other than that one's (replay.c,
     * alone_until) */
    uint64_t alone;
    struct an_rp_busy {
        uint64_t end;
        uint32_t tid;
        size_t thread;               /* its index in threads, + 1 */
    } busy[2];
    uint64_t pauses, pause_ns, pause_cycles, readback_pauses, shortest_pause_ns;
    uint64_t best_pinned_bw;     /* best pinned H2D bytes/s seen on the GPU */
    /* Per device (GPU records' ordinal, the first AN_RP_DEVICES): a device that has not run
     * two streams' kernels at once so far runs them one at a time in every world too (no
     * world may beat the device: a change that frees the host must not make it overlap
     * kernels it never overlapped). The measured end and stream of its latest kernel, and
     * each world's replayed end of its latest kernel. */
    struct an_rp_device {
        int overlapped;
        uint64_t kernel_end_meas, kernel_stream;
        uint64_t kernel_end[AN_WORLDS];
        size_t follower;  /* the stream (+ 1) whose lazy clocks kernel_end is, 0: none
                             (replay.c, stream maps) */
    } devices[AN_RP_DEVICES];
    double best_blocking_bps;    /* host-only: the fastest blocking upload so far, bytes/s */
    double best_clean_bps;       /* ... of those that drained nothing unproven */
    uint64_t *nowait_ns;         /* per api id: the shortest call, its cost without a wait */
    int drained_unknown;         /* the last drain took work of unknown length (host-only, no
                                    wait proven): it may have waited, its time is no cost */
    /* bumped whenever a thread's clocks h may change otherwise than by its lazy clocks (a
     * call out of the rhythm, a new thread, worlds woken): operations issued in the same
     * epoch by the same thread copied the same h (replay.c, stream maps) */
    uint64_t h_epoch;
    uint64_t matched, virtual_ops, unmatched, forced, unproven_ops, unlearnt_ops;
    uint64_t ckpt_least_ns;
    uint64_t pinned_unknown_ns;
    /* the drain replayed now: the latest issue of the work it waited for on any stream,
     * measured and per world (run_virtual, AN_WI_LEAST) */
    uint64_t drain_issued, drain_issued_sim[AN_WORLDS];
};

/* cpus: the CPUs the traced process could use (0 unknown): the workers are cpus - 1. */
void an_replay_init(struct an_replay_state *st, const struct an_thresholds *th, int expect_gpu,
                    unsigned cpus);
/* Host events as the host reorder releases them; GPU records as the GPU reorder does. */
void an_replay_host(struct an_replay_state *st, const struct an_ev *ev);
void an_replay_gpu(struct an_replay_state *st, const struct an_ev *ev);
/* Replays what waits and fills *out; measured_ns is the run's wall time from first_ts. */
void an_replay_finish(struct an_replay_state *st, uint64_t first_ts, uint64_t measured_ns,
                      struct an_replay *out);
void an_replay_free(struct an_replay_state *st);
/* Every world replayed from the first event on, none woken late (an_replay_state, live
 * worlds): what the lazy replay must equal (tests/analyze/test_replay_worlds.c). */
void an_replay_wake_all(struct an_replay_state *st);
/* The DataLoader workers AN_WI_INPUT_WORKERS starts and the share of the thread's speed each
 * loads at (worker_budget.h), instead of cpus - 1 at full speed; before the first event.
 * 0 when done, -1 out of memory (the workers' world then changes nothing). */
int an_replay_set_workers(struct an_replay_state *st, unsigned workers, double speed);

#endif
