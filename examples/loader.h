/*
 * DataLoader(num_workers=N, prefetch_factor=2) for the examples' fixed variants: N worker
 * threads each load (spin for its CPU time) one batch at a time, at most 2 x N batches ahead of the
 * loop, which takes them ready.
 */
#ifndef GPUWATCH_EXAMPLES_LOADER_H
#define GPUWATCH_EXAMPLES_LOADER_H

#include <pthread.h>
#include <stdint.h>

#include "common.h"

struct ex_loader {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    long loaded, loading, to_start, ahead;  /* ahead: loaded + loading at most */
    uint64_t load_ns;                       /* one batch's loading */
    pthread_t workers[EX_MAX_WORKERS];
    long nworkers;
};

/* CPUs this process may run on. */
long ex_usable_cpus(void);
/* Starts `workers` workers (at most EX_MAX_WORKERS) for `batches` batches of load_ns of CPU
 * work each; 0 or -1. */
int ex_loader_start(struct ex_loader *l, long batches, uint64_t load_ns, long workers);
/* next(iter(loader)): waits for a loaded batch and takes it. */
void ex_loader_take(struct ex_loader *l);
void ex_loader_join(struct ex_loader *l);

#endif
