/*
 * dataloader_bound: planted waste = the input pipeline. Each step the host spends 4 ms
 * "loading and decoding" the next batch (on the CPU, no CUDA call), as a DataLoader with
 * num_workers=0 does on the training thread, while the GPU, done with the 2 ms step, waits.
 * The rest is ordinary: pinned batch, async copy, loss read back with .item() each step.
 * --fixed: DataLoader(num_workers=4), what a user writes (--workers N for another count):
 * worker threads load the batches, each 2 ahead at most (prefetch_factor=2), and the loop
 * takes them ready. Loading is CPU work (ex_work_ns): workers sharing CPUs load slower.
 * --read-every N: the loss read every N steps (the fix of the per-step read).
 */
#include <string.h>

#include "common.h"
#include "loader.h"

#define BATCH_BYTES (2u << 20)
#define LOAD_NS 4000000u

static const char *const kernels[] = {"forward_500us", "backward_1ms", "optimizer_500us"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_dataloader_bound", 60,
                          "Planted waste: the host loads each batch itself (4 ms).");
    struct ex_ctx ex;
    ex_init(&ex, "example_dataloader_bound", kernels, 3);
    CUdeviceptr weights, acts;
    unsigned char *batch;
    float loss;
    EX_CK(&ex, cuMemAlloc(&weights, 32u << 20));
    EX_CK(&ex, cuMemAlloc(&acts, BATCH_BYTES));
    EX_CK(&ex, cuMemHostAlloc((void **)&batch, BATCH_BYTES, 0));
    struct ex_loader loader = {0};
    if (ex_fixed() && ex_loader_start(&loader, steps, LOAD_NS, ex_workers()) != 0)
        return 1;
    for (long s = 0; s < steps; s++) {
        if (ex_fixed())
            ex_loader_take(&loader);  /* next(iter(loader)): ready, loaded by a worker */
        else
            ex_work_ns(LOAD_NS);  /* next(iter(loader)): decode on this thread, no CUDA */
        memset(batch, (int)(s & 0xff), 4096);
        EX_CK(&ex, cuMemcpyHtoDAsync(acts, batch, BATCH_BYTES, ex.stream));
        for (size_t k = 0; k < 3; k++)
            ex_launch(&ex, k);
        /* loss.item(): a copy to pageable memory on the stream, which waits for the step
         * (--read-every N: logged every N steps) */
        if ((s + 1) % ex_read_every() == 0 || s + 1 == steps)
            EX_CK(&ex, cuMemcpyDtoHAsync(&loss, acts, sizeof loss, ex.stream));
    }
    ex_loader_join(&loader);
    EX_CK(&ex, cuMemFreeHost(batch));
    EX_CK(&ex, cuMemFree(acts));
    EX_CK(&ex, cuMemFree(weights));
    ex_finish(&ex, steps);
    return 0;
}
