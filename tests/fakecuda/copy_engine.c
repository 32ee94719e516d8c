/*
 * fakecuda: the copy engine. An async copy that does not block the host (pinned or device
 * memory, not captured) hands its bytes to this thread, as a real copy is handed to the
 * GPU's DMA engine: the call returns at once and the host is free while the bytes move, so
 * a later sync waits for the simulated transfer as it would on a GPU (moving them on the
 * calling thread would spend host time a GPU does not, and hide the transfer behind it).
 *
 * Order: jobs run one at a time in submission order. Whatever may touch what a pending job
 * moves waits for the engine first (fc_copy_engine_drain): blocking copies, memsets, frees;
 * a host that waited for the GPU (fc_sleep_until: syncs; queries that find work done) until
 * a pending job's transfer into host memory ended. The engine's memcpy may be slower than
 * the simulated transfer; uploads then finish late without anyone waiting for them, as no GPU record
 * would show such a wait.
 * Without the thread (it could not start, or in a forked child) jobs run on the caller.
 * With FAKECUDA_MOVE_BYTES=0 there are no jobs: only the simulated timeline.
 */
#include "fakecuda.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct job {
    struct job *next;
    struct fc_move move;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER, idle_cv = PTHREAD_COND_INITIALIZER;
static struct job *head, *tail;
static int busy;
static struct fc_move running;   /* the job the engine moves now (busy) */
static _Atomic int pending;      /* jobs submitted and not done: the drain's fast path */
static _Atomic int downloads;    /* ... of which write host memory */
static pid_t engine_pid;         /* the process the thread runs in (0: none) */

void fc_move_run(const struct fc_move *m)
{
    if (!fc_cfg.move_bytes)
        return;
    for (size_t z = 0; z < m->depth; z++)
        for (size_t y = 0; y < m->height; y++)
            memmove((void *)(m->dst + z * m->dst_slice + y * m->dst_pitch),
                    (const void *)(m->src + z * m->src_slice + y * m->src_pitch), m->width);
}

static void *engine(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!head)
            pthread_cond_wait(&work_cv, &lock);
        struct job *j = head;
        head = j->next;
        if (!head)
            tail = NULL;
        busy = 1;
        running = j->move;
        pthread_mutex_unlock(&lock);
        fc_move_run(&j->move);
        int to_host = j->move.to_host;
        free(j);
        pthread_mutex_lock(&lock);
        busy = 0;
        atomic_fetch_sub(&pending, 1);
        if (to_host)
            atomic_fetch_sub(&downloads, 1);
        pthread_cond_broadcast(&idle_cv);  /* (a download drain waits for one job) */
    }
    return NULL;
}

static void after_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&work_cv, NULL);
    pthread_cond_init(&idle_cv, NULL);
    head = tail = NULL;  /* the parent's pending jobs are the parent's */
    busy = 0;
    atomic_store(&pending, 0);
    atomic_store(&downloads, 0);
    engine_pid = 0;
}

/* Starts the thread in this process if it runs none; 1 when one runs. Under lock. */
static int engine_running(void)
{
    static int registered;
    if (engine_pid == getpid())
        return 1;
    if (!registered) {
        pthread_atfork(NULL, NULL, after_fork_child);
        registered = 1;
    }
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int ok = pthread_create(&t, &attr, engine, NULL) == 0;
    pthread_attr_destroy(&attr);
    if (ok)
        engine_pid = getpid();
    return ok;
}

void fc_copy_engine_submit(const struct fc_move *m)
{
    /* No bytes to move (FAKECUDA_MOVE_BYTES=0): no job, and nothing for a sync to wait on
     * but the simulated transfer. A job would make every later drain wait until this
     * thread got a CPU, which a GPU's DMA engine never needs: beside another busy process
     * a loop's .item() slept 3 ms in a 45 ms run, read as GPU time (launch_bound host-only
     * found nothing, one fresh-clone run in about twenty). */
    if (!fc_cfg.move_bytes)
        return;
    struct job *j = malloc(sizeof *j);
    pthread_mutex_lock(&lock);
    if (!j || !engine_running()) {
        pthread_mutex_unlock(&lock);
        free(j);
        fc_copy_engine_drain();
        fc_move_run(m);
        return;
    }
    j->next = NULL;
    j->move = *m;
    if (tail)
        tail->next = j;
    else
        head = j;
    tail = j;
    atomic_fetch_add(&pending, 1);
    if (m->to_host)
        atomic_fetch_add(&downloads, 1);
    pthread_cond_signal(&work_cv);
    pthread_mutex_unlock(&lock);
}

static int overlaps(const struct fc_move *m, uintptr_t base, size_t size)
{
    size_t dst_len = m->depth ? (m->depth - 1) * m->dst_slice + (m->height - 1) * m->dst_pitch + m->width : 0;
    size_t src_len = m->depth ? (m->depth - 1) * m->src_slice + (m->height - 1) * m->src_pitch + m->width : 0;
    return (m->dst < base + size && base < m->dst + dst_len) ||
           (m->src < base + size && base < m->src + src_len);
}

void fc_copy_engine_drain_range(uintptr_t base, size_t size)
{
    if (!atomic_load(&pending))
        return;
    pthread_mutex_lock(&lock);
    int hit = busy && overlaps(&running, base, size);
    for (const struct job *j = head; j && !hit; j = j->next)
        hit = overlaps(&j->move, base, size);
    if (hit)
        while (head || busy)
            pthread_cond_wait(&idle_cv, &lock);
    pthread_mutex_unlock(&lock);
}

static int download_due(const struct fc_move *m, int64_t t)
{
    return m->to_host && m->end <= t;
}

void fc_copy_engine_drain_downloads(int64_t t)
{
    if (!atomic_load(&downloads))
        return;
    pthread_mutex_lock(&lock);
    for (;;) {
        int due = busy && download_due(&running, t);
        for (const struct job *j = head; j && !due; j = j->next)
            due = download_due(&j->move, t);
        if (!due)
            break;
        pthread_cond_wait(&idle_cv, &lock);
    }
    pthread_mutex_unlock(&lock);
}

void fc_copy_engine_drain(void)
{
    if (!atomic_load(&pending))
        return;
    pthread_mutex_lock(&lock);
    while (head || busy)
        pthread_cond_wait(&idle_cv, &lock);
    pthread_mutex_unlock(&lock);
}
