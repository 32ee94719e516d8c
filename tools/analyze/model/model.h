/*
 * The model of one process's run, built in one streaming pass over its events (time
 * ordered up to a window, see reorder.h) and read by the rules:
 *
 *   an_model_new -> an_model_feed_host / an_model_feed_gpu (any interleaving) ...
 *                -> an_model_finish -> rules read struct an_model -> an_model_free
 *
 * Memory is bounded by live allocations, the reorder windows, the host history the GPU
 * side still needs, and one small record per step boundary candidate (decimated past a
 * cap): never by the number of events.
 */
#ifndef GPUWATCH_ANALYZE_MODEL_H
#define GPUWATCH_ANALYZE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "an_event.h"
#include "comm_samples.h"
#include "cpu_use.h"
#include "gpuwatch/trace_format.h"
#include "kernel_times.h"
#include "mem_timeline.h"
#include "phases.h"
#include "py_lines.h"
#include "replay.h"
#include "thresholds.h"
#include "worker_budget.h"

struct gw_stack;

/* Why the GPU sat idle (issue 4, "GPU idle time by cause"). */
enum an_cause {
    AN_CAUSE_INPUT = 0,   /* the host made no CUDA call for a long stretch (input pipeline) */
    AN_CAUSE_H2D,         /* the host was blocked in a synchronous or pageable H2D copy */
    AN_CAUSE_SYNC,        /* a synchronizing call drained the queue; the host refilled it */
    AN_CAUSE_LAUNCH,      /* the host was issuing work slower than the GPU ran it */
    AN_CAUSE_ALLOC,       /* the host was in cuMemFree (waits for the device) / alloc */
    AN_CAUSE_OTHER,       /* work was queued but waited (events, other streams), unknown */
    AN_CAUSE_COUNT,
};
const char *an_cause_name(enum an_cause cause);   /* "input_pipeline", ... */

/* Cumulative counters; step and steady-state figures are differences of copies. */
struct an_totals {
    uint64_t idle_gpu_ns[AN_CAUSE_COUNT];  /* GPU records: idle gaps, attributed */
    uint64_t idle_host_ns[AN_CAUSE_COUNT]; /* host only: idle proven by drains */
    uint64_t gpu_busy_ns;                  /* GPU records: union per device, summed */
    uint64_t sync_wait_ns, syncs;          /* host time in draining calls */
    uint64_t drains;                       /* calls after which no stream held work */
    uint64_t launches, launch_ns;          /* kernel launches and their host time */
    uint64_t graph_launches;               /* of them, CUDA graph replays (cuGraphLaunch) */
    uint64_t work_calls;                   /* calls that issue GPU work */
    uint64_t h2d_blocked_ns, h2d_blocked_calls, h2d_blocked_bytes;
    /* of those, asynchronous uploads the thread's next call waited for, a sync of their
     * stream (x.cuda() from pinned memory without non_blocking=True: the copy, then the
     * stream's sync; replay.h, upload_wait): counted with the sync's wait as their time */
    uint64_t h2d_waited_calls;
    uint64_t uploads;                      /* host-to-device copies, any memory */
    uint64_t d2h_blocked_bulk;             /* blocking downloads into pageable memory of
                                              h2d_min_bytes or more */
    uint64_t allocs, frees, alloc_ns;      /* device alloc/free calls, their host time */
    uint64_t calls;
    uint64_t host_gap_ns;                  /* stretches with no CUDA call (>= host_gap_min) */
    uint64_t gpu_kernels, gpu_kernel_ns;
};

#define AN_MAX_DEVICES 16

struct an_device_busy {
    int32_t ordinal;
    uint64_t busy_ns;            /* closed busy periods */
    uint64_t first, last;        /* first GPU start, latest GPU end */
    uint64_t open_start, open_end;
    uint64_t records;
};

/* An idle interval kept for the report ("largest intervals with times"). */
struct an_interval {
    uint64_t start, end;
    uint8_t cause;
};
#define AN_KEEP_INTERVALS 16

/* Transfers by direction (enum gw_copy_dir) and host memory kind (enum gw_host_kind). */
struct an_xfer {
    uint64_t count, bytes;
    uint64_t host_ns;            /* time the host spent in the calls */
    uint64_t blocking, blocking_ns, blocking_bytes;
    uint64_t sync_api;           /* non-Async entry points */
    uint64_t small;              /* copies under 64 KiB */
    uint64_t bulk, bulk_ns, bulk_bytes;  /* blocking ones of h2d_min_bytes or more (no
                                            scalar read, .item(), among them) */
    uint64_t gpu_count, gpu_bytes, gpu_ns;  /* CUPTI memcpy records */
};
#define AN_DIRS 6
#define AN_HOST_KINDS 4

