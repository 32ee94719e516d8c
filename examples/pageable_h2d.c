/*
 * pageable_h2d: planted waste = host-to-device copies from pageable memory. The 16 MiB
 * batch lives in malloc'ed memory, so cuMemcpyHtoDAsync blocks the host while the driver
 * stages it (what batch.to(device) does without pin_memory=True), and the GPU, drained by
 * the previous step's .item(), computes nothing meanwhile.
 * --fixed: the batch lives in pinned memory (pin_memory=True; non_blocking=True).
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define BATCH_BYTES (16u << 20)

static const char *const kernels[] = {"forward_1ms", "backward_2ms", "optimizer_500us"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_pageable_h2d", 60,
                          "Planted waste: batches copied from pageable memory.");
    struct ex_ctx ex;
    ex_init(&ex, "example_pageable_h2d", kernels, 3);
    CUdeviceptr weights, acts;
    float loss;
    unsigned char *batch = NULL;
    if (ex_fixed())
        EX_CK(&ex, cuMemHostAlloc((void **)&batch, BATCH_BYTES, 0));
    else
        batch = malloc(BATCH_BYTES);  /* pageable: no cuMemHostAlloc */
    if (!batch)
        return 1;
    memset(batch, 1, BATCH_BYTES);
    EX_CK(&ex, cuMemAlloc(&weights, 32u << 20));
    EX_CK(&ex, cuMemAlloc(&acts, BATCH_BYTES));
    for (long s = 0; s < steps; s++) {
        batch[0] = (unsigned char)s;
        EX_CK(&ex, cuMemcpyHtoDAsync(acts, batch, BATCH_BYTES, ex.stream));
        for (size_t k = 0; k < 3; k++)
            ex_launch(&ex, k);
        /* loss.item(): a copy to pageable memory on the stream, which waits for the step */
        EX_CK(&ex, cuMemcpyDtoHAsync(&loss, acts, sizeof loss, ex.stream));
    }
    if (ex_fixed())
        EX_CK(&ex, cuMemFreeHost(batch));
    else
        free(batch);
    EX_CK(&ex, cuMemFree(acts));
    EX_CK(&ex, cuMemFree(weights));
    ex_finish(&ex, steps);
    return 0;
}
