/*
 * random_loop: a training-like loop drawn at random from a seed (tests/analyze/
 * test_random_loops.sh), or set knob by knob: batch loading on the training thread, kernel
 * count and length, the batch copy's size, memory and sync-ness, a loss read every N steps
 * followed by logging, one or two streams, a scratch buffer allocated and freed each step
 * (--churn N: N of them, no caching allocator);
 * and, not drawn, the second half of the step's kernels launched by another thread while
 * the training thread waits for it (--backward-thread 1: PyTorch's autograd engine runs
 * the backward pass on a thread of its own, and loss.backward() waits for it).
 * --fix CHANGE applies one of the changes gpuwatch's advice names, so that the saving it
 * predicts can be measured (given twice, both: a changes_together finding's pair):
 *   no_sync        the loss stays on the GPU, read once at the end, or with --extras 1
 *                  every 10 or 50 steps (drawn; --read-every N); an event two steps back
 *                  keeps the host from running further ahead
 *   input_workers  batches loaded by 2, 4 or 8 worker threads (drawn; --workers N), 2
 *                  each ahead, as users pick the count: not from the CPUs
 *   pinned_async   the batch in pinned memory, copied without waiting for the stream
 *   cuda_graphs    the step's kernels captured once into a graph, replayed each step
 *   no_churn       the scratch buffer allocated once
 *   async_checkpoint  the checkpoint's state copied into pinned memory on a side stream and
 *                  written by a background thread, one save in flight
 *   coalesced      the small uploads gathered into one pinned staging buffer, one async copy
 * pinned_async makes the per-step download pinned and asynchronous too (an event waited
 * for before its data is used): pinned both ways; and the small uploads come from pinned
 * memory (DataLoader(pin_memory=True) pins every tensor of a batch, a dict's too), each
 * still its own copy.
 * With --extras 1, drawn too (after the knobs above, so that their draws stay): a
 * checkpoint every N steps (its state read back into pageable memory, then written: the
 * thread waits on storage), small blocking uploads each step (a dict of tensors moved one
 * by one), and a download each step into pageable memory (an offloaded optimizer's
 * gradients). Without it a seed draws the loop it drew before these knobs existed.
 * Every copy goes on the loop's stream, as PyTorch's do (its current stream): a copy on the
 * legacy default stream would not wait for kernels on a non-blocking stream, and a
 * download so made raced the step it reads.
 * The knobs drawn are printed on the first line of stdout.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#include "common.h"
#include "loader.h"

struct knobs {
    long steps;
    uint64_t load_ns;        /* batch loading on the training thread, per step */
    unsigned kernels;        /* per step */
    uint64_t kernel_ns;      /* each */
    uint64_t copy_bytes;     /* the batch's H2D copy (0: none) */
    int pageable;            /* ... from pageable memory */
    int sync_copy;           /* ... then waits for the stream (non_blocking=False) */
    unsigned sync_every;     /* loss read back every N steps (0: never) */
    uint64_t log_ns;         /* host work after each read */
    unsigned streams;        /* 1 or 2: the second runs every other kernel */
    int churn;               /* scratch buffers allocated and freed each step (drawn: 0 or
                                1; --churn N: N of them, cuMemAlloc/cuMemFree without a
                                caching allocator) */
    int nvtx;                /* each step an NVTX range "train_step" (the profiler's
                                ProfilerStep#N: it starts before the batch is loaded) */
    int backward_thread;     /* the second half of the kernels on an "autograd" thread */
    uint64_t python_ns;      /* host work before each launch (an eager op's Python); not
                                drawn, and none on the autograd thread */
    long workers;            /* the input_workers fix's DataLoader workers */
    unsigned read_every;     /* the no_sync fix reads the loss every N steps */
    unsigned ckpt_every;     /* a checkpoint every N steps (0: none) ... */
    uint64_t ckpt_bytes;     /* ... reading back this much state into pageable memory ... */
    uint64_t ckpt_write_ns;  /* ... then writing it (host work) */
    unsigned small_copies;   /* blocking 4 KiB uploads from pageable memory per step */
    uint64_t download_bytes; /* a device-to-host copy into pageable memory per step (0: none) */
};

