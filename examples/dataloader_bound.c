/*
 * dataloader_bound: planted waste = the input pipeline. Each step the host spends 4 ms
 * "loading and decoding" the next batch (on the CPU, no CUDA call), as a DataLoader with
 * num_workers=0 does on the training thread, while the GPU, done with the 2 ms step, waits.
 * The rest is ordinary: pinned batch, async copy, loss read back with .item() each step.
 * --fixed: DataLoader(num_workers=N): N = CPUs usable - 1 (at least 1) worker threads load
 * the batches, each 2 ahead at most (prefetch_factor=2), and the loop takes them ready.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "common.h"

#define BATCH_BYTES (2u << 20)
#define LOAD_NS 4000000u

static const char *const kernels[] = {"forward_500us", "backward_1ms", "optimizer_500us"};

/* The workers of --fixed: batches loaded and not taken yet, being loaded, left to start. */
struct loader {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    long loaded, loading, to_start, ahead;  /* ahead: loaded + loading at most */
};

static void *load_batches(void *arg)
{
    struct loader *l = arg;
    pthread_mutex_lock(&l->lock);
    for (;;) {
        while (l->to_start > 0 && l->loaded + l->loading >= l->ahead)
            pthread_cond_wait(&l->changed, &l->lock);
        if (l->to_start <= 0)
            break;
        l->to_start--;
        l->loading++;
        pthread_mutex_unlock(&l->lock);
        ex_spin_ns(LOAD_NS);  /* decode, in the worker */
        pthread_mutex_lock(&l->lock);
        l->loading--;
        l->loaded++;
        pthread_cond_broadcast(&l->changed);
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

static void take_batch(struct loader *l)
{
    pthread_mutex_lock(&l->lock);
    while (l->loaded == 0)
        pthread_cond_wait(&l->changed, &l->lock);
    l->loaded--;
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->lock);
}

static long usable_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_dataloader_bound", 60,
                          "Planted waste: the host loads each batch itself (4 ms).");
    struct ex_ctx ex;
    ex_init(&ex, "example_dataloader_bound", kernels, 3);
    CUdeviceptr weights, acts;
    unsigned char *batch;
    float loss;
    EX_CK(&ex, cuMemAlloc(&weights, 32u << 20));
    EX_CK(&ex, cuMemAlloc(&acts, BATCH_BYTES));
    EX_CK(&ex, cuMemHostAlloc((void **)&batch, BATCH_BYTES, 0));
    struct loader loader = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, steps, 0};
    pthread_t workers[64];
    long nworkers = 0;
    if (ex_fixed()) {
        long cpus = usable_cpus();
        nworkers = cpus > 2 ? (cpus - 1 < 64 ? cpus - 1 : 64) : 1;
        loader.ahead = 2 * nworkers;
        for (long w = 0; w < nworkers; w++)
            if (pthread_create(&workers[w], NULL, load_batches, &loader) != 0)
                return 1;
    }
    for (long s = 0; s < steps; s++) {
        if (ex_fixed())
            take_batch(&loader);  /* next(iter(loader)): ready, loaded by a worker */
        else
            ex_spin_ns(LOAD_NS);  /* next(iter(loader)): decode on this thread, no CUDA */
        memset(batch, (int)(s & 0xff), 4096);
        EX_CK(&ex, cuMemcpyHtoDAsync(acts, batch, BATCH_BYTES, ex.stream));
        for (size_t k = 0; k < 3; k++)
            ex_launch(&ex, k);
        /* loss.item(): a copy to pageable memory on the stream, which waits for the step */
        EX_CK(&ex, cuMemcpyDtoHAsync(&loss, acts, sizeof loss, ex.stream));
    }
    for (long w = 0; w < nworkers; w++)
        pthread_join(workers[w], NULL);
    EX_CK(&ex, cuMemFreeHost(batch));
    EX_CK(&ex, cuMemFree(acts));
    EX_CK(&ex, cuMemFree(weights));
    ex_finish(&ex, steps);
    return 0;
}
