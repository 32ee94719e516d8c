/*
 * The collectives of one process, kept to line ranks up after the pass: the k-th
 * collective of every rank is the same operation (NCCL runs them in one order per
 * communicator), and it ends on all ranks at once, when the last rank has arrived. Kept:
 * every stride-th collective's GPU start and end, at most AN_COMM_SAMPLES; when full, every
 * other one is dropped and the stride doubles. The rule depends on the count alone, so
 * ranks with the same collectives keep the same ones, and run_collectives.c joins them by
 * number.
 */
#ifndef GPUWATCH_COMM_SAMPLES_H
#define GPUWATCH_COMM_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#define AN_COMM_SAMPLES 4096

struct an_comm_sample {
    uint64_t number;              /* the collective's place in the process's order, from 0 */
    uint64_t start, end;          /* GPU record, trace clock */
};

struct an_comm_samples {
    struct an_comm_sample *v;     /* by number */
    size_t n;
    uint64_t stride;              /* every stride-th collective is kept (1 until full) */
    uint64_t count;               /* collectives seen */
};

/* The next collective (in GPU start order); -1 when memory ran out (it is not kept). */
int an_comm_sample_add(struct an_comm_samples *s, uint64_t start, uint64_t end);
/* The sample of collective `number`, NULL when not kept. */
const struct an_comm_sample *an_comm_sample_find(const struct an_comm_samples *s,
                                                 uint64_t number);
void an_comm_samples_free(struct an_comm_samples *s);

#endif
