/*
 * GPU time by kernel: each kernel record's duration added to its kernel's (shape id's)
 * total while the trace streams by, and the kernels that took most of it kept at the end.
 * Shape ids are numbered from 1 by the shim, so a table indexed by them is what holds
 * them; an id past AN_KERNEL_TABLE_MAX (a damaged or foreign trace) goes to a map.
 */
#ifndef GPUWATCH_KERNEL_TIMES_H
#define GPUWATCH_KERNEL_TIMES_H

#include <stddef.h>
#include <stdint.h>

#include "gw_map.h"

#define AN_KERNEL_TABLE_MAX (1u << 20)

struct an_kernel_sum {
    uint64_t records, gpu_ns;
    uint8_t kind;                  /* the caller's: 0 until it classified the kernel */
};

struct an_kernel_times {
    struct an_kernel_sum *table;   /* by shape id, below AN_KERNEL_TABLE_MAX */
    size_t cap;
    struct gw_map far_index;       /* larger shape id -> index in far + 1 */
    struct an_kernel_sum *far;
    uint64_t *far_shape;
    size_t nfar;
};

struct an_kernel_sum *an_kernel_times_add_slow(struct an_kernel_times *kt, uint64_t shape,
                                               uint64_t ns);

/* Adds a record of ns to its kernel's sums; returns them (NULL out of memory). */
static inline struct an_kernel_sum *an_kernel_times_add(struct an_kernel_times *kt,
                                                        uint64_t shape, uint64_t ns)
{
    if (shape < kt->cap) {
        kt->table[shape].records++;
        kt->table[shape].gpu_ns += ns;
        return &kt->table[shape];
    }
    return an_kernel_times_add_slow(kt, shape, ns);
}

/* One of the kernels that took most GPU time. */
struct an_kernel_time {
    uint64_t shape_id, records, gpu_ns;
    char name[64];
};

/* The n kernels (n <= max) with most GPU time into top, most first (ties: the lower shape id
 * first); named by resolve(user, 1, shape), the model's resolver (1: kernel names). Returns n. */
size_t an_kernel_times_top(const struct an_kernel_times *kt, struct an_kernel_time *top,
                           size_t max, const char *(*resolve)(void *, int, uint64_t), void *user);
void an_kernel_times_free(struct an_kernel_times *kt);

#endif
