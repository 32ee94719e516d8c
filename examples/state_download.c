/*
 * state_download: planted waste = a large state copied to pageable memory every 10 steps
 * (model.state_dict() moved to the CPU for a checkpoint or an EMA copy): 64 MiB  into
 * malloc'ed memory on the stream (what state_dict's .cpu() does), which blocks at pageable
 * speed; the host then reads
 * it (a checksum, 1 ms). Each step reads its loss (.item()).
 * --fixed: what a user writes: a pinned host buffer allocated once, cuMemcpyDtoHAsync into
 * it, and a wait for it before the host reads it.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define STATE_BYTES (64u << 20)
#define EVERY 10

static const char *const kernels[] = {"forward_2ms", "backward_4ms", "optimizer_500us"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_state_download", 60,
                          "Planted waste: a 64 MiB state downloaded to pageable memory every "
                          "10 steps.");
    struct ex_ctx ex;
    ex_init(&ex, "example_state_download", kernels, 3);
    unsigned char *state = NULL;
    if (ex_fixed())
        EX_CK(&ex, cuMemHostAlloc((void **)&state, STATE_BYTES, 0));
    else
        state = malloc(STATE_BYTES);
    if (!state)
        return 1;
    CUdeviceptr dev_state;
    float loss;
    unsigned sum = 0;
    EX_CK(&ex, cuMemAlloc(&dev_state, STATE_BYTES));
    for (long s = 0; s < steps; s++) {
        for (size_t k = 0; k < 3; k++)
            ex_launch(&ex, k);
        EX_CK(&ex, cuMemcpyDtoHAsync(&loss, dev_state, sizeof loss, ex.stream));  /* .item() */
        if (s % EVERY != EVERY - 1)
            continue;
        EX_CK(&ex, cuMemcpyDtoHAsync(state, dev_state, STATE_BYTES, ex.stream));
        if (ex_fixed())
            EX_CK(&ex, cuStreamSynchronize(ex.stream));  /* the host reads it next */
        ex_spin_ns(1000000);  /* the host reads the state */
        sum += state[s % STATE_BYTES];
    }
    if (ex_fixed())
        EX_CK(&ex, cuMemFreeHost(state));
    else
        free(state);
    EX_CK(&ex, cuMemFree(dev_state));
    ex_finish(&ex, steps);
    return sum == 12345u;  /* (keeps the reads) */
}