struct an_oom {
    uint64_t ts, request;
    uint64_t live;               /* device bytes this process held */
    uint64_t est_free;           /* capacity - others - live (0 unknown) */
    int fragmented;              /* est_free >= request: failed while enough was free */
};
#define AN_KEEP_OOMS 16

struct an_leftover {             /* allocations still held at exit, grouped */
    uint64_t bytes_each, count, first_ts;
    uint32_t tid;
    uint8_t kind;
};
#define AN_KEEP_LEFTOVERS 8

/* Where device memory still held at exit was allocated: allocations grouped by the STACK
 * of the allocating call (alloc_sites.c). */
struct an_alloc_site {
    uint64_t stack;              /* STACK id; 0: no call stack was recorded */
    uint64_t bytes, count;
    char where[160];             /* "leak_step <- main (train)"; "" when unknown */
};
#define AN_KEEP_SITES 3
/* The name of a site inside PyTorch's caching allocator (alloc_sites.c). */
#define AN_SITE_PYTORCH "PyTorch's caching allocator"

struct an_memory {
    uint64_t capacity;           /* device total bytes (header or cuMemGetInfo), 0 unknown */
    uint64_t others_at_start;    /* total - free at the first context */
    uint64_t live[AN_MEM_KINDS], live_total;
    uint64_t peak_total, peak_ts, peak_by_kind[AN_MEM_KINDS];
    uint64_t pinned_live, pinned_peak;
    uint64_t allocs, frees, failed;
    uint64_t ooms;               /* CUDA_ERROR_OUT_OF_MEMORY from allocations */
    uint64_t ooms_fragmented;
    struct an_oom oom[AN_KEEP_OOMS];
    size_t noom;
    /* OOM-retry storms: an OOM, a burst of frees, a retried allocation that worked */
    uint64_t storms, storm_ns, storm_frees, storm_freed_bytes;
    uint64_t storm_first, storm_last;
    uint64_t unrecovered_ooms;
    uint64_t at_exit_bytes, at_exit_count;
    struct an_leftover leftover[AN_KEEP_LEFTOVERS];
    size_t nleftover;
    /* the largest allocation sites of what is held at exit (none when no allocation
     * carried a call stack) */
    struct an_alloc_site site[AN_KEEP_SITES];
    size_t nsites;
    uint64_t unknown_frees;      /* frees of pointers never seen allocated */
    /* PyTorch's caching allocator, where the trace has its blocks (a PyTorch profiler
     * trace's [memory] events): the blocks taken and given back, held above as
     * allocations (peak_total is then its peak allocated), and the most it reserved */
    uint64_t blocks_taken, blocks_given_back, reserved_peak;
};

/* Steps, as found after the pass. */
enum an_step_source { AN_STEPS_NONE = 0, AN_STEPS_NVTX, AN_STEPS_AUTO };

struct an_steps {
    enum an_step_source source;
    char marker[96];             /* "NVTX range train_step", "cuStreamSynchronize", ... */
    /* the same, for finding the boundaries again in the trace (gpuwatch export):
     * marker_tier an enum an_step_tier; marker_api the boundary call's api id (drain and
     * upload tiers: a boundary is such a call's end, an upload's start); marker_name the
     * NVTX name's string id or the kernel's launch shape id */
    int marker_tier;
    uint16_t marker_api;
    uint64_t marker_name;
    uint64_t count;              /* steps (intervals between boundaries) */
    uint64_t last_end_ns;        /* the last step's end: the last boundary, or where the
                                    last step range closed (no boundary follows it) */
    uint64_t warmup;             /* leading steps counted as warm-up */
    uint64_t steady;             /* count - warmup */
    uint64_t median_ns, mean_ns, p90_ns, min_ns, max_ns;   /* steady steps */
    uint64_t warmup_ns;          /* first event to the first steady boundary */
    double regularity;
    /* memory held at each steady boundary: growth figures for leak / fragmentation */
    uint64_t live_first, live_last, live_min, live_max;
    uint64_t growth_steps;       /* steady steps in which memory held grew */
    uint64_t sampled_steps;      /* steady steps with a memory sample */
    uint64_t live_mid;           /* at the middle steady sample */
    uint64_t live_dip;           /* the most it fell below its running maximum */
};

/* The run in equal slices of time: GPU busy and idle by cause in each (report plots). */
#define AN_TIME_SLICES 96
struct an_time_slice {
    uint64_t start, end;         /* trace clock */
    uint64_t busy_ns;            /* GPU records: busy; host only: the slice less proven idle */
    uint64_t idle_ns[AN_CAUSE_COUNT];
};

/* Device memory held over time: at step boundaries, evenly thinned to at most this many. */
#define AN_MEM_SERIES 64
struct an_mem_point {
    uint64_t ts, bytes;
};