enum fix { FIX_NONE, FIX_NO_SYNC, FIX_INPUT, FIX_PINNED, FIX_GRAPHS, FIX_CHURN, FIX_CKPT,
           FIX_COALESCE, FIX_LAST = FIX_COALESCE };
#define FIX(f) (1u << (f))  /* the changes made: a mask of them */
static const char *const fix_names[] = {"none",        "no_sync",          "input_workers",
                                        "pinned_async", "cuda_graphs",     "no_churn",
                                        "async_checkpoint", "coalesced"};
#define SMALL_COPY_BYTES 4096u
#define MAX_SCRATCH 64u  /* --churn N: the most scratch buffers a step */

static uint64_t next_random(uint64_t *state)  /* splitmix64 */
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t pick(uint64_t *state, uint64_t lo, uint64_t hi)  /* [lo, hi] */
{
    return lo + next_random(state) % (hi - lo + 1);
}

/* Log-uniform: lo times 2^n for n uniform up to log2(hi / lo), then a uniform factor in
 * [1, 2), at most hi. */
static uint64_t pick_scale(uint64_t *state, uint64_t lo, uint64_t hi)
{
    unsigned doublings = 0;
    while ((lo << (doublings + 1)) <= hi)
        doublings++;
    uint64_t v = lo << pick(state, 0, doublings);
    v += pick(state, 0, v - 1);
    return v > hi ? hi : v;
}

static void draw(struct knobs *k, uint64_t seed, int extras)
{
    uint64_t st = seed;
    st = next_random(&st);  /* a hash of the seed: close seeds draw unrelated loops */
    k->load_ns = pick(&st, 0, 1) ? pick(&st, 500, 5000) * 1000 : 0;
    k->kernels = (unsigned)pick(&st, 1, 40);
    k->kernel_ns = pick_scale(&st, 200000, 4000000) / k->kernels;  /* the step's GPU time */
    k->copy_bytes = pick(&st, 0, 3) ? pick_scale(&st, 64u << 10, 16u << 20) : 0;
    k->pageable = (int)pick(&st, 0, 1);
    k->sync_copy = pick(&st, 0, 3) == 0;
    k->sync_every = (unsigned)pick(&st, 0, 4);
    k->log_ns = k->sync_every && pick(&st, 0, 1) ? pick(&st, 50, 900) * 1000 : 0;
    k->streams = (unsigned)pick(&st, 1, 2);
    k->churn = pick(&st, 0, 3) == 0;
    k->nvtx = (int)pick(&st, 0, 1);
    k->workers = 2l << pick(&st, 0, 2);  /* (drawn after the others: their loops stay) */
    k->read_every = pick(&st, 0, 1) ? 50 : 10;
    k->ckpt_every = pick(&st, 0, 3) == 0 ? (unsigned)pick(&st, 20, 50) : 0;
    k->ckpt_bytes = pick(&st, 8, 64) << 20;
    k->ckpt_write_ns = pick(&st, 2000, 20000) * 1000;
    k->small_copies = pick(&st, 0, 3) == 0 ? (unsigned)pick(&st, 50, 400) : 0;
    k->download_bytes = pick(&st, 0, 5) == 0 ? pick_scale(&st, 1u << 20, 16u << 20) : 0;
    if (!extras) {  /* the loops drawn before these knobs were (the tests' seeds) */
        k->read_every = 0;
        k->ckpt_every = 0;
        k->small_copies = 0;
        k->download_bytes = 0;
    }
}

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s [--seed N] [--fix CHANGE] [--steps N] [--load-us N] [--kernels N]\n"
            "          [--kernel-ns N] [--copy-kb N] [--pageable 0|1] [--sync-copy 0|1]\n"
            "          [--sync-every N] [--log-us N] [--streams 1|2] [--churn N]\n"
            "          [--nvtx 0|1] [--backward-thread 0|1 (with --streams 1)] [--workers N]\n"
            "          [--read-every N] [--ckpt-every N] [--ckpt-mb N] [--ckpt-write-us N]\n"
            "          [--small-copies N] [--download-kb N] [--python-us N] [--extras 0|1]\n"
            "A training-like loop drawn from --seed (default 1), knobs set after it;\n"
            "--fix: no_sync, input_workers, pinned_async, cuda_graphs, no_churn,\n"
            "async_checkpoint, coalesced (given twice or more: all of them).\n",
            prog);
}

