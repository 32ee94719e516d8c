/*
 * ranks: one rank of a data-parallel job (run N of them with RANK and WORLD_SIZE set, as
 * torchrun does). Each step the rank loads its batch (1 ms on the host, as I/O), copies
 * it, runs forward and the first half of backward, then all-reduces the first bucket of
 * gradients on a communication stream while the second half of backward runs beside it
 * (DistributedDataParallel's overlap); the optimizer waits for the all-reduce, and the
 * loss is read back (.item()). The all-reduce is a kernel named like NCCL's; on the
 * simulated GPU (tests/fakecuda, FAKECUDA_COLLECTIVE_FILE) the ranks' k-th all-reduces end
 * together, when the last rank's has run, as on real GPUs.
 *
 * Planted wastes, each with its fix:
 *   --slow-rank R    rank R loads its batches 4x slower (a slow shard, a busy node): every
 *                    other rank waits for it inside the all-reduce (the straggler finding);
 *                    fixed: leave it out
 *   --serial-comm    the all-reduce runs after all of backward on the compute stream, so
 *                    nothing computes beside it (exposed communication); fixed: leave it out
 * And --healthy: none of the wastes of the plain loop either: the batch is ready (data
 * already on the GPU, or a DataLoader that keeps up) and the loss is read two steps late
 * (an event per step), so the host stays ahead of the GPU: no finding. (The backward half
 * beside the all-reduce lasts as long as it: one that outlasts it holds the rank that
 * arrived last behind the others by the difference, at every step, for good: with 1 ms
 * beside 800 us, one rank arrived 200 us late at every collective, 5 % of the step, and
 * on the findings' floor a straggler came and went from run to run.)
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define BATCH_BYTES (1u << 20)
#define LOAD_NS 1000000u
#define SLOW_FACTOR 4

enum { FORWARD, BACKWARD_LATE, BACKWARD_EARLY, ALL_REDUCE, OPTIMIZER };
static const char *const kernels[] = {"forward_1ms", "backward_late_1ms", "backward_early_800us",
                                      "ncclDevKernel_AllReduce_Sum_f32_RING_LL_800us",
                                      "optimizer_300us"};

static long number(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < lo || n > hi) {
        fprintf(stderr, "example_ranks: %s wants a number from %ld to %ld\n", opt, lo, hi);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"steps", required_argument, NULL, 's'},
                                         {"slow-rank", required_argument, NULL, 'r'},
                                         {"serial-comm", no_argument, NULL, 'c'},
                                         {"healthy", no_argument, NULL, 'H'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    long steps = 40, slow_rank = -1;
    int serial = 0, healthy = 0;
    for (int c; (c = getopt_long(argc, argv, "s:r:cHh", opts, NULL)) != -1;) {
        switch (c) {
        case 's':
            steps = number("--steps", optarg, 1, 1000000);
            break;
        case 'r':
            slow_rank = number("--slow-rank", optarg, 0, 1 << 20);
            break;
        case 'c':
            serial = 1;
            break;
        case 'H':
            healthy = 1;
            break;
        case 'h':
            printf("usage: example_ranks [--steps N] [--slow-rank R] [--serial-comm]\n"
                   "One rank of a data-parallel job (RANK, WORLD_SIZE from the environment).\n"
                   "  -s, --steps N        steps to run (default 40)\n"
                   "  -r, --slow-rank R    rank R loads its batches %dx slower\n"
                   "  -c, --serial-comm    all-reduce after backward, with nothing beside it\n"
                   "  -H, --healthy        batches ready, the loss read two steps late\n",
                   SLOW_FACTOR);
            return 0;
        default:
            fprintf(stderr, "usage: example_ranks [--steps N] [--slow-rank R] [--serial-comm] "
                            "[--healthy]\n");
            return 2;
        }
    }
    const char *env = getenv("RANK");
    long rank = env ? number("RANK", env, 0, 1 << 20) : 0;
    uint64_t load_ns = rank == slow_rank ? (uint64_t)LOAD_NS * SLOW_FACTOR : LOAD_NS;

    struct ex_ctx ex;
    ex_init(&ex, "example_ranks", kernels, sizeof kernels / sizeof kernels[0]);
    CUstream comm;
    CUevent grads_ready, reduced, step_done[2];
    EX_CK(&ex, cuStreamCreate(&comm, CU_STREAM_NON_BLOCKING));
    for (int b = 0; b < 2; b++)
        EX_CK(&ex, cuEventCreate(&step_done[b], CU_EVENT_DISABLE_TIMING));
    EX_CK(&ex, cuEventCreate(&grads_ready, CU_EVENT_DISABLE_TIMING));
    EX_CK(&ex, cuEventCreate(&reduced, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr acts;
    unsigned char *batch;
    float loss;
    EX_CK(&ex, cuMemAlloc(&acts, BATCH_BYTES));
    EX_CK(&ex, cuMemHostAlloc((void **)&batch, BATCH_BYTES, 0));
    for (long s = 0; s < steps; s++) {
        if (healthy && s >= 2)  /* the step two back is done: its loss is ready */
            EX_CK(&ex, cuEventSynchronize(step_done[s & 1]));
        if (!healthy)
            ex_sleep_ns(load_ns);  /* next(iter(loader)): reading this rank's shard */
        memset(batch, (int)(s & 0xff), 4096);
        EX_CK(&ex, cuMemcpyHtoDAsync(acts, batch, BATCH_BYTES, ex.stream));
        ex_launch(&ex, FORWARD);
        ex_launch(&ex, BACKWARD_LATE);  /* the last layers' gradients: the first bucket */
        if (serial) {
            ex_launch(&ex, BACKWARD_EARLY);
            ex_launch(&ex, ALL_REDUCE);
        } else {
            EX_CK(&ex, cuEventRecord(grads_ready, ex.stream));
            EX_CK(&ex, cuStreamWaitEvent(comm, grads_ready, 0));
            ex_launch_on(&ex, ALL_REDUCE, comm);
            EX_CK(&ex, cuEventRecord(reduced, comm));
            ex_launch(&ex, BACKWARD_EARLY);  /* computes beside the all-reduce */
            EX_CK(&ex, cuStreamWaitEvent(ex.stream, reduced, 0));
        }
        ex_launch(&ex, OPTIMIZER);
        if (healthy) {
            EX_CK(&ex, cuEventRecord(step_done[s & 1], ex.stream));
            continue;
        }
        /* loss.item(): a copy to pageable memory on the stream, which waits for the step */
        EX_CK(&ex, cuMemcpyDtoHAsync(&loss, acts, sizeof loss, ex.stream));
    }
    for (int b = 0; b < 2; b++)
        EX_CK(&ex, cuEventDestroy(step_done[b]));
    EX_CK(&ex, cuEventDestroy(grads_ready));
    EX_CK(&ex, cuEventDestroy(reduced));
    EX_CK(&ex, cuStreamDestroy(comm));
    EX_CK(&ex, cuMemFreeHost(batch));
    EX_CK(&ex, cuMemFree(acts));
    ex_finish(&ex, steps);
    return 0;
}