/* Input-pipeline idle time by the length of its stretch (pauses.c). */
#define AN_PAUSE_BUCKETS 512
/* A stretch of input-pipeline idle time and where it began. */
struct an_idle_stretch {
    uint64_t start, ns;
};
#define AN_KEEP_LONG_STRETCHES 65536

struct an_idle_lengths {
    uint64_t count[AN_PAUSE_BUCKETS], ns[AN_PAUSE_BUCKETS];
    /* The first AN_KEEP_LONG_STRETCHES stretches of pause_min_ns or more (every pause is
     * one), with their start, to tell the steady state's pauses from the warm-up's;
     * longs_lost counts the others. */
    struct an_idle_stretch *longs;
    size_t nlongs, longs_cap;
    uint64_t longs_lost;
};

struct an_kernel_count {
    uint64_t shape_id, launches;
    char name[64];
};
#define AN_KEEP_KERNELS 4
#define AN_KEEP_KERNEL_TIMES 10

struct an_model {
    struct an_thresholds th;
    struct gw_file_header header;
    int has_header;
    char path[256];

    /* the run */
    uint64_t first_ts, last_ts;  /* first event start, latest event end (host or GPU) */
    uint64_t wall_ns;
    int gpu_timeline;            /* 1: GPU records present (CUPTI); 0: inferred from host */
    uint64_t gpu_records, gpu_lost, host_lost;
    uint64_t gpu_records_end;    /* latest end of a GPU record (0: none) */
    uint64_t host_work_end;      /* end of the latest call that issued GPU work (0: none) */
    /* GPU records stop this long before host_work_end (gpu_cut_min_ns, gpu_cut_share):
     * the timeline is cut, gpu_timeline 0 though there are records; 0 when not cut */
    uint64_t gpu_cut_ns;
    /* a sampled timeline with gaps (GW_FEAT_GPU_SAMPLED): GPU records in windows only, so
     * idle time, causes and the replay come from the host's record, and the records give
     * the kernels' lengths and the GPU busy share within the windows */
    int gpu_sampled;
    uint64_t gpu_windows, gpu_window_ns;  /* windows opened, and the time they covered */
    uint64_t gpu_window_busy_ns;         /* GPU busy time the records show (in the windows) */
    uint64_t host_calls;
    struct an_phases phases;     /* top-level NVTX ranges by name, idle inside (phases.h) */
    uint64_t calls_by_api[GW_API_ID_LIMIT];  /* host_calls by entry point (api id; 0: ids
                                                this build does not know) */

    struct an_totals total;      /* over the whole run */
    struct an_totals steady;     /* over the steady state (the whole run without steps) */
    uint64_t steady_start, steady_end;

    struct an_device_busy dev[AN_MAX_DEVICES];
    size_t ndev;

    struct an_steps steps;
    struct an_cpu_use cpu;       /* the steady state's, from the shim's CPU samples */
    struct an_replay replay;     /* the what-if replay: wall time as measured and per change */
    /* a sampled timeline's kernel times the replay learnt (replay.h, kernel_time), kept
     * past the pass: a second pass starts with them (an_model_seed_kernels) */
    struct gw_map kernel_time;
    struct an_worker_budget budget;  /* the workers the replay started, when budgeted */
    int budgeted;
    struct an_memory mem;
    struct an_py_lines py;       /* the user's Python lines per kind of call (py_lines.h) */
    struct an_mem_point mem_series[AN_MEM_SERIES];
    size_t nmem_series;
    struct an_mem_timeline held;  /* memory held by kind over the whole run, in time bins */
    struct an_time_slice over_time[AN_TIME_SLICES];  /* first_ts..last_ts in equal slices */
    size_t nover_time;
    struct an_xfer xfer[AN_DIRS][AN_HOST_KINDS];
    uint64_t best_bw[AN_DIRS];   /* best bytes per second seen per direction */

    struct an_interval largest[AN_KEEP_INTERVALS];  /* longest idle, steady state first */
    /* input-pipeline idle by stretch length: [0] host evidence, [1] GPU records */
    struct an_idle_lengths input_lengths[2];
    size_t nlargest;

    struct an_kernel_count top_kernels[AN_KEEP_KERNELS];
    size_t ntop_kernels;
    uint64_t kernel_shapes;      /* distinct launched kernels */
    /* the kernels with most GPU time, from the GPU records (none without a timeline) */
    struct an_kernel_time kernel_times[AN_KEEP_KERNEL_TIMES];
    size_t nkernel_times;
    /* collectives (NCCL/RCCL kernels, GPU records): how many, their GPU time, and the part
     * of it no compute kernel ran beside (exposed: the step waits for it) */
    uint64_t comm_kernels, comm_ns, comm_exposed_ns;
    struct an_comm_samples comm_samples;  /* their times, to line ranks up (run_collectives.c) */

