/* The CPU samples of cpu_sampler.h, from /proc (trace_format.h: GW_REC_CPU_THREAD and
 * GW_REC_CPU_PROC). Runs on the writer thread only, so it may allocate and block briefly;
 * anything it cannot read is left out of the sample, never reported. */
#include "cpu_sampler.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "machine_cpu.h"
#include "recorder.h"
#include "recorder_internal.h"

static uint64_t last_sample_ns;
static int sampled_once;
/* the machine's busy time when the trace started: samples say how much since */
static uint64_t machine_busy_at_start;
static int machine_known;
/* Each descendant's CPU time at the previous sample, to tell the ones at work. */
static struct { pid_t pid; uint64_t cpu_ns; } previous[GW_CPU_MAX_DESCENDANTS];
static size_t nprevious;

/* The threads other than the main one that forked (up to GW_CPU_FORKERS), as the last
 * full read of the process's own threads found them. */
#define GW_CPU_FORKERS 16
static pid_t forkers[GW_CPU_FORKERS];
static size_t nforkers;

/* A program of dozens of threads (PyTorch's) would cost the writer a children list each,
 * each round. All of them are read once a second (GW_CPU_FULL_SCAN_NS); in between, the
 * main thread's (where a DataLoader forks its workers) and the forkers'. */
#define GW_CPU_FULL_SCAN_NS 1000000000ull
static uint64_t full_scan_ns;
static int full_scan_done;

static void sampler_reset(void)
{
    last_sample_ns = 0;
    sampled_once = 0;
    nprevious = 0;
    nforkers = 0;
    full_scan_done = 0;
    machine_known = gw_machine_busy_ns(&machine_busy_at_start) == 0;
}

/* A small /proc file, NUL-terminated, into buf: 0, or -1 when it cannot be read. */
static int read_proc(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* utime + stime of a /proc stat file, in ns: 0, or -1 when it cannot be read. */
static int stat_cpu_ns(const char *path, uint64_t *ns)
{
    char buf[1024];
    if (read_proc(path, buf, sizeof buf) != 0)
        return -1;
    /* the command name (field 2) may hold spaces and parentheses: count from its end */
    const char *p = strrchr(buf, ')');
    unsigned long long utime, stime;
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                     &stime) != 2)
        return -1;
    long ticks = sysconf(_SC_CLK_TCK);
    *ns = (uint64_t)(utime + stime) * (1000000000ull / (uint64_t)(ticks > 0 ? ticks : 100));
    return 0;
}

/* A /proc schedstat file's first two fields: ns on a CPU (the scheduler's exact
 * sum_exec_runtime, what stat's utime + stime give in clock ticks) and ns runnable, waiting
 * for a CPU (run_delay); 0, or -1 when it cannot be read (no CONFIG_SCHED_INFO). One file a
 * thread and a round, not two: the writer's cost is its syscalls. */
static int schedstat_ns(const char *path, uint64_t *on_cpu_ns, uint64_t *runq_ns)
{
    char buf[128];
    if (read_proc(path, buf, sizeof buf) != 0)
        return -1;
    unsigned long long on_cpu, waiting;
    if (sscanf(buf, "%llu %llu", &on_cpu, &waiting) != 2)
        return -1;
    *on_cpu_ns = on_cpu;
    *runq_ns = waiting;
    return 0;
}

/* Appends the children pid's thread tid forked to pids[*n..cap); 1 when its list could be
 * read. */
static int add_task_children(pid_t pid, pid_t tid, pid_t *pids, size_t *n, size_t cap)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[4096];
    size_t len = 0;
    ssize_t got;
    while (len < sizeof buf - 1 && (got = read(fd, buf + len, sizeof buf - 1 - len)) > 0) {
        len += (size_t)got;
        if ((size_t)got < sizeof buf - 1 - (len - (size_t)got))
            break;  /* (short: the end; no second read to find it) */
    }
    close(fd);
    buf[len] = '\0';
    for (char *p = buf, *end; *n < cap; p = end) {
        long child = strtol(p, &end, 10);
        if (end == p)
            break;
        pids[(*n)++] = (pid_t)child;
    }
    return 1;
}

/* Appends the children of every thread of pid to pids[*n..cap); returns how many of its
 * threads' children lists could be read. note_forkers: the process's own, whose threads
 * other than pid that forked become `forkers`. */
static size_t add_children(pid_t pid, pid_t *pids, size_t *n, size_t cap, int note_forkers)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return 0;
    size_t lists = 0;
    struct dirent *t;
    while ((t = readdir(tasks)) != NULL && *n < cap) {
        if (t->d_name[0] < '0' || t->d_name[0] > '9')
            continue;
        pid_t tid = (pid_t)atoi(t->d_name);
        size_t before = *n;
        lists += (size_t)add_task_children(pid, tid, pids, n, cap);
        if (note_forkers && *n > before && tid != pid && nforkers < GW_CPU_FORKERS)
            forkers[nforkers++] = tid;
    }
    closedir(tasks);
    return lists;
}

/* Children of the process's own threads into pids[0..); *full: 1 when every thread's list
 * was read. Returns how many lists could be read (0: the kernel lists none). */
