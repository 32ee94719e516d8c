/*
 * Host cost of driver calls in a launch-heavy loop: per iteration 8 kernel launches, one
 * async host-to-device copy and one stream query, the mix of a small training step.
 * Prints "ns_per_call N" (the fastest of --repeats timed passes; their mean with --mean). bench/run_overhead.sh
 * runs it with and without the shim and prints the difference; --only measures one entry
 * point alone. --pace-ns N starts a call at most every N ns, the host busy in between, as
 * a launch-bound loop on a GPU is (cuLaunchKernel costs 3-5 us there): bench/shim_budget.sh.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

static const char module_ptx[] =
    ".version 8.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry bench_kernel()\n{\n ret;\n}\n";

#define CHECK(call)                                                     \
    do {                                                                \
        if ((call) != CUDA_SUCCESS) {                                   \
            fprintf(stderr, "bench_calls: %s failed\n", #call);         \
            exit(1);                                                    \
        }                                                               \
    } while (0)

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"iterations", required_argument, NULL, 'i'},
        {"repeats", required_argument, NULL, 'r'},
        {"only", required_argument, NULL, 'o'},
        {"mean", no_argument, NULL, 'm'},
        {"pace-ns", required_argument, NULL, 'p'},
        {NULL, 0, NULL, 0},
    };
    long iterations = 20000;
    int repeats = 5, opt, mean = 0;
    double pace_ns = 0;
    /* --only launch|copy|query: ten calls of that entry point per iteration, for the cost
     * of one hook alone */
    enum { MIX, LAUNCH, COPY, QUERY } only = MIX;
    while ((opt = getopt_long(argc, argv, "i:r:o:mp:", options, NULL)) != -1) {
        if (opt == 'i') {
            iterations = atol(optarg);
        } else if (opt == 'r') {
            repeats = atoi(optarg);
        } else if (opt == 'o') {
            if (!strcmp(optarg, "launch"))
                only = LAUNCH;
            else if (!strcmp(optarg, "copy"))
                only = COPY;
            else if (!strcmp(optarg, "query"))
                only = QUERY;
            else {
                fprintf(stderr, "bench_calls: --only launch, copy or query, not %s\n", optarg);
                return 2;
            }
        } else if (opt == 'p') {
            pace_ns = atof(optarg);
        } else if (opt == 'm') {
            mean = 1;  /* the mean of the passes, not the fastest: what a run pays over time
                          (a sampled timeline costs more in its windows than between them) */
        } else {
            return 2;
        }
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CUfunction kernel;
    CUstream stream;
    CUdeviceptr buffer;
    void *pinned;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&module, module_ptx));
    CHECK(cuModuleGetFunction(&kernel, module, "bench_kernel"));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cuMemAlloc_v2(&buffer, 4096));
    CHECK(cuMemAllocHost_v2(&pinned, 64));

    double best = 1e300, sum = 0;
    for (int r = 0; r < repeats; r++) {
        double start = now_ns();
        for (long i = 0; i < iterations; i++) {
            for (int k = 0; k < 10; k++) {
                /* the mix: calls 0-7 launches, 8 a copy, 9 a query */
                int what = only != MIX ? (int)only : k < 8 ? LAUNCH : k == 8 ? COPY : QUERY;
                if (pace_ns > 0) {
                    double due = start + ((double)i * 10 + k) * pace_ns;
                    while (now_ns() < due)
                        ;
                }
                if (what == LAUNCH)
                    cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
                else if (what == COPY)
                    cuMemcpyHtoDAsync_v2(buffer, pinned, 64, stream);
                else
                    cuStreamQuery(stream);
            }
        }
        double per_call = (now_ns() - start) / (iterations * 10.0);
        sum += per_call;
        if (per_call < best)
            best = per_call;
        CHECK(cuStreamSynchronize(stream));
    }
    printf("ns_per_call %.1f\ncalls %ld\n", mean ? sum / repeats : best,
           iterations * 10L * repeats);
    return 0;
}