static uint64_t number(const char *prog, const char *opt, const char *arg, uint64_t max)
{
    char *end;
    unsigned long long v = strtoull(arg, &end, 10);
    if (*end || !*arg || v > max) {
        fprintf(stderr, "%s: %s wants a number from 0 to %llu\n", prog, opt,
                (unsigned long long)max);
        exit(2);
    }
    return v;
}

static unsigned parse(int argc, char **argv, struct knobs *k)
{
    static const char prog[] = "example_random_loop";
    static const struct option opts[] = {
        {"seed", required_argument, NULL, 'S'},      {"fix", required_argument, NULL, 'x'},
        {"steps", required_argument, NULL, 's'},     {"load-us", required_argument, NULL, 'l'},
        {"kernels", required_argument, NULL, 'k'},   {"kernel-ns", required_argument, NULL, 'n'},
        {"copy-kb", required_argument, NULL, 'c'},   {"pageable", required_argument, NULL, 'p'},
        {"sync-copy", required_argument, NULL, 'y'}, {"sync-every", required_argument, NULL, 'e'},
        {"log-us", required_argument, NULL, 'g'},    {"streams", required_argument, NULL, 't'},
        {"churn", required_argument, NULL, 'u'},     {"nvtx", required_argument, NULL, 'v'},
        {"backward-thread", required_argument, NULL, 'b'},
        {"workers", required_argument, NULL, 'w'},
        {"read-every", required_argument, NULL, 'R'},
        {"ckpt-every", required_argument, NULL, 'C'}, {"ckpt-mb", required_argument, NULL, 'M'},
        {"ckpt-write-us", required_argument, NULL, 'W'},
        {"small-copies", required_argument, NULL, 'Q'},
        {"download-kb", required_argument, NULL, 'D'},
        {"python-us", required_argument, NULL, 'P'},
        {"extras", required_argument, NULL, 'X'},
        {"help", no_argument, NULL, 'h'},
        {0}};
    uint64_t seed = 1;
    int extras = 0;
    for (int c; (c = getopt_long(argc, argv, "S:h", opts, NULL)) != -1;) { /* the seed first */
        if (c == 'S')
            seed = number(prog, "--seed", optarg, UINT32_MAX);
        else if (c == 'X')
            extras = (int)number(prog, "--extras", optarg, 1);
    }
    draw(k, seed, extras);
    k->steps = 60;
    k->backward_thread = 0;
    k->python_ns = 0;
    unsigned fixes = 0;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "S:h", opts, NULL)) != -1;) {
        switch (c) {
        case 'S': case 'X': break;
        case 'x': {
            enum fix fix;
            for (fix = FIX_NONE; fix <= FIX_LAST && strcmp(optarg, fix_names[fix]); fix++)
                ;
            if (fix > FIX_LAST) {
                fprintf(stderr, "%s: --fix: unknown change '%s'\n", prog, optarg);
                exit(2);
            }
            fixes |= fix == FIX_NONE ? 0 : FIX(fix);
            break;
        }
        case 's': k->steps = (long)number(prog, "--steps", optarg, 1000000); break;
        case 'l': k->load_ns = number(prog, "--load-us", optarg, 1000000) * 1000; break;
        case 'k': k->kernels = (unsigned)number(prog, "--kernels", optarg, 100000); break;
        case 'n': k->kernel_ns = number(prog, "--kernel-ns", optarg, 1000000000); break;
        case 'c': k->copy_bytes = number(prog, "--copy-kb", optarg, 1u << 20) << 10; break;
        case 'p': k->pageable = (int)number(prog, "--pageable", optarg, 1); break;
        case 'y': k->sync_copy = (int)number(prog, "--sync-copy", optarg, 1); break;
        case 'e': k->sync_every = (unsigned)number(prog, "--sync-every", optarg, 1000); break;
        case 'g': k->log_ns = number(prog, "--log-us", optarg, 1000000) * 1000; break;
        case 't': k->streams = (unsigned)number(prog, "--streams", optarg, 2); break;
        case 'u': k->churn = (int)number(prog, "--churn", optarg, MAX_SCRATCH); break;
        case 'v': k->nvtx = (int)number(prog, "--nvtx", optarg, 1); break;
        case 'b': k->backward_thread = (int)number(prog, "--backward-thread", optarg, 1); break;
        case 'w': k->workers = (long)number(prog, "--workers", optarg, EX_MAX_WORKERS); break;
        case 'R': k->read_every = (unsigned)number(prog, "--read-every", optarg, 100000); break;
        case 'C': k->ckpt_every = (unsigned)number(prog, "--ckpt-every", optarg, 100000); break;
        case 'M': k->ckpt_bytes = number(prog, "--ckpt-mb", optarg, 1024) << 20; break;
        case 'W': k->ckpt_write_ns = number(prog, "--ckpt-write-us", optarg, 10000000) * 1000; break;
        case 'Q': k->small_copies = (unsigned)number(prog, "--small-copies", optarg, 100000); break;
        case 'P': k->python_ns = number(prog, "--python-us", optarg, 1000000) * 1000; break;
        case 'D': k->download_bytes = number(prog, "--download-kb", optarg, 1u << 20) << 10; break;
        case 'h': usage(stdout, argv[0]); exit(0);
        default: usage(stderr, argv[0]); exit(2);
        }
    }
    if (!k->steps)
        k->steps = 1;
    if (!k->streams)
        k->streams = 1;
    if (!k->ckpt_bytes)
        k->ckpt_every = 0;
    if (k->backward_thread && k->streams > 1) {
        fprintf(stderr, "%s: --backward-thread 1 wants --streams 1\n", prog);
        exit(2);
    }
    char python[48] = "";
    if (k->python_ns)
        snprintf(python, sizeof python, ", python %llu us a launch",
                 (unsigned long long)(k->python_ns / 1000));
    char made[128] = "";
    for (enum fix f = FIX_NO_SYNC; f <= FIX_LAST; f++)
        if (fixes & FIX(f))
            snprintf(made + strlen(made), sizeof made - strlen(made), "%s%s", *made ? "+" : "",
                     fix_names[f]);
    printf("random_loop: steps %ld load %llu us, %u kernels x %llu ns, copy %llu KiB %s %s, "
           "sync every %u + log %llu us, %u stream%s, churn %d, nvtx %d%s%s, checkpoint every %u "
           "(%llu MiB, %llu us), %u small copies, download %llu KiB; fix %s (%ld workers, "
           "read every %u)\n",
           k->steps, (unsigned long long)(k->load_ns / 1000), k->kernels,
           (unsigned long long)k->kernel_ns, (unsigned long long)(k->copy_bytes >> 10),
           k->pageable ? "pageable" : "pinned", k->sync_copy ? "sync" : "async", k->sync_every,
           (unsigned long long)(k->log_ns / 1000), k->streams, k->streams > 1 ? "s" : "",
           k->churn, k->nvtx, k->backward_thread ? ", backward thread" : "", python, k->ckpt_every,
           (unsigned long long)(k->ckpt_bytes >> 20), (unsigned long long)(k->ckpt_write_ns / 1000),
           k->small_copies, (unsigned long long)(k->download_bytes >> 10),
           *made ? made : fix_names[FIX_NONE], k->workers, k->read_every);
    return fixes;
}

