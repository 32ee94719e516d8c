/*
 * healthy: the reference loop, with no planted waste. Batches are filled in pinned memory
 * and copied asynchronously; the loss is read back into pinned memory and waited for two
 * steps late (an event per step), so the host always has the next step queued and the GPU
 * never waits for it. Each step is an NVTX range, as torch.cuda.nvtx.range_push("train_step")
 * makes: gpuwatch takes its steps from it. `gpuwatch analyze` should report no finding.
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define BATCH_BYTES (4u << 20)
#define WEIGHT_BYTES (64u << 20)

static const char *const kernels[] = {"forward_1ms", "backward_2ms", "optimizer_500us"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_healthy", 100,
                          "A training loop with no planted waste.");
    struct ex_ctx ex;
    ex_init(&ex, "example_healthy", kernels, 3);
    CUdeviceptr weights, acts[2];
    unsigned char *batch[2];
    float *loss;
    CUevent done[2];
    EX_CK(&ex, cuMemAlloc(&weights, WEIGHT_BYTES));
    EX_CK(&ex, cuMemsetD8Async(weights, 0, WEIGHT_BYTES, ex.stream));
    EX_CK(&ex, cuMemHostAlloc((void **)&loss, 2 * sizeof *loss, 0));
    for (int b = 0; b < 2; b++) {
        EX_CK(&ex, cuMemAlloc(&acts[b], BATCH_BYTES));
        EX_CK(&ex, cuMemHostAlloc((void **)&batch[b], BATCH_BYTES, 0));
        EX_CK(&ex, cuEventCreate(&done[b], CU_EVENT_DISABLE_TIMING));
    }
    for (long s = 0; s < steps; s++) {
        int b = (int)(s & 1);
        nvtxRangePushA("train_step");
        if (s >= 2)  /* the step that used this buffer is done; its loss is ready */
            EX_CK(&ex, cuEventSynchronize(done[b]));
        memset(batch[b], (int)(s & 0xff), 4096);  /* the next batch, prepared ahead */
        EX_CK(&ex, cuMemcpyHtoDAsync(acts[b], batch[b], BATCH_BYTES, ex.stream));
        for (size_t k = 0; k < 3; k++)
            ex_launch(&ex, k);
        EX_CK(&ex, cuMemcpyDtoHAsync(&loss[b], acts[b], sizeof *loss, ex.stream));
        EX_CK(&ex, cuEventRecord(done[b], ex.stream));
        nvtxRangePop();
    }
    EX_CK(&ex, cuStreamSynchronize(ex.stream));
    for (int b = 0; b < 2; b++) {
        EX_CK(&ex, cuEventDestroy(done[b]));
        EX_CK(&ex, cuMemFreeHost(batch[b]));
        EX_CK(&ex, cuMemFree(acts[b]));
    }
    EX_CK(&ex, cuMemFreeHost(loss));
    EX_CK(&ex, cuMemFree(weights));
    ex_finish(&ex, steps);
    return 0;
}
