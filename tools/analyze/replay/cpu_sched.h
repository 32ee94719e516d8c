/*
 * The host's CPUs, replayed as the GPU's streams are (issue 58): the threads of a world, each
 * a program of steps (CPU work, sleeps, waits for events, signals), share the CPUs the
 * process may use, other processes' load among them, and the replay says when each thread
 * ends, how much CPU it used and how long it was runnable without a CPU.
 *
 * The model is processor sharing, the fluid limit of a fair scheduler: the capacity (CPUs,
 * fractional for a cgroup quota) is divided among the runnable threads, none getting more
 * than its cap (one CPU; an outside process's load, its measured share); what one thread
 * cannot take the others share (water-filling). A thread is runnable while it works and
 * while it spins in a wait (CUDA's default schedule: a wait for the GPU holds a CPU); a
 * sleeping wait or a sleep is off the CPUs. Events are counters (semaphores): a signal
 * adds one, a wait takes one, or waits until there is one; so a DataLoader's queue is an
 * event its workers signal and the training thread waits on, and its prefetch bound one the
 * training thread signals as it takes batches and each worker waits on before a load. The
 * GPU's completions reach the threads as events signalled at given times (an_cs_signal_at).
 *
 * The GPU is one more such resource (a pool): a stream is a thread of the GPU's pool whose
 * steps wait for the launches its host thread signals and work for its kernels' time, so
 * that a change of the program (a sync removed, loads moved to workers) is an edit of the
 * threads' steps replayed by this one engine, the device's time and the CPUs' together.
 *
 * The fluid model sees a waking thread get its share at once; a real scheduler gives it the
 * CPU a tick or a preemption later (a spinning thread preempted ends its wait that much
 * later): what the replay's checks against the measured run-queue time show.
 */
#ifndef GPUWATCH_ANALYZE_CPU_SCHED_H
#define GPUWATCH_ANALYZE_CPU_SCHED_H

#include <stddef.h>
#include <stdint.h>

enum an_cs_kind {
    AN_CS_WORK,    /* ns of CPU time */
    AN_CS_SLEEP,   /* ns of wall time off the CPUs (I/O, time.sleep) */
    AN_CS_WAIT,    /* take one from event `event`, waiting until there is one; spin: on a
                      CPU (runnable) meanwhile, else asleep */
    AN_CS_SIGNAL,  /* add one to event `event` (at once, no time) */
};

struct an_cs_step {
    uint8_t kind;    /* enum an_cs_kind */
    uint8_t spin;    /* AN_CS_WAIT: the thread spins */
    uint32_t event;  /* AN_CS_WAIT, AN_CS_SIGNAL: the event's index */
    double ns;       /* AN_CS_WORK, AN_CS_SLEEP */
};

/* A thread: its steps run in order, `repeat` times over (0 and 1: once; a thread that never
 * ends, another process's load, repeats AN_CS_FOREVER times and does not hold the replay's
 * end). cap: the most of one CPU it takes (0: 1). */
#define AN_CS_FOREVER UINT32_MAX
struct an_cs_thread {
    const struct an_cs_step *steps;
    size_t nsteps;
    uint32_t repeat;
    double cap;
    uint32_t pool;       /* the resource it runs on: 0 the host's CPUs, others as set */
    /* the replay's: */
    size_t at;           /* the step under way */
    uint32_t round;      /* the repeat under way */
    double left;         /* of the step under way: CPU ns to work, or the wall time a sleep ends */
    double rate;         /* the CPU it gets now (0: off the CPUs) */
    /* what the replay measured */
    double cpu_ns;       /* CPU time used (working and spinning) */
    double runq_ns;      /* runnable without the CPU it could take: integral of cap - rate */
    double spin_ns;      /* of cpu_ns, spent spinning in waits */
    double end_ns;       /* when its last step ended (0: not yet) */
    int done;
};

#define AN_CS_MAX_THREADS 256
#define AN_CS_MAX_POOLS 4
#define AN_CS_MAX_EVENTS 64
#define AN_CS_MAX_TIMED 4096

struct an_cs {
    double capacity[AN_CS_MAX_POOLS];  /* each pool's: [0] the CPUs the process may use
                                          (its quota), a GPU 1 */
    struct an_cs_thread *threads;
    size_t nthreads;
    uint64_t count[AN_CS_MAX_EVENTS];        /* each event's signals not yet taken */
    struct { double at; uint32_t event; } timed[AN_CS_MAX_TIMED];  /* signals to come, by time */
    size_t ntimed;
    double now;
};

/* cs over `cpus` CPUs (pool 0) and the threads (their steps and pools set; the rest is
 * zeroed here): 0, or -1 for more than AN_CS_MAX_THREADS threads, an event or a pool out
 * of range. */
int an_cs_init(struct an_cs *cs, double cpus, struct an_cs_thread *threads, size_t nthreads);
/* Pool `pool` (1 .. AN_CS_MAX_POOLS - 1) holds `capacity` (a GPU: 1): 0, or -1. */
int an_cs_set_pool(struct an_cs *cs, uint32_t pool, double capacity);
/* Event `event` is signalled at time `at` (the GPU's completion): 0, or -1 when the table is
 * full or the event out of range. */
int an_cs_signal_at(struct an_cs *cs, uint32_t event, double at);

enum an_cs_status {
    AN_CS_ALL_DONE = 0,  /* every thread that ends has ended */
    AN_CS_UNTIL,         /* `until` was reached first */
    AN_CS_STUCK,         /* threads wait for events nothing will signal */
};
/* Replays until every thread that ends has ended, or `until` (ns). */
enum an_cs_status an_cs_run(struct an_cs *cs, double until);

#endif