/* The autograd engine's thread: launches the backward half of each step's kernels when the
 * training thread hands it over, which waits meanwhile (loss.backward()). */
struct autograd {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int pending, quit, running;
    struct ex_ctx *ex;
    unsigned from, to;       /* the kernels it launches */
};

static void *autograd_main(void *arg)
{
    struct autograd *a = arg;
    EX_CK(a->ex, cuCtxSetCurrent(a->ex->ctx));
    pthread_mutex_lock(&a->lock);
    for (;;) {
        while (!a->pending && !a->quit)
            pthread_cond_wait(&a->changed, &a->lock);
        if (a->quit)
            break;
        pthread_mutex_unlock(&a->lock);
        for (unsigned i = a->from; i < a->to; i++)
            ex_launch(a->ex, 0);
        pthread_mutex_lock(&a->lock);
        a->pending = 0;
        pthread_cond_broadcast(&a->changed);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

static int autograd_start(struct autograd *a, struct ex_ctx *ex, unsigned from, unsigned to)
{
    *a = (struct autograd){.ex = ex, .from = from, .to = to};
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->changed, NULL);
    a->running = pthread_create(&a->thread, NULL, autograd_main, a) == 0;
    return a->running ? 0 : -1;
}

static void autograd_backward(struct autograd *a)
{
    pthread_mutex_lock(&a->lock);
    a->pending = 1;
    pthread_cond_broadcast(&a->changed);
    while (a->pending)
        pthread_cond_wait(&a->changed, &a->lock);
    pthread_mutex_unlock(&a->lock);
}

static void autograd_stop(struct autograd *a)
{
    if (!a->running)
        return;
    pthread_mutex_lock(&a->lock);
    a->quit = 1;
    pthread_cond_broadcast(&a->changed);
    pthread_mutex_unlock(&a->lock);
    pthread_join(a->thread, NULL);
    a->running = 0;
}

/* async_checkpoint: the background thread that writes a save once its state is on the host
 * (torch.distributed.checkpoint.async_save, or a thread writing the state_dict). */
struct writer {
    pthread_t thread;
    int running;
    struct ex_ctx *ex;
    CUstream stream;     /* the save's copy back, on a side stream */
    uint64_t write_ns;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    EX_CK(w->ex, cuCtxSetCurrent(w->ex->ctx));
    EX_CK(w->ex, cuStreamSynchronize(w->stream));
    ex_sleep_ns(w->write_ns);  /* (writing to storage: the thread waits, off the CPU) */
    return NULL;
}

static void writer_wait(struct writer *w)
{
    if (w->running)
        pthread_join(w->thread, NULL);
    w->running = 0;
}

/* The step's kernels, every other one on the second stream when there are two (joined
 * back to the first by an event); with an autograd thread, the first half (the forward)
 * here, then the second half on that thread. */
static void launch_kernels(struct ex_ctx *ex, const struct knobs *k, CUstream side,
                           CUevent fork, CUevent join, struct autograd *autograd)
{
    if (k->streams > 1) {
        EX_CK(ex, cuEventRecord(fork, ex->stream));
        EX_CK(ex, cuStreamWaitEvent(side, fork, 0));
    }
    CUstream main_stream = ex->stream;
    unsigned here = autograd && autograd->running ? autograd->from : k->kernels;
    for (unsigned i = 0; i < here; i++) {
        ex->stream = k->streams > 1 && (i & 1) ? side : main_stream;
        if (k->python_ns)
            ex_work_ns(k->python_ns);
        ex_launch(ex, 0);
    }
    ex->stream = main_stream;
    if (here < k->kernels)
        autograd_backward(autograd);
    if (k->streams > 1) {
        EX_CK(ex, cuEventRecord(join, side));
        EX_CK(ex, cuStreamWaitEvent(main_stream, join, 0));
    }
}

int main(int argc, char **argv)
{
    struct knobs k;
    unsigned fixes = parse(argc, argv, &k);
    char name[48];
    snprintf(name, sizeof name, "layer_%lluns", (unsigned long long)k.kernel_ns);
    const char *const kernels[] = {name};
    struct ex_ctx ex;
    ex_init(&ex, "example_random_loop", kernels, 1);
    CUstream side = NULL;
    CUevent fork = NULL, join = NULL, done[2];
    if (k.streams > 1) {
        EX_CK(&ex, cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
        EX_CK(&ex, cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
        EX_CK(&ex, cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    }
    for (int b = 0; b < 2; b++)
        EX_CK(&ex, cuEventCreate(&done[b], CU_EVENT_DISABLE_TIMING));
    size_t copy = k.copy_bytes ? k.copy_bytes : 4096;
    CUdeviceptr weights, acts, scratch[MAX_SCRATCH] = {0};
    unsigned char *batch;
    float item;
    EX_CK(&ex, cuMemAlloc(&weights, 32u << 20));
    EX_CK(&ex, cuMemAlloc(&acts, copy));
    int pinned_batch = !k.pageable || (fixes & FIX(FIX_PINNED));
    if (pinned_batch)
        EX_CK(&ex, cuMemHostAlloc((void **)&batch, copy, 0));
    else if (!(batch = malloc(copy)))
        return 1;
    memset(batch, 1, copy);
    for (int i = 0; i < k.churn && (fixes & FIX(FIX_CHURN)); i++)
        EX_CK(&ex, cuMemAlloc(&scratch[i], 8u << 20));
    /* the checkpoint's state, the host memory it is read into (pinned when saved
     * asynchronously), the small uploads' tensors and the per-step download's */
    CUdeviceptr ckpt_dev = 0, small_dev = 0, down_dev = 0;
    void *ckpt_host = NULL, *down_host = NULL;
    unsigned char *small_host = NULL, *staging = NULL;
    CUstream ckpt_stream = NULL;
    CUevent ckpt_ready = NULL, down_done = NULL;
    struct writer writer = {.ex = &ex, .write_ns = k.ckpt_write_ns};
    int ckpt_async = (fixes & FIX(FIX_CKPT)) != 0, down_pinned = (fixes & FIX(FIX_PINNED)) != 0;
    if (k.ckpt_every) {
        EX_CK(&ex, cuMemAlloc(&ckpt_dev, k.ckpt_bytes));
        if (ckpt_async) {
            EX_CK(&ex, cuMemHostAlloc(&ckpt_host, k.ckpt_bytes, 0));
            EX_CK(&ex, cuStreamCreate(&ckpt_stream, CU_STREAM_NON_BLOCKING));
            EX_CK(&ex, cuEventCreate(&ckpt_ready, CU_EVENT_DISABLE_TIMING));
            writer.stream = ckpt_stream;
        } else if (!(ckpt_host = malloc(k.ckpt_bytes))) {
            return 1;
        }
        memset(ckpt_host, 0, k.ckpt_bytes);
    }
    size_t small_bytes = (size_t)k.small_copies * SMALL_COPY_BYTES;
    if (small_bytes) {
        EX_CK(&ex, cuMemAlloc(&small_dev, small_bytes));
        if (fixes & FIX(FIX_PINNED))  /* pin_memory=True pins every tensor of the batch */
            EX_CK(&ex, cuMemHostAlloc((void **)&small_host, small_bytes, 0));
        else if (!(small_host = malloc(small_bytes)))
            return 1;
        memset(small_host, 0, small_bytes);
        if (fixes & FIX(FIX_COALESCE))  /* (two: one step's copy may still be in flight) */
            EX_CK(&ex, cuMemHostAlloc((void **)&staging, 2 * small_bytes, 0));
    }
    if (k.download_bytes) {
        EX_CK(&ex, cuMemAlloc(&down_dev, k.download_bytes));
        if (down_pinned) {
            EX_CK(&ex, cuMemHostAlloc(&down_host, k.download_bytes, 0));
            EX_CK(&ex, cuEventCreate(&down_done, CU_EVENT_DISABLE_TIMING));
        } else if (!(down_host = malloc(k.download_bytes))) {
            return 1;
        }
        memset(down_host, 0, k.download_bytes);
    }
    struct ex_loader loader = {0};
    if (k.load_ns && (fixes & FIX(FIX_INPUT)) &&
        ex_loader_start(&loader, k.steps, k.load_ns, k.workers) != 0)
        return 1;
    struct autograd autograd = {0};
    if (k.backward_thread && !(fixes & FIX(FIX_GRAPHS)) &&
        autograd_start(&autograd, &ex, k.kernels / 2, k.kernels) != 0)
        return 1;
    CUgraphExec graph_exec = NULL;
    if (fixes & FIX(FIX_GRAPHS)) {
        CUgraph graph;
        EX_CK(&ex, cuStreamBeginCapture(ex.stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
        launch_kernels(&ex, &k, side, fork, join, NULL);  /* (all of them: one graph) */
        EX_CK(&ex, cuStreamEndCapture(ex.stream, &graph));
        EX_CK(&ex, cuGraphInstantiate(&graph_exec, graph, 0));
        EX_CK(&ex, cuGraphDestroy(graph));
    }
    for (long s = 0; s < k.steps; s++) {
        int b = (int)(s & 1);
        if (k.nvtx)
            nvtxRangePushA("train_step");
        if (k.load_ns) {
            if (fixes & FIX(FIX_INPUT))
                ex_loader_take(&loader);
            else
                ex_work_ns(k.load_ns);  /* next(iter(loader)) on this thread */
        }
        for (int i = 0; i < k.churn && !(fixes & FIX(FIX_CHURN)); i++)
            EX_CK(&ex, cuMemAlloc(&scratch[i], 8u << 20));
        if (small_bytes && staging) {  /* gathered on the host, one copy */
            unsigned char *half = staging + (size_t)b * small_bytes;
            memcpy(half, small_host, small_bytes);
            EX_CK(&ex, cuMemcpyHtoDAsync(small_dev, half, small_bytes, ex.stream));
        } else {
            /* x.cuda() for each of them: PyTorch copies on its current stream, and from
             * pageable memory the call returns when the copy is done */
            for (unsigned i = 0; i < k.small_copies; i++)
                EX_CK(&ex, cuMemcpyHtoDAsync(small_dev + (CUdeviceptr)i * SMALL_COPY_BYTES,
                                             small_host + (size_t)i * SMALL_COPY_BYTES,
                                             SMALL_COPY_BYTES, ex.stream));
        }
        if (k.copy_bytes || k.load_ns) {  /* (a batch loaded is a batch uploaded: 4 KiB) */
            batch[0] = (unsigned char)s;
            EX_CK(&ex, cuMemcpyHtoDAsync(acts, batch, copy, ex.stream));
            /* x.cuda() without non_blocking=True: PyTorch waits for the stream */
            if (k.sync_copy && !(fixes & FIX(FIX_PINNED)))
                EX_CK(&ex, cuStreamSynchronize(ex.stream));
        }
        if (graph_exec)
            EX_CK(&ex, cuGraphLaunch(graph_exec, ex.stream));
        else
            launch_kernels(&ex, &k, side, fork, join, &autograd);
        for (int i = 0; i < k.churn && !(fixes & FIX(FIX_CHURN)); i++)
            EX_CK(&ex, cuMemFree(scratch[i]));  /* waits for the device */
        if (k.download_bytes && down_pinned) {  /* non_blocking=True, an event before use */
            EX_CK(&ex, cuMemcpyDtoHAsync(down_host, down_dev, k.download_bytes, ex.stream));
            EX_CK(&ex, cuEventRecord(down_done, ex.stream));
            EX_CK(&ex, cuEventSynchronize(down_done));
        } else if (k.download_bytes) {  /* grads.cpu(): waits for the step, then moves */
            EX_CK(&ex, cuMemcpyDtoHAsync(down_host, down_dev, k.download_bytes, ex.stream));
        }
        if (k.sync_every && s % k.sync_every == 0 && !(fixes & FIX(FIX_NO_SYNC))) {
            /* loss.item(): a copy to pageable memory on the stream, which waits for it */
            EX_CK(&ex, cuMemcpyDtoHAsync(&item, acts, sizeof item, ex.stream));
            ex_work_ns(k.log_ns);  /* print(f"loss {loss:.4f}") */
        } else {
            if (k.sync_every && s % k.sync_every == 0)
                ex_work_ns(k.log_ns);  /* the logging stays, of the value read earlier */
            /* the fix users write reads the accumulated loss every N steps */
            if (k.sync_every && (fixes & FIX(FIX_NO_SYNC)) && k.read_every &&
                (s + 1) % k.read_every == 0)
                EX_CK(&ex, cuMemcpyDtoHAsync(&item, acts, sizeof item, ex.stream));
            /* the host stays at most two steps ahead */
            if (s >= 2)
                EX_CK(&ex, cuEventSynchronize(done[b]));
            EX_CK(&ex, cuEventRecord(done[b], ex.stream));
        }
        if (k.ckpt_every && (s + 1) % k.ckpt_every == 0) {
            if (ckpt_async) {  /* one save in flight: the previous one written first */
                writer_wait(&writer);
                EX_CK(&ex, cuEventRecord(ckpt_ready, ex.stream));
                EX_CK(&ex, cuStreamWaitEvent(ckpt_stream, ckpt_ready, 0));
                EX_CK(&ex, cuMemcpyDtoHAsync(ckpt_host, ckpt_dev, k.ckpt_bytes, ckpt_stream));
                writer.running = pthread_create(&writer.thread, NULL, writer_main, &writer) == 0;
            } else {  /* torch.save(model.state_dict()): read back, then written */
                EX_CK(&ex, cuMemcpyDtoHAsync(ckpt_host, ckpt_dev, k.ckpt_bytes, ex.stream));
                ex_sleep_ns(k.ckpt_write_ns);
            }
        }
        if (k.nvtx)
            nvtxRangePop();
    }
    writer_wait(&writer);
    if ((fixes & FIX(FIX_NO_SYNC)) && k.sync_every)
        EX_CK(&ex, cuMemcpyDtoHAsync(&item, acts, sizeof item, ex.stream));
    if (ckpt_dev) {
        EX_CK(&ex, cuMemFree(ckpt_dev));
        if (ckpt_async) {
            EX_CK(&ex, cuMemFreeHost(ckpt_host));
            EX_CK(&ex, cuEventDestroy(ckpt_ready));
            EX_CK(&ex, cuStreamDestroy(ckpt_stream));
        } else {
            free(ckpt_host);
        }
    }
    if (small_dev) {
        EX_CK(&ex, cuMemFree(small_dev));
        if (fixes & FIX(FIX_PINNED))
            EX_CK(&ex, cuMemFreeHost(small_host));
        else
            free(small_host);
        if (staging)
            EX_CK(&ex, cuMemFreeHost(staging));
    }
    if (down_dev) {
        EX_CK(&ex, cuMemFree(down_dev));
        if (down_pinned) {
            EX_CK(&ex, cuMemFreeHost(down_host));
            EX_CK(&ex, cuEventDestroy(down_done));
        } else {
            free(down_host);
        }
    }
    ex_loader_join(&loader);
    autograd_stop(&autograd);
    if (graph_exec)
        EX_CK(&ex, cuGraphExecDestroy(graph_exec));
    for (int i = 0; i < k.churn && (fixes & FIX(FIX_CHURN)); i++)
        EX_CK(&ex, cuMemFree(scratch[i]));
    if (pinned_batch)
        EX_CK(&ex, cuMemFreeHost(batch));
    else
        free(batch);
    EX_CK(&ex, cuMemFree(acts));
    EX_CK(&ex, cuMemFree(weights));
    for (int b = 0; b < 2; b++)
        EX_CK(&ex, cuEventDestroy(done[b]));
    if (side) {
        EX_CK(&ex, cuEventDestroy(fork));
        EX_CK(&ex, cuEventDestroy(join));
        EX_CK(&ex, cuStreamDestroy(side));
    }
    ex_finish(&ex, k.steps);
    return 0;
}
