/*
 * phases: a run in phases, each a top-level NVTX range as torch.cuda.nvtx.range_push("train")
 * makes: per epoch, "train" (each step reads its batch on the host for 4 ms, then 2 ms of
 * GPU work: the GPU waits for input), "eval" (GPU work only, the loss read each step) and
 * "checkpoint" (the weights copied back, then 30 ms of host-only writing). The cost of
 * each phase (`gpuwatch analyze --gpu-price`) is the test's subject (tests/analyze/
 * test_cost.sh): train's idle time is the input pipeline's.
 */
#include <nvtx3/nvToolsExt.h>
#include <string.h>

#include "common.h"

#define BATCH_BYTES (1u << 20)
#define WEIGHT_BYTES (8u << 20)
#define EPOCHS 2

static const char *const kernels[] = {"forward_500us", "backward_1ms", "optimizer_500us"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_phases", 40,
                          "Epochs of train, eval and checkpoint phases (NVTX ranges).");
    struct ex_ctx ex;
    ex_init(&ex, "example_phases", kernels, 3);
    CUdeviceptr weights, acts;
    unsigned char *batch, *saved;
    float loss;
    EX_CK(&ex, cuMemAlloc(&weights, WEIGHT_BYTES));
    EX_CK(&ex, cuMemAlloc(&acts, BATCH_BYTES));
    EX_CK(&ex, cuMemHostAlloc((void **)&batch, BATCH_BYTES, 0));
    EX_CK(&ex, cuMemHostAlloc((void **)&saved, WEIGHT_BYTES, 0));
    for (int epoch = 0; epoch < EPOCHS; epoch++) {
        nvtxRangePushA("train");
        for (long s = 0; s < steps; s++) {
            /* the batch read on this thread (storage: waiting, so the saving the cost test
             * prices needs no free CPU; a load that spins came to no finding in 1 of 4
             * fresh-clone runs where something else kept 0.7 CPU busy) */
            ex_sleep_ns(4000000);
            memset(batch, (int)(s & 0xff), 4096);
            EX_CK(&ex, cuMemcpyHtoDAsync(acts, batch, BATCH_BYTES, ex.stream));
            for (size_t k = 0; k < 3; k++)
                ex_launch(&ex, k);
        }
        EX_CK(&ex, cuStreamSynchronize(ex.stream));
        nvtxRangePop();
        nvtxRangePushA("eval");
        for (long s = 0; s < steps / 4; s++) {
            ex_launch(&ex, 0);
            EX_CK(&ex, cuMemcpyDtoHAsync(&loss, acts, sizeof loss, ex.stream));
            EX_CK(&ex, cuStreamSynchronize(ex.stream));
        }
        nvtxRangePop();
        nvtxRangePushA("checkpoint");
        EX_CK(&ex, cuMemcpyDtoHAsync(saved, weights, WEIGHT_BYTES, ex.stream));
        EX_CK(&ex, cuStreamSynchronize(ex.stream));
        ex_sleep_ns(30000000);  /* written to disk */
        nvtxRangePop();
    }
    EX_CK(&ex, cuMemFreeHost(saved));
    EX_CK(&ex, cuMemFreeHost(batch));
    EX_CK(&ex, cuMemFree(acts));
    EX_CK(&ex, cuMemFree(weights));
    ex_finish(&ex, steps * EPOCHS);
    return 0;
}
