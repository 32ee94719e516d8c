/*
 * leak: planted waste = memory held grows every step. The healthy loop, plus a 4 MiB
 * device buffer allocated each step and kept (like appending the loss tensor, graph and
 * all, to a Python list): never freed, still held at exit.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define BATCH_BYTES (1u << 20)
#define LEAK_BYTES (4u << 20)

static const char *const kernels[] = {"forward_1ms", "backward_2ms"};

/* One step's output kept for later (history.append(loss)): its 4 MiB is never freed. Not
 * static and not inlined, so the leak finding names it (the examples link with -rdynamic:
 * their functions get dynamic symbols, which is what the shim's call stacks resolve). */
__attribute__((noinline)) void leak_step(struct ex_ctx *ex, CUdeviceptr *kept, CUdeviceptr acts)
{
    EX_CK(ex, cuMemAlloc(kept, LEAK_BYTES));
    EX_CK(ex, cuMemcpyDtoDAsync(*kept, acts, 4096, ex->stream));
}

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_leak", 100,
                          "Planted waste: 4 MiB of device memory kept every step.");
    struct ex_ctx ex;
    ex_init(&ex, "example_leak", kernels, 2);
    CUdeviceptr acts[2];
    unsigned char *batch[2];
    CUevent done[2];
    CUdeviceptr *kept = calloc((size_t)steps, sizeof *kept);
    if (!kept)
        return 1;
    for (int b = 0; b < 2; b++) {
        EX_CK(&ex, cuMemAlloc(&acts[b], BATCH_BYTES));
        EX_CK(&ex, cuMemHostAlloc((void **)&batch[b], BATCH_BYTES, 0));
        EX_CK(&ex, cuEventCreate(&done[b], CU_EVENT_DISABLE_TIMING));
    }
    for (long s = 0; s < steps; s++) {
        int b = (int)(s & 1);
        if (s >= 2)
            EX_CK(&ex, cuEventSynchronize(done[b]));
        memset(batch[b], (int)(s & 0xff), 4096);
        EX_CK(&ex, cuMemcpyHtoDAsync(acts[b], batch[b], BATCH_BYTES, ex.stream));
        for (size_t k = 0; k < 2; k++)
            ex_launch(&ex, k);
        leak_step(&ex, &kept[s], acts[b]);
        EX_CK(&ex, cuEventRecord(done[b], ex.stream));
    }
    EX_CK(&ex, cuStreamSynchronize(ex.stream));
    for (int b = 0; b < 2; b++) {
        EX_CK(&ex, cuEventDestroy(done[b]));
        EX_CK(&ex, cuMemFreeHost(batch[b]));
        EX_CK(&ex, cuMemFree(acts[b]));
    }
    free(kept);  /* the device buffers stay allocated: held at exit */
    ex_finish(&ex, steps);
    return 0;
}
