/*
 * checkpoint_pauses: planted waste = a pause every 50 steps. The loop itself keeps the GPU
 * busy (pinned batches, async copies, the loss read back each step), but every 50 steps it
 * saves a checkpoint on the training thread: the weights come back to the host (a blocking
 * copy) and are written out (300 ms of file I/O, no CUDA call) while the GPU waits, as
 * torch.save(model.state_dict(), ...) in the loop does. gpuwatch reports it as pauses, not
 * as a slow DataLoader: the steps in between do not wait.
 * --fixed: the save is asynchronous (torch.distributed.checkpoint.async_save): the weights
 * still come back to the host on the training thread, and a background thread writes them
 * out while the loop goes on; one write in flight at a time, the last awaited at the end.
 * Here a write (300 ms) outlasts the 50 steps (100 ms) before the next save, so the async
 * save hides only those 100 ms of each: it gains ~210 ms, not the pauses' whole 600 ms
 * (saving less often is what gives that back); the pauses finding replays exactly this.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define BATCH_BYTES (2u << 20)
#define WEIGHT_BYTES (32u << 20)
#define SAVE_EVERY 50
#define WRITE_NS 300000000u

static const char *const kernels[] = {"forward_500us", "backward_1ms", "optimizer_500us"};

static void *write_out(void *arg)
{
    (void)arg;
    ex_sleep_ns(WRITE_NS);  /* the file I/O, off the training thread */
    return NULL;
}

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_checkpoint_pauses", 150,
                          "Planted waste: a 300 ms checkpoint save every 50 steps.");
    struct ex_ctx ex;
    ex_init(&ex, "example_checkpoint_pauses", kernels, 3);
    CUdeviceptr weights, acts;
    unsigned char *batch;
    float loss;
    unsigned char *state = malloc(WEIGHT_BYTES);  /* the state_dict on the host */
    if (!state)
        return 1;
    EX_CK(&ex, cuMemAlloc(&weights, WEIGHT_BYTES));
    EX_CK(&ex, cuMemAlloc(&acts, BATCH_BYTES));
    EX_CK(&ex, cuMemHostAlloc((void **)&batch, BATCH_BYTES, 0));
    pthread_t writer;
    int writing = 0;
    for (long s = 0; s < steps; s++) {
        memset(batch, (int)(s & 0xff), 4096);
        EX_CK(&ex, cuMemcpyHtoDAsync(acts, batch, BATCH_BYTES, ex.stream));
        for (size_t k = 0; k < 3; k++)
            ex_launch(&ex, k);
        EX_CK(&ex, cuMemcpyDtoHAsync(&loss, acts, sizeof loss, ex.stream));
        if ((s + 1) % SAVE_EVERY == 0) {
            /* torch.save(model.state_dict(), path): to the host, then to disk */
            if (writing)  /* the previous save's write first: one in flight */
                pthread_join(writer, NULL);
            writing = 0;
            EX_CK(&ex, cuMemcpyDtoH(state, weights, WEIGHT_BYTES));
            if (!ex_fixed())
                ex_sleep_ns(WRITE_NS);
            else if (pthread_create(&writer, NULL, write_out, NULL) == 0)
                writing = 1;
            else
                ex_sleep_ns(WRITE_NS);
        }
    }
    if (writing)
        pthread_join(writer, NULL);
    EX_CK(&ex, cuMemFreeHost(batch));
    EX_CK(&ex, cuMemFree(acts));
    EX_CK(&ex, cuMemFree(weights));
    free(state);
    ex_finish(&ex, steps);
    return 0;
}
