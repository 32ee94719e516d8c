/* Runs tests/e2e/workload under the shim and the simulated driver, and tallies the traces
 * it leaves, so end-to-end tests can assert exact counts. */
#ifndef GW_E2E_HARNESS_H
#define GW_E2E_HARNESS_H

#include <stdint.h>
#include <sys/types.h>

#include "gpuwatch/trace_format.h"

#define RUN_MAX_OUTPUT 65536
#define TALLY_MAX_FILES 8
#define TALLY_MAX_THREADS 64

struct run_result {
    int exited;          /* 1 when it exited, 0 when a signal ended it */
    int status;          /* exit code or signal number */
    pid_t pid;
    char out[RUN_MAX_OUTPUT];
    char err[RUN_MAX_OUTPUT];
    char trace_dir[256];
};

struct run_options {
    const char *program;         /* NULL: the workload */
    const char *const *args;     /* program arguments, NULL-terminated */
    const char *const *env;      /* extra NAME=VALUE, NULL-terminated */
    int preload;                 /* 0: run without the shim (control) */
    const char *trace_dir;       /* NULL: a fresh temporary directory */
    /* Called in the parent once the child printed a line with this text, then the child
     * is left to finish (after_ready may signal it). */
    const char *ready_text;
    void (*after_ready)(pid_t pid);
    /* RLIMIT_FSIZE of the child in bytes (0: unlimited): a disk that fills up mid-run */
    unsigned long long file_size_limit;
    /* 1: the child's stderr is a pipe no process reads (`prog 2>&1 | head` after head left):
     * a write there fails with EPIPE and raises SIGPIPE; err stays empty */
    int stderr_reader_gone;
};

struct file_tally {
    char path[512];
    uint32_t pid, ppid;
    struct gw_file_header header;
    uint64_t calls[GW_API_ID_LIMIT];
    uint64_t call_ns[GW_API_ID_LIMIT];  /* the calls' durations, summed */
    uint64_t errors[GW_API_ID_LIMIT];
    uint64_t total_calls;
    uint64_t lost_events;
    uint64_t damage;
    uint64_t htod_pinned, htod_pageable;
    uint64_t copies[6][4];        /* host copy calls by [enum gw_copy_dir][enum gw_host_kind] */
    uint64_t copy_bytes;          /* bytes of all host copy calls */
    uint64_t set_bytes;           /* bytes of all host memset calls */
    uint64_t proc_outcome[3];
    uint64_t launches_named;     /* launches whose shape resolves to a kernel name */
    char first_kernel[128];      /* name of the first launched kernel */
    uint32_t first_grid_x, first_block_x;
    uint32_t tids[TALLY_MAX_THREADS];
    uint64_t launches_per_tid[TALLY_MAX_THREADS];
    unsigned threads;
    uint64_t last_oom_bytes;     /* bytes asked by the last failed allocation */
    /* GPU timeline */
    uint64_t gpu_kernels, gpu_memcpys, gpu_memsets, gpu_lost, correlations;
    uint64_t gpu_memcpy_pinned, gpu_memcpy_pageable;
    uint64_t memcpy_pinned_ns_min, memcpy_pinned_ns_max;    /* GPU copy records' durations */
    uint64_t memcpy_pageable_ns_min, memcpy_pageable_ns_max;
    uint64_t kernel_dur_min, kernel_dur_max;     /* ns */
    uint64_t kernels_stream_known; /* kernel records whose CUPTI stream maps to a host stream */
    uint64_t kernels_overlapping;  /* kernels that start before the previous one on their stream ended */
    uint64_t launches_linked_once; /* launch calls with exactly one GPU kernel linked to them */
    uint64_t kernels_unlinked;     /* kernel records with no launch call behind them */
    uint64_t kernels_before_launch;/* kernel records starting before their launch call began */
    /* every GPU record (kernel, copy, memset) against the call its correlation names */
    uint64_t records_linked;       /* linked to a successful launch, copy or set call */
    uint64_t records_unlinked;     /* no such call behind them */
    uint64_t records_other_stream; /* linked, but on another stream than the call's */
    uint64_t records_other_work;   /* linked, but not what the call issues: a kernel of another
                                      name than the launch's, a copy to a set call... */
    uint64_t issuing_calls;        /* successful launch (not graph), copy and set calls */
    uint64_t issuing_linked_once;  /* ... with exactly one record linked to them */
    uint64_t graph_launches, graph_records;  /* cuGraphLaunch* calls, the records linked to them */
    /* a sampled timeline (GW_REC_GPU_WINDOW): windows opened; issuing calls inside a window
     * (from its settled opening to its shutting), those with exactly one record; outside
     * every window; records linked to a call outside every window (none may be) */
    uint64_t gpu_windows, issuing_inside, issuing_inside_linked_once, issuing_outside;
    uint64_t records_of_calls_outside;
    uint64_t calls_across_openings;  /* issuing and graph calls under way as a window opened */
    /* CPU samples */
    uint64_t cpu_proc_samples, cpu_thread_samples;
    uint64_t max_descendants, max_descendants_cpu_ns, max_active;
    uint64_t main_thread_cpu_ns;   /* the latest sample of the thread whose tid is the pid */
    uint64_t main_thread_wait_ns, main_thread_wait_cpu_ns;  /* ... its waits for the GPU */
    uint64_t main_thread_runq_ns;  /* ... runnable without a CPU (0: not recorded) */
    /* NVTX */
    uint64_t range_pushes, range_pops, marks, range_starts, range_ends;
    uint64_t pushes_named[4];      /* "step", "forward", "backward", "epoch" */
    uint64_t domain_pushes_named;  /* pushes in domain "gpuwatch-test" */
    unsigned nvtx_max_depth;       /* deepest nesting seen on one thread (1 = no nesting) */
    unsigned nvtx_unbalanced;      /* threads whose pushes and pops do not match */
};

struct tally {
    unsigned files;
    struct file_tally file[TALLY_MAX_FILES];
};

void run_workload(const struct run_options *options, struct run_result *result);
/* Reads every trace in dir; returns the number of files. */
unsigned tally_traces(const char *dir, struct tally *tally);
/* The file written by this pid, or NULL. */
const struct file_tally *tally_for_pid(const struct tally *tally, pid_t pid);
unsigned api_id_of(const char *name);
void remove_dir(const char *dir);

#endif
