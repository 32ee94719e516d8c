/*
 * What the host's CPUs did (the shim's CPU samples, trace_format.h: CPU_THREAD and
 * CPU_PROC): kept during the pass as cumulative series, summed over the steady state at
 * finish. The driver calls show when the GPU waits for the host; these say whether the
 * training thread was busy (loading batches itself, or Python), whether worker processes
 * ran and how hard, or whether nothing was on a CPU at all (the input waits on storage).
 */
#ifndef GPUWATCH_ANALYZE_CPU_USE_H
#define GPUWATCH_ANALYZE_CPU_USE_H

#include <stddef.h>
#include <stdint.h>

#include "an_event.h"

#define AN_CPU_MAX_THREADS 16   /* threads with samples kept (the first seen) */
#define AN_CPU_MAX_SAMPLES 4096 /* per series; beyond, every other one is dropped */

struct an_cpu_point {
    uint64_t ts, cpu_ns;        /* cumulative CPU time at ts */
    uint64_t wait_ns, wait_cpu_ns;  /* a thread's: cumulative time in calls that may wait
                                       for the GPU, and its CPU time in them */
    uint64_t runq_ns;           /* a thread's: cumulative time runnable without a CPU */
    int has_runq;               /* ... recorded */
    uint32_t count, active;     /* CPU_PROC: descendants alive, and those that ran */
    uint64_t process_cpu_ns;    /* CPU_PROC: the process's own */
    uint64_t machine_ns;        /* CPU_PROC: every process's on the process's CPUs */
    int has_machine;            /* ... recorded */
};

struct an_cpu_series {
    uint64_t id;                /* a thread's tid; 0 for the process series */
    struct an_cpu_point *points;
    size_t n, cap;
    size_t stride;              /* samples per point kept (decimation) */
    size_t skipped;             /* samples since the last point kept */
};

struct an_cpu_samples {
    struct an_cpu_series process;           /* cpu_ns = the descendants' */
    struct an_cpu_series threads[AN_CPU_MAX_THREADS];
    size_t nthreads;
};

/* The steady state's CPU use (an_model.cpu). */
struct an_cpu_use {
    int known;                  /* samples cover the steady state */
    uint32_t train_tid;         /* the thread judged: the process's main thread when
                                   sampled, else the busiest traced thread */
    double train_busy;          /* its share on a CPU of the steady span outside its waits
                                   for the GPU (0..1): spinning in a synchronize is not
                                   work of its own */
    double train_wait;          /* its share of the steady span in calls that may wait */
    double train_wait_cpu;      /* the share of that time it was on a CPU */
    int runq_known;             /* the samples say when it waited for a CPU */
    double train_runq;          /* its share of the steady span runnable but without a CPU
                                   (preempted: more runnable threads than CPUs) */
    double process_cpus;        /* the process's CPU time / span (CPUs kept busy) */
    double workers_cpus;        /* its descendants' CPU time / span */
    int others_known;           /* the samples say how busy the machine's CPUs were */
    double others_cpus;         /* CPUs kept busy by other processes (not this one nor its
                                   descendants): what they take from the workers */
    double train_cpus;          /* the training thread's CPU time / span, waits included */
    double traced_others_cpus;  /* the process's other threads that make CUDA calls (an
                                   autograd thread): their CPU time / span. Threads that
                                   make none (intra-op pools) work for whichever thread
                                   runs CPU ops, the loads among them */
    uint32_t workers;           /* most descendants that ran between two samples */
    uint32_t processes;         /* most descendants alive */
};

void an_cpu_sample(struct an_cpu_samples *s, const struct an_ev *ev);
/* Sums [start, end) (the steady state); pid is the process's (its main thread's tid). */
void an_cpu_summarize(const struct an_cpu_samples *s, uint64_t start, uint64_t end,
                      uint32_t pid, struct an_cpu_use *out);
/* The training thread's time runnable without a CPU within [t0, t1): its cumulative
 * counter spread evenly over each interval between two samples (before the first and after
 * the last, at the nearest interval's rate). The training thread: the process's main one
 * (pid) when sampled, else the one with the most CPU time. 0 where its samples do not say. */
uint64_t an_cpu_preempted(const struct an_cpu_samples *s, uint32_t pid, uint64_t t0,
                          uint64_t t1);
void an_cpu_free(struct an_cpu_samples *s);

#endif
