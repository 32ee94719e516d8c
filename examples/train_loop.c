/*
 * train_loop: a small training-loop-shaped CUDA driver API workload, for the gpuwatch demo.
 *
 * It runs unchanged on a real GPU and on the simulated driver (tests/fakecuda): its kernels
 * only spin until %globaltimer has advanced by their duration_ns parameter, and their names
 * carry the same duration (forward_300us ...), which is how the simulated driver times them.
 * Per step: copy a batch from pinned memory, run forward/backward/optimizer, copy a small
 * "loss" back and synchronise. Kernels touch no memory, so the checksum is the same anywhere.
 */
#include <cuda.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KERNEL(name)                                                                   \
    ".visible .entry " name "(.param .u64 duration_ns)\n"                              \
    "{\n"                                                                              \
    "    .reg .pred %p<2>;\n"                                                          \
    "    .reg .b64 %rd<5>;\n"                                                          \
    "    ld.param.u64 %rd1, [duration_ns];\n"                                          \
    "    mov.u64 %rd2, %globaltimer;\n"                                                \
    "$Lspin:\n"                                                                        \
    "    mov.u64 %rd3, %globaltimer;\n"                                                \
    "    sub.s64 %rd4, %rd3, %rd2;\n"                                                  \
    "    setp.lt.u64 %p1, %rd4, %rd1;\n"                                               \
    "    @%p1 bra $Lspin;\n"                                                           \
    "    ret;\n"                                                                       \
    "}\n"

static const char ptx[] = ".version 8.0\n.target sm_52\n.address_size 64\n"
    KERNEL("forward_300us") KERNEL("backward_600us") KERNEL("optimizer_100us");

static const struct { const char *name; unsigned long long ns; } kernels[] = {
    { "forward_300us", 300000 }, { "backward_600us", 600000 }, { "optimizer_100us", 100000 } };

#define BATCH_BYTES (1u << 20)
#define WEIGHT_BYTES (16u << 20)
#define ACT_BYTES (4u << 20)

static void check(CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS)
        return;
    const char *name = NULL;
    cuGetErrorName(r, &name);
    fprintf(stderr, "train_loop: %s failed: %s (%d)\n", what, name ? name : "unknown error",
            (int)r);
    exit(1);
}
#define CK(call) check((call), #call)

static void usage(FILE *f)
{
    fprintf(f, "usage: example_train_loop [--steps N]\n"
               "  -s, --steps N   training steps to run (default 20)\n"
               "  -h, --help      this text\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "steps", required_argument, NULL, 's' }, { "help", no_argument, NULL, 'h' }, { 0 } };
    long steps = 20;
    for (int c; (c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1;) {
        char *end;
        switch (c) {
        case 's':
            steps = strtol(optarg, &end, 10);
            if (*end || steps < 1 || steps > 1000000) {
                fprintf(stderr, "train_loop: --steps wants a number from 1 to 1000000\n");
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn[3];
    CUdeviceptr weights, acts;
    CUstream stream;
    unsigned char *batch;
    float *loss;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));     /* as the CUDA runtime does */
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, ptx));
    for (int k = 0; k < 3; k++)
        CK(cuModuleGetFunction(&fn[k], mod, kernels[k].name));
    CK(cuMemAlloc(&weights, WEIGHT_BYTES));
    CK(cuMemAlloc(&acts, ACT_BYTES));
    CK(cuMemsetD8(weights, 0, WEIGHT_BYTES));
    CK(cuMemHostAlloc((void **)&batch, BATCH_BYTES + sizeof(float), 0));
    loss = (float *)(batch + BATCH_BYTES);
    CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

    unsigned checksum = 2166136261u;             /* FNV-1a over the losses read back */
    for (long s = 0; s < steps; s++) {
        float first = 1.0f / (float)(s + 1);
        memset(batch, (int)(s & 0xff), BATCH_BYTES);
        memcpy(batch, &first, sizeof first);
        CK(cuMemcpyHtoDAsync(acts, batch, BATCH_BYTES, stream));
        for (int k = 0; k < 3; k++) {
            unsigned long long ns = kernels[k].ns;
            void *params[] = { &ns };
            CK(cuLaunchKernel(fn[k], 1, 1, 1, 32, 1, 1, 0, stream, params, NULL));
        }
        CK(cuMemcpyDtoHAsync(loss, acts, sizeof *loss, stream));
        CK(cuStreamSynchronize(stream));
        unsigned char b[sizeof(float)];
        memcpy(b, loss, sizeof b);
        for (size_t i = 0; i < sizeof b; i++)
            checksum = (checksum ^ b[i]) * 16777619u;
    }

    CK(cuStreamDestroy(stream));
    CK(cuMemFreeHost(batch));
    CK(cuMemFree(acts));
    CK(cuMemFree(weights));
    CK(cuModuleUnload(mod));
    CK(cuDevicePrimaryCtxRelease(dev));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("train_loop: %ld steps, checksum %08x, %.1f ms\n", steps, checksum, ms);
    return 0;
}
