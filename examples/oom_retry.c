/*
 * oom_retry: planted waste = out-of-memory retry storms from variable shapes. A small
 * caching allocator, as PyTorch's: freed activations stay cached for reuse by a request of
 * a similar size; a request no cached block fits goes to cuMemAlloc; when that fails with
 * CUDA_ERROR_OUT_OF_MEMORY, every cached block is cuMemFree'd (each free waits for the
 * device) and the allocation retried. Activation sizes change every step (variable
 * sequence lengths), so the cache keeps filling the device with blocks that fit nothing.
 *
 * Sizes are fractions of the memory free at start, so any device runs out the same way;
 * on the simulated driver use a small one: FAKECUDA_MEM_MB=256.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#define MAX_BLOCKS 256
#define TENSORS_PER_STEP 3

struct block {
    CUdeviceptr ptr;
    size_t bytes;
    int in_use;
};

struct cache {
    struct ex_ctx *ex;
    struct block blocks[MAX_BLOCKS];
    size_t n;
    unsigned long retries, failures;
};

/* Frees every cached block not in use: the allocator's reaction to an OOM. */
static void flush_cache(struct cache *c)
{
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->blocks[i].in_use)
            c->blocks[kept++] = c->blocks[i];
        else
            EX_CK(c->ex, cuMemFree(c->blocks[i].ptr));
    }
    c->n = kept;
}

/* Gives a block back to the cache (not to the driver). */
static void cache_release(struct cache *c, CUdeviceptr ptr)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->blocks[i].ptr == ptr)
            c->blocks[i].in_use = 0;
}

/* A block of at least `bytes`: a cached one up to 1/8 larger (a size class), else a new
 * one. Returns its address, 0 when even the retry failed. */
static CUdeviceptr cache_alloc(struct cache *c, size_t bytes)
{
    struct block *best = NULL;
    for (size_t i = 0; i < c->n; i++) {
        struct block *b = &c->blocks[i];
        if (!b->in_use && b->bytes >= bytes && b->bytes <= bytes + bytes / 8 &&
            (!best || b->bytes < best->bytes))
            best = b;
    }
    if (best) {
        best->in_use = 1;
        return best->ptr;
    }
    if (c->n == MAX_BLOCKS)
        flush_cache(c);
    CUdeviceptr ptr;
    CUresult r = cuMemAlloc(&ptr, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {  /* free the cache, try again */
        c->retries++;
        flush_cache(c);
        r = cuMemAlloc(&ptr, bytes);
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        c->failures++;
        return 0;
    }
    EX_CK(c->ex, r);
    c->blocks[c->n++] = (struct block){ptr, bytes, 1};
    return ptr;
}

static const char *const kernels[] = {"forward_1ms", "backward_2ms"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_oom_retry", 80,
                          "Planted waste: OOM-retry storms of a caching allocator\n"
                          "(on the simulated driver: FAKECUDA_MEM_MB=256).");
    struct ex_ctx ex;
    ex_init(&ex, "example_oom_retry", kernels, 2);
    size_t free_bytes, total;
    EX_CK(&ex, cuMemGetInfo(&free_bytes, &total));
    CUdeviceptr weights;
    EX_CK(&ex, cuMemAlloc(&weights, free_bytes / 20));
    static struct cache cache;
    cache.ex = &ex;
    CUevent done[2];
    for (int b = 0; b < 2; b++)
        EX_CK(&ex, cuEventCreate(&done[b], CU_EVENT_DISABLE_TIMING));
    srand(12345);  /* the same "sequence lengths" every run */
    for (long s = 0; s < steps; s++) {
        int b = (int)(s & 1);
        if (s >= 2)
            EX_CK(&ex, cuEventSynchronize(done[b]));
        CUdeviceptr acts[TENSORS_PER_STEP];
        for (int t = 0; t < TENSORS_PER_STEP; t++) {
            /* 2 % to 10 % of the device: a batch of variable-length sequences */
            size_t bytes = free_bytes / 1000 * (size_t)(20 + rand() % 80);
            acts[t] = cache_alloc(&cache, bytes);
        }
        for (size_t k = 0; k < 2; k++)
            ex_launch(&ex, k);
        EX_CK(&ex, cuEventRecord(done[b], ex.stream));
        for (int t = 0; t < TENSORS_PER_STEP; t++)
            if (acts[t])
                cache_release(&cache, acts[t]);
    }
    EX_CK(&ex, cuStreamSynchronize(ex.stream));
    for (size_t i = 0; i < cache.n; i++)
        EX_CK(&ex, cuMemFree(cache.blocks[i].ptr));
    EX_CK(&ex, cuMemFree(weights));
    for (int b = 0; b < 2; b++)
        EX_CK(&ex, cuEventDestroy(done[b]));
    printf("example_oom_retry: %lu out-of-memory retries, %lu failed allocations\n",
           cache.retries, cache.failures);
    ex_finish(&ex, steps);
    return 0;
}
