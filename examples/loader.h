/*
 * DataLoader(num_workers=N, prefetch_factor=2) for the examples' fixed variants, shaped as
 * PyTorch's: batch k goes to worker k mod N (its own index queue), each worker loads (spins
 * for its CPU time) its batches one at a time, in order, at most 2 x N batches ahead of the
 * loop, and the loop takes them in order. A worker wakes only when an index is sent to it,
 * the loop only when the batch it waits for is ready: N workers cost N loads' CPU, not a
 * herd woken at every batch.
 */
#ifndef GPUWATCH_EXAMPLES_LOADER_H
#define GPUWATCH_EXAMPLES_LOADER_H

#include <pthread.h>
#include <stdint.h>

#include "common.h"

struct ex_loader_worker {
    pthread_t thread;
    pthread_cond_t sent;    /* an index was sent to it (or the loader stops) */
    long next;              /* the next batch it loads: its index, then + N */
    struct ex_loader *loader;
};

struct ex_loader {
    pthread_mutex_t lock;
    pthread_cond_t ready;   /* the batch the loop waits for is loaded */
    long batches, taken;    /* batches to load; taken by the loop so far */
    long ahead;             /* batches sent before the loop takes them: 2 x N */
    unsigned char *loaded;  /* per batch: loaded */
    uint64_t load_ns;       /* one batch's loading */
    struct ex_loader_worker workers[EX_MAX_WORKERS];
    long nworkers;
};

/* CPUs this process may run on. */
long ex_usable_cpus(void);
/* Starts `workers` workers (at most EX_MAX_WORKERS) for `batches` batches of load_ns of CPU
 * work each; 0 or -1. */
int ex_loader_start(struct ex_loader *l, long batches, uint64_t load_ns, long workers);
/* next(iter(loader)): waits for the next batch in order and takes it. */
void ex_loader_take(struct ex_loader *l);
void ex_loader_join(struct ex_loader *l);

#endif