    /* draining calls by entry point (whole run), and device-to-host copies of a scalar
     * (<= 64 bytes, what .item() makes) among them */
    uint64_t drains_by_api[GW_API_ID_LIMIT];
    uint64_t drain_ns_by_api[GW_API_ID_LIMIT];
    uint64_t scalar_d2h;

    uint64_t late_events;        /* released after later ones (reorder window too small) */
    uint64_t assumed_drains;     /* host only: streams taken as done without a proof (work
                                    no call waited for, two drains of other streams ago) */
    uint64_t history_dropped;    /* host history lost to its cap: attribution is partial */

    /* Names for the report, asked at finish while the trace is still open: what 0 is a
     * string id (NVTX names), what 1 a launch shape id (kernel names). May be NULL. */
    const char *(*resolve)(void *user, int what, uint64_t id);
    /* A STACK definition by id (with resolve_user), asked at finish like resolve. */
    const struct gw_stack *(*stack)(void *user, uint64_t id);
    void *resolve_user;

    struct an_model_state *state;  /* the pass's working state (model.c), NULL after finish */
};

/* A double as u64, clamped: figures derived from corrupt traces can be out of range, and a
 * conversion out of range is undefined. */
static inline uint64_t an_u64(double v)
{
    return v > 0 ? (v < 1.8e19 ? (uint64_t)v : UINT64_MAX) : 0;
}

/* Derived figures the rules and reports share. */
/* The share of the process's collective time that compute ran beside (0 without any). */
double an_comm_overlap_share(const struct an_model *m);
/* qsort's comparison of two uint64_t, ascending (figures.c). */
int an_cmp_u64(const void *a, const void *b);
double an_idle_ns(const struct an_model *m, const struct an_totals *t, enum an_cause c);
/* A phase's idle time by cause, of the timeline an_idle_ns reads. */
double an_phase_idle_ns(const struct an_model *m, const struct an_phase *p, enum an_cause c);
/* GPU busy over [start, end): exact with GPU records, else end - start minus proven idle
 * (an upper bound). */
uint64_t an_busy_ns(const struct an_model *m, const struct an_totals *t, uint64_t span);
uint64_t an_steady_span(const struct an_model *m);
double an_gpu_util(const struct an_model *m);          /* whole run */
double an_steady_util(const struct an_model *m);
/* steady-state steps, or 1 when no steps were found (figures are then per run) */
uint64_t an_steady_steps(const struct an_model *m);

/* The names and stacks of the trace being read (resolve, stack, resolve_user above); the
 * replay meets a sampled timeline's kernel records with their calls by these names. NULLs
 * once the trace is closed. */
void an_model_set_resolver(struct an_model *m, const char *(*resolve)(void *, int, uint64_t),
                           const struct gw_stack *(*stack)(void *, uint64_t), void *user);

struct an_model *an_model_new(const struct an_thresholds *th, const struct gw_file_header *h);
/* Before any event: the replay starts knowing the kernel times an earlier pass over the
 * same trace learnt (a sampled timeline's records reach it a reorder window after the
 * calls they time). -1 out of memory. */
int an_model_seed_kernels(struct an_model *m, const struct an_model *earlier);
/* The CPUs the traced process could use (--cpus), before any event: the DataLoader
 * workers the replay gives the input pipeline (the header's count otherwise). */
void an_model_set_cpus(struct an_model *m, unsigned cpus);
/* The machine the trace measured (GW_REC_HOST_COPY): the host's memcpy rate, bytes/s, what
 * gathering small uploads into one pinned buffer costs (the replay's pinned_async world);
 * a sleeping thread's wake-up latency, ns, what a wait for the GPU that slept returned
 * after the work (0: not given). */
void an_model_set_host_copy(struct an_model *m, uint64_t bytes_per_s, uint64_t wake_ns);
/* Host events in time order (late ones tolerated), and GPU records in time order. */
void an_model_feed_host(struct an_model *m, const struct an_ev *ev);
void an_model_feed_gpu(struct an_model *m, const struct an_ev *ev);
/* The host side has been seen up to this time (what the host reorder released). */
void an_model_host_progress(struct an_model *m, uint64_t ts);
/* an_model_feed_host then an_model_host_progress(m, ev->ts), in one call: what the feeder
 * does with each host event its reorder releases. */
void an_model_feed_host_released(struct an_model *m, const struct an_ev *ev);
/* Ends the pass: attributes what is pending, finds steps, computes the figures. */
void an_model_finish(struct an_model *m);
void an_model_free(struct an_model *m);

/* Convenience for tests and single streams: feeds events (any order within the reorder
 * window) through both reorders and finishes (feeder.c: the feeder drives the model). */
void an_model_feed_all(struct an_model *m, const struct an_ev *events, size_t n);

#endif
