/*
 * per_step_sync: planted waste = a synchronization every step. After each step the loop
 * reads the loss back (.item(), a synchronous device-to-host copy) and then formats and
 * prints it (0.4 ms of host work), so the GPU's queue is empty while the host logs and
 * refills it; without the sync the host would run ahead and the logging would overlap.
 * --fixed: the loss stays on the GPU and is read once, after the loop.
 */
#include <stdio.h>
#include <string.h>

#include "common.h"

#define BATCH_BYTES (1u << 20)
#define LOG_NS 400000u

static const char *const kernels[] = {"layer_100us"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_per_step_sync", 100,
                          "Planted waste: .item() and logging every step.");
    struct ex_ctx ex;
    ex_init(&ex, "example_per_step_sync", kernels, 1);
    CUdeviceptr weights, acts;
    unsigned char *batch;
    float loss;
    EX_CK(&ex, cuMemAlloc(&weights, 32u << 20));
    EX_CK(&ex, cuMemAlloc(&acts, BATCH_BYTES));
    EX_CK(&ex, cuMemHostAlloc((void **)&batch, BATCH_BYTES, 0));
    for (long s = 0; s < steps; s++) {
        memset(batch, (int)(s & 0xff), 4096);
        EX_CK(&ex, cuMemcpyHtoDAsync(acts, batch, BATCH_BYTES, ex.stream));
        for (int layer = 0; layer < 10; layer++)
            ex_launch(&ex, 0);
        /* loss.item(): a copy to pageable memory on the stream, which waits for the step */
        if (!ex_fixed())
            EX_CK(&ex, cuMemcpyDtoHAsync(&loss, acts, sizeof loss, ex.stream));
        ex_work_ns(LOG_NS);  /* print(f"step {s} loss {loss:.4f}") and friends */
    }
    if (ex_fixed())
        EX_CK(&ex, cuMemcpyDtoHAsync(&loss, acts, sizeof loss, ex.stream));
    EX_CK(&ex, cuMemFreeHost(batch));
    EX_CK(&ex, cuMemFree(acts));
    EX_CK(&ex, cuMemFree(weights));
    ex_finish(&ex, steps);
    return 0;
}
