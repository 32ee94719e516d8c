/*
 * Collective communication (NCCL/RCCL kernels) against compute: how much of the
 * communication kernels' time no compute kernel ran beside it on another stream, the
 * communication the step waits for ("exposed"). Fed the GPU kernel records in start order
 * (the feeder's); each communication interval is settled once a record starts past its
 * end, since no later record can overlap it then. Memory: the communication intervals not
 * settled yet and the compute intervals that may still overlap them, at most
 * AN_COMM_KEEP each (past that the oldest are merged: overlap then counts a little high).
 */
#ifndef GPUWATCH_COMM_OVERLAP_H
#define GPUWATCH_COMM_OVERLAP_H

#include <stddef.h>
#include <stdint.h>

#include "comm_samples.h"

#define AN_COMM_KEEP 1024

struct an_comm_span {
    uint64_t start, end;
};

struct an_comm_overlap {
    struct an_comm_span *pending;      /* communication intervals not settled, by start */
    size_t npending, pending_cap;
    struct an_comm_span *compute;      /* merged compute intervals that may overlap them */
    size_t ncompute, compute_cap;
    uint64_t kernels, comm_ns, exposed_ns;
    struct an_comm_span recent;        /* before the first collective: the latest compute span */
    struct an_comm_samples samples;    /* the collectives' times, to line ranks up */
};

/* 1 when a kernel's name is a collective's: NCCL's and RCCL's device kernels. */
int an_is_comm_kernel(const char *name);
void an_comm_feed_slow(struct an_comm_overlap *c, uint64_t start, uint64_t end, int comm);

/* A kernel record (start order), a communication kernel's or a compute kernel's. Until a
 * collective is seen (most programs: never) only the latest compute span is kept. */
static inline void an_comm_feed(struct an_comm_overlap *c, uint64_t start, uint64_t end,
                                int comm)
{
    if (!comm && !c->kernels) {
        if (start <= c->recent.end && c->recent.end) {
            if (end > c->recent.end)
                c->recent.end = end;
        } else {
            c->recent = (struct an_comm_span){start, end > start ? end : start};
        }
        return;
    }
    an_comm_feed_slow(c, start, end, comm);
}
/* Settles what is pending: the totals are final. */
void an_comm_finish(struct an_comm_overlap *c);
void an_comm_free(struct an_comm_overlap *c);

#endif
