/*
 * per_sample_copies: planted waste = each sample of the batch uploaded on its own. 256
 * samples of 16 KiB, in pageable memory, each copied with cuMemcpyHtoDAsync (blocking: the
 * driver stages pageable memory) and normalized by a small kernel right after; the step's
 * forward and backward follow and the loss is read back (.item()) at its end.
 * --fixed: what a user writes: the samples collated into one pinned buffer, one
 * cuMemcpyHtoDAsync, the same per-sample kernels reading from it.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define SAMPLES 256
#define SAMPLE_BYTES (16u << 10)

static const char *const kernels[] = {"normalize_2us", "forward_1ms", "backward_1ms"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_per_sample_copies", 40,
                          "Planted waste: each sample uploaded on its own.");
    struct ex_ctx ex;
    ex_init(&ex, "example_per_sample_copies", kernels, 3);
    unsigned char *samples = malloc((size_t)SAMPLES * SAMPLE_BYTES);  /* pageable */
    unsigned char *collated = NULL;
    CUdeviceptr batch;
    float loss;
    if (!samples)
        return 1;
    memset(samples, 2, (size_t)SAMPLES * SAMPLE_BYTES);
    EX_CK(&ex, cuMemAlloc(&batch, (size_t)SAMPLES * SAMPLE_BYTES));
    if (ex_fixed())
        EX_CK(&ex, cuMemHostAlloc((void **)&collated, (size_t)SAMPLES * SAMPLE_BYTES, 0));
    for (long s = 0; s < steps; s++) {
        samples[0] = (unsigned char)s;
        if (ex_fixed()) {
            /* the previous step's .item() drained the stream: the buffer is free */
            memcpy(collated, samples, (size_t)SAMPLES * SAMPLE_BYTES);
            EX_CK(&ex, cuMemcpyHtoDAsync(batch, collated, (size_t)SAMPLES * SAMPLE_BYTES,
                                         ex.stream));
        }
        for (size_t i = 0; i < SAMPLES; i++) {
            if (!ex_fixed())
                EX_CK(&ex, cuMemcpyHtoDAsync(batch + i * SAMPLE_BYTES,
                                             samples + i * SAMPLE_BYTES, SAMPLE_BYTES,
                                             ex.stream));
            ex_launch(&ex, 0);
        }
        ex_launch(&ex, 1);
        ex_launch(&ex, 2);
        EX_CK(&ex, cuMemcpyDtoHAsync(&loss, batch, sizeof loss, ex.stream));  /* .item() */
    }
    if (collated)
        EX_CK(&ex, cuMemFreeHost(collated));
    free(samples);
    EX_CK(&ex, cuMemFree(batch));
    ex_finish(&ex, steps);
    return 0;
}