static size_t own_children(pid_t self, uint64_t now_ns, pid_t *pids, size_t *n, size_t cap,
                           int *full)
{
    *full = !full_scan_done || now_ns - full_scan_ns >= GW_CPU_FULL_SCAN_NS;
    if (*full) {
        full_scan_done = 1;
        full_scan_ns = now_ns;
        nforkers = 0;
        return add_children(self, pids, n, cap, 1);
    }
    size_t lists = (size_t)add_task_children(self, self, pids, n, cap);
    for (size_t i = 0; i < nforkers; i++)
        lists += (size_t)add_task_children(self, forkers[i], pids, n, cap);
    return lists;
}

/* words[1..3]: live descendants, the CPU time they have used (each since it started), and
 * how many of them used some since the previous sample (idle compile workers do not).
 * -1 when the kernel does not list children (no CONFIG_PROC_CHILDREN): "no worker" would
 * then be a guess. */
static int sample_descendants(uint64_t now_ns, uint64_t *words)
{
    static pid_t pids[GW_CPU_MAX_DESCENDANTS];
    static uint64_t cpu[GW_CPU_MAX_DESCENDANTS];
    size_t n = 0, live = 0;
    int full;
    if (!own_children((pid_t)gw_rec.header.pid, now_ns, pids, &n, GW_CPU_MAX_DESCENDANTS,
                      &full))
        return -1;
    /* breadth first: a forkserver's workers too (between full reads, what each one's main
     * thread forked: a forkserver forks there) */
    for (size_t i = 0; i < n; i++) {
        if (full)
            add_children(pids[i], pids, &n, GW_CPU_MAX_DESCENDANTS, 0);
        else
            add_task_children(pids[i], pids[i], pids, &n, GW_CPU_MAX_DESCENDANTS);
    }
    words[0] = words[1] = words[2] = 0;
    for (size_t i = 0; i < n; i++) {
        char path[48];
        uint64_t ns;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pids[i]);
        if (stat_cpu_ns(path, &ns) != 0)
            continue;
        words[0]++;
        words[1] += ns;
        uint64_t before = 0;  /* a new one: all it used is since the previous sample */
        for (size_t j = 0; j < nprevious; j++)
            if (previous[j].pid == pids[i])
                before = previous[j].cpu_ns;
        words[2] += ns > before;
        pids[live] = pids[i];
        cpu[live++] = ns;
    }
    for (size_t i = 0; i < live; i++) {
        previous[i].pid = pids[i];
        previous[i].cpu_ns = cpu[i];
    }
    nprevious = live;
    return 0;
}

static void sampler_round(uint64_t now_ns)
{
    /* rounds come every flush interval, give or take: one a little early still samples */
    if (sampled_once && now_ns - last_sample_ns < GW_CPU_SAMPLE_INTERVAL_NS / 5 * 4)
        return;
    sampled_once = 1;
    last_sample_ns = now_ns;
    /* the threads that record (they made driver calls, NVTX calls or handed CUPTI records) */
    struct { uint32_t tid; uint64_t wait_ns, wait_cpu_ns; } threads[64];
    size_t nthreads = 0;
    pthread_mutex_lock(&gw_rec.rings_lock);
    for (struct gw_ring *ring = gw_rec.rings; ring && nthreads < 64; ring = ring->next) {
        if (__atomic_load_n(&ring->dead, __ATOMIC_ACQUIRE))
            continue;
        threads[nthreads].tid = ring->tid;
        threads[nthreads].wait_ns = __atomic_load_n(&ring->wait_ns, __ATOMIC_RELAXED);
        threads[nthreads++].wait_cpu_ns = __atomic_load_n(&ring->wait_cpu_ns, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&gw_rec.rings_lock);
    for (size_t i = 0; i < nthreads; i++) {
        char path[64];
        uint64_t ns, runq_ns = 0;
        /* preempted, not busy: how long it was runnable without a CPU (schedstat), with
         * its CPU time; from stat, without, where the kernel keeps no schedstat */
        snprintf(path, sizeof path, "/proc/self/task/%u/schedstat", threads[i].tid);
        int with_runq = schedstat_ns(path, &ns, &runq_ns) == 0;
        snprintf(path, sizeof path, "/proc/self/task/%u/stat", threads[i].tid);
        if (!with_runq && stat_cpu_ns(path, &ns) != 0)
            continue;
        gw_rec_timed(GW_REC_CPU_THREAD, now_ns,
                     (uint64_t[]){threads[i].tid, ns, threads[i].wait_ns,
                                  threads[i].wait_cpu_ns, with_runq ? runq_ns : 0},
                     with_runq ? 5 : 4);
    }
    struct timespec process;
    uint64_t words[5] = {0}, machine_ns;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &process) == 0)
        words[0] = (uint64_t)process.tv_sec * 1000000000ull + (uint64_t)process.tv_nsec;
    int with_machine = machine_known && gw_machine_busy_ns(&machine_ns) == 0;
    /* (busy time only grows; a CPU taken offline would make it drop: then none) */
    with_machine = with_machine && machine_ns >= machine_busy_at_start;
    words[4] = with_machine ? machine_ns - machine_busy_at_start : 0;
    if (sample_descendants(now_ns, words + 1) == 0)
        gw_rec_timed(GW_REC_CPU_PROC, now_ns, words, with_machine ? 5 : 4);
}

static void on_writer_round(int urgent)
{
    (void)urgent;
    sampler_round(gw_now());
}

void gw_cpu_sampler_start(void)
{
    sampler_reset();
    gw_writer_add_round_hook(on_writer_round);
}
