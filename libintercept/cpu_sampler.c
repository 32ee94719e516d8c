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

static void sampler_reset(void)
{
    last_sample_ns = 0;
    sampled_once = 0;
    nprevious = 0;
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

/* The second field of a /proc schedstat file: ns spent runnable, waiting for a CPU (the
 * scheduler's run_delay); 0, or -1 when it cannot be read (no CONFIG_SCHED_INFO). */
static int schedstat_runq_ns(const char *path, uint64_t *ns)
{
    char buf[128];
    if (read_proc(path, buf, sizeof buf) != 0)
        return -1;
    unsigned long long on_cpu, waiting;
    if (sscanf(buf, "%llu %llu", &on_cpu, &waiting) != 2)
        return -1;
    *ns = waiting;
    return 0;
}

/* Appends the children of every thread of pid to pids[*n..cap); returns how many of its
 * threads' children lists could be read. */
static size_t add_children(pid_t pid, pid_t *pids, size_t *n, size_t cap)
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
        char children[96];
        snprintf(children, sizeof children, "/proc/%d/task/%.16s/children", (int)pid,
                 t->d_name);
        FILE *f = fopen(children, "re");
        if (!f)
            continue;
        lists++;
        int child;
        while (*n < cap && fscanf(f, "%d", &child) == 1)
            pids[(*n)++] = child;
        fclose(f);
    }
    closedir(tasks);
    return lists;
}

/* words[1..3]: live descendants, the CPU time they have used (each since it started), and
 * how many of them used some since the previous sample (idle compile workers do not).
 * -1 when the kernel does not list children (no CONFIG_PROC_CHILDREN): "no worker" would
 * then be a guess. */
static int sample_descendants(uint64_t *words)
{
    static pid_t pids[GW_CPU_MAX_DESCENDANTS];
    static uint64_t cpu[GW_CPU_MAX_DESCENDANTS];
    size_t n = 0, live = 0;
    if (!add_children(getpid(), pids, &n, GW_CPU_MAX_DESCENDANTS))
        return -1;
    for (size_t i = 0; i < n; i++)  /* breadth first: a forkserver's workers too */
        add_children(pids[i], pids, &n, GW_CPU_MAX_DESCENDANTS);
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
        uint64_t ns, runq_ns;
        snprintf(path, sizeof path, "/proc/self/task/%u/stat", threads[i].tid);
        if (stat_cpu_ns(path, &ns) != 0)
            continue;
        /* preempted, not busy: how long it was runnable without a CPU */
        snprintf(path, sizeof path, "/proc/self/task/%u/schedstat", threads[i].tid);
        int with_runq = schedstat_runq_ns(path, &runq_ns) == 0;
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
    if (sample_descendants(words + 1) == 0)
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
