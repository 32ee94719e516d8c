/*
 * offload_optimizer: planted waste = an optimizer step offloaded to the CPU through
 * pageable memory. Each step the 16 MiB of gradients come down with cuMemcpyDtoH into
 * malloc'ed memory, the CPU updates the weights (0.9 ms), and the 16 MiB of weights go back
 * up with cuMemcpyHtoD: both copies block and move at pageable speed.
 * --fixed: what a user writes: pinned buffers both ways (cuMemHostAlloc), the gradients
 * downloaded with cuMemcpyDtoHAsync and waited for before the CPU reads them, the weights
 * uploaded with cuMemcpyHtoDAsync.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define STATE_BYTES (16u << 20)

static const char *const kernels[] = {"forward_3ms", "backward_5ms"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_offload_optimizer", 30,
                          "Planted waste: an offloaded optimizer's copies through pageable "
                          "memory, both ways.");
    struct ex_ctx ex;
    ex_init(&ex, "example_offload_optimizer", kernels, 2);
    unsigned char *grads = NULL, *weights = NULL;
    if (ex_fixed()) {
        EX_CK(&ex, cuMemHostAlloc((void **)&grads, STATE_BYTES, 0));
        EX_CK(&ex, cuMemHostAlloc((void **)&weights, STATE_BYTES, 0));
    } else {
        grads = malloc(STATE_BYTES);
        weights = malloc(STATE_BYTES);
    }
    if (!grads || !weights)
        return 1;
    memset(weights, 3, STATE_BYTES);
    CUdeviceptr dev_grads, dev_weights;
    EX_CK(&ex, cuMemAlloc(&dev_grads, STATE_BYTES));
    EX_CK(&ex, cuMemAlloc(&dev_weights, STATE_BYTES));
    for (long s = 0; s < steps; s++) {
        ex_launch(&ex, 0);
        ex_launch(&ex, 1);
        EX_CK(&ex, cuMemcpyDtoHAsync(grads, dev_grads, STATE_BYTES, ex.stream));
        if (ex_fixed())
            EX_CK(&ex, cuStreamSynchronize(ex.stream));  /* the CPU reads them next */
        ex_spin_ns(900000);  /* the CPU optimizer step */
        weights[0] = (unsigned char)(grads[0] + s);
        /* (pageable: returns when staged; pinned: at once) */
        EX_CK(&ex, cuMemcpyHtoDAsync(dev_weights, weights, STATE_BYTES, ex.stream));
    }
    EX_CK(&ex, cuStreamSynchronize(ex.stream));
    if (ex_fixed()) {
        EX_CK(&ex, cuMemFreeHost(grads));
        EX_CK(&ex, cuMemFreeHost(weights));
    } else {
        free(grads);
        free(weights);
    }
    EX_CK(&ex, cuMemFree(dev_grads));
    EX_CK(&ex, cuMemFree(dev_weights));
    ex_finish(&ex, steps);
    return 0;
}
