/*
 * small_copies: planted waste = hundreds of small blocking uploads each iteration. The
 * batch is a dict of 300 small tensors (4 KiB each) in pageable memory, each moved with its
 * own synchronous cuMemcpyHtoD (what `{k: v.to(device) for k, v in batch.items()}` does):
 * every copy waits for the stream and pays the driver's fixed cost. No sync, no NVTX: the
 * analysis finds the steps itself.
 * --fixed: what a user writes: the tensors gathered into one pinned staging buffer and moved
 * with one cuMemcpyHtoDAsync (the buffer refilled only once its previous copy is done).
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define TENSORS 500
#define TENSOR_BYTES 4096u

static const char *const kernels[] = {"forward_200us", "backward_300us", "optimizer_100us"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_small_copies", 60,
                          "Planted waste: 500 small blocking uploads an iteration.");
    struct ex_ctx ex;
    ex_init(&ex, "example_small_copies", kernels, 3);
    unsigned char *tensors = malloc((size_t)TENSORS * TENSOR_BYTES);  /* pageable */
    unsigned char *staging = NULL;
    CUevent copied;
    CUdeviceptr inputs;
    if (!tensors)
        return 1;
    memset(tensors, 1, (size_t)TENSORS * TENSOR_BYTES);
    EX_CK(&ex, cuMemAlloc(&inputs, (size_t)TENSORS * TENSOR_BYTES));
    EX_CK(&ex, cuEventCreate(&copied, CU_EVENT_DISABLE_TIMING));
    if (ex_fixed())
        EX_CK(&ex, cuMemHostAlloc((void **)&staging, (size_t)TENSORS * TENSOR_BYTES, 0));
    for (long s = 0; s < steps; s++) {
        tensors[0] = (unsigned char)s;
        if (ex_fixed()) {
            if (s > 0)
                EX_CK(&ex, cuEventSynchronize(copied));  /* the staging buffer is free */
            memcpy(staging, tensors, (size_t)TENSORS * TENSOR_BYTES);
            EX_CK(&ex, cuMemcpyHtoDAsync(inputs, staging, (size_t)TENSORS * TENSOR_BYTES,
                                         ex.stream));
            EX_CK(&ex, cuEventRecord(copied, ex.stream));
        } else {
            for (size_t t = 0; t < TENSORS; t++)
                EX_CK(&ex, cuMemcpyHtoDAsync(inputs + t * TENSOR_BYTES,
                                             tensors + t * TENSOR_BYTES, TENSOR_BYTES,
                                             ex.stream));
        }
        for (size_t k = 0; k < 3; k++)
            ex_launch(&ex, k);
    }
    EX_CK(&ex, cuStreamSynchronize(ex.stream));
    if (staging)
        EX_CK(&ex, cuMemFreeHost(staging));
    free(tensors);
    EX_CK(&ex, cuEventDestroy(copied));
    EX_CK(&ex, cuMemFree(inputs));
    ex_finish(&ex, steps);
    return 0;
}
