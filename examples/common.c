#include "common.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One kernel: spin until %globaltimer advanced by duration_ns. */
static const char kernel_ptx[] =
    ".visible .entry %s(.param .u64 duration_ns)\n"
    "{\n"
    "    .reg .pred %%p<2>;\n"
    "    .reg .b64 %%rd<5>;\n"
    "    ld.param.u64 %%rd1, [duration_ns];\n"
    "    mov.u64 %%rd2, %%globaltimer;\n"
    "$Lspin:\n"
    "    mov.u64 %%rd3, %%globaltimer;\n"
    "    sub.s64 %%rd4, %%rd3, %%rd2;\n"
    "    setp.lt.u64 %%p1, %%rd4, %%rd1;\n"
    "    @%%p1 bra $Lspin;\n"
    "    ret;\n"
    "}\n";

void ex_check(CUresult r, const char *what, const char *prog)
{
    if (r == CUDA_SUCCESS)
        return;
    const char *name = NULL;
    cuGetErrorName(r, &name);
    fprintf(stderr, "%s: %s failed: %s (%d)\n", prog, what, name ? name : "unknown error",
            (int)r);
    exit(1);
}

static int fixed;
static long workers = EX_USER_WORKERS;
static long read_every = 1;

int ex_fixed(void)
{
    return fixed;
}

long ex_workers(void)
{
    return workers;
}

long ex_read_every(void)
{
    return read_every;
}

long ex_steps(int argc, char **argv, const char *prog, long steps, const char *what)
{
    static const struct option opts[] = {{"steps", required_argument, NULL, 's'},
                                         {"fixed", no_argument, NULL, 'f'},
                                         {"workers", required_argument, NULL, 'w'},
                                         {"read-every", required_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    for (int c; (c = getopt_long(argc, argv, "s:fw:r:h", opts, NULL)) != -1;) {
        char *end;
        switch (c) {
        case 'w':
            workers = strtol(optarg, &end, 10);
            if (*end || workers < 1 || workers > EX_MAX_WORKERS) {
                fprintf(stderr, "%s: --workers wants a number from 1 to %d\n", prog,
                        EX_MAX_WORKERS);
                exit(2);
            }
            break;
        case 'r':
            read_every = strtol(optarg, &end, 10);
            if (*end || read_every < 1 || read_every > 1000000) {
                fprintf(stderr, "%s: --read-every wants a number from 1 to 1000000\n", prog);
                exit(2);
            }
            break;
        case 's':
            steps = strtol(optarg, &end, 10);
            if (*end || steps < 1 || steps > 1000000) {
                fprintf(stderr, "%s: --steps wants a number from 1 to 1000000\n", prog);
                exit(2);
            }
            break;
        case 'f':
            fixed = 1;
            break;
        case 'h':
            printf("usage: %s [--steps N] [--fixed] [--workers N] [--read-every N]\n%s\n"
                   "  -s, --steps N      steps to run (default %ld)\n"
                   "  -f, --fixed        apply the advice gpuwatch gives\n"
                   "  -w, --workers N    DataLoader workers of a fixed variant that starts "
                   "them (default %d)\n"
                   "  -r, --read-every N read the loss every N steps where a loop reads it "
                   "(default 1)\n", prog, what, steps, EX_USER_WORKERS);
            exit(0);
        default:
            fprintf(stderr, "usage: %s [--steps N] [--fixed]\n", prog);
            exit(2);
        }
    }
    return steps;
}

unsigned long long ex_name_ns(const char *name)
{
    const char *u = strrchr(name, '_');
    if (!u)
        return 0;
    char *end;
    unsigned long long v = strtoull(u + 1, &end, 10);
    if (end == u + 1)
        return 0;
    if (!strcmp(end, "ns"))
        return v;
    if (!strcmp(end, "us"))
        return v * 1000;
    if (!strcmp(end, "ms"))
        return v * 1000000;
    return 0;
}

uint64_t ex_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ex_work_ns(uint64_t ns)
{
    /* CPU work (decoding, Python): on a shared CPU it takes longer than ns, as real work does */
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
        ex_spin_ns(ns);
        return;
    }
    uint64_t until = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + ns, now;
    do {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    } while (now < until);
}

void ex_spin_ns(uint64_t ns)
{
    uint64_t until = ex_now_ns() + ns;
    while (ex_now_ns() < until)
        ;
}

void ex_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void ex_init(struct ex_ctx *ex, const char *prog, const char *const *kernels, size_t n)
{
    memset(ex, 0, sizeof *ex);
    ex->prog = prog;
    ex->start_ns = ex_now_ns();
    if (n > EX_MAX_KERNELS) {
        fprintf(stderr, "%s: too many kernels\n", prog);
        exit(1);
    }
    size_t cap = 64 + n * (sizeof kernel_ptx + 64);
    char *ptx = malloc(cap);
    if (!ptx)
        exit(1);
    size_t len = (size_t)snprintf(ptx, cap, ".version 8.0\n.target sm_52\n.address_size 64\n");
    for (size_t k = 0; k < n; k++)
        len += (size_t)snprintf(ptx + len, cap - len, kernel_ptx, kernels[k]);
    EX_CK(ex, cuInit(0));
    EX_CK(ex, cuDeviceGet(&ex->dev, 0));
    EX_CK(ex, cuDevicePrimaryCtxRetain(&ex->ctx, ex->dev));  /* as the CUDA runtime does */
    EX_CK(ex, cuCtxSetCurrent(ex->ctx));
    EX_CK(ex, cuModuleLoadData(&ex->mod, ptx));
    free(ptx);
    for (size_t k = 0; k < n; k++) {
        EX_CK(ex, cuModuleGetFunction(&ex->fn[k], ex->mod, kernels[k]));
        ex->ns[k] = ex_name_ns(kernels[k]);
    }
    ex->nkernels = n;
    EX_CK(ex, cuStreamCreate(&ex->stream, CU_STREAM_NON_BLOCKING));
}

void ex_launch(struct ex_ctx *ex, size_t k) { ex_launch_on(ex, k, ex->stream); }

void ex_launch_on(struct ex_ctx *ex, size_t k, CUstream stream)
{
    void *params[] = {&ex->ns[k]};
    EX_CK(ex, cuLaunchKernel(ex->fn[k], 1, 1, 1, 32, 1, 1, 0, stream, params, NULL));
}

void ex_finish(struct ex_ctx *ex, long steps)
{
    EX_CK(ex, cuStreamSynchronize(ex->stream));
    EX_CK(ex, cuStreamDestroy(ex->stream));
    EX_CK(ex, cuModuleUnload(ex->mod));
    EX_CK(ex, cuDevicePrimaryCtxRelease(ex->dev));
    printf("%s: %ld steps, %.1f ms\n", ex->prog, steps,
           (double)(ex_now_ns() - ex->start_ns) / 1e6);
}
