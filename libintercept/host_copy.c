#include "host_copy.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

/* As large as a batch of small tensors, larger than a core's cache share; rounds: the
 * writer's start and the next 7 flush intervals (50 ms each by default) */
#define HOST_COPY_BYTES (4u << 20)
#define HOST_COPY_ROUNDS 8

/* Both buffers out of the caches, to memory: a batch staged each step was written a step
 * or more before (by a loader, in another process's cache, the step's work since), and so
 * was the staging buffer; copied again and again, the same 8 MiB stay in a large cache and
 * move at twice that rate (per_sample_copies --fixed: its 4 MiB memcpy took 0.38 ms a
 * step, the rate timed hot 22 GB/s, and the coalesced world gained 117 ms for 66-80). */
static void evict(const unsigned char *buf, size_t bytes)
{
#if defined(__x86_64__) || defined(__i386__)
    for (size_t off = 0; off < bytes; off += 64)
        _mm_clflush(buf + off);
    _mm_mfence();
#elif defined(__aarch64__)
    for (size_t off = 0; off < bytes; off += 64)
        __asm__ volatile("dc civac, %0" : : "r"(buf + off) : "memory");
    __asm__ volatile("dsb ish" : : : "memory");
#else
    (void)buf;  /* (no portable way: the rate stays what the caches give) */
    (void)bytes;
#endif
}

void gw_host_copy_free(struct gw_host_copy *hc)
{
    free(hc->from);
    free(hc->to);
    hc->from = hc->to = NULL;
}

uint64_t gw_host_copy_round(struct gw_host_copy *hc, unsigned tries)
{
    if (hc->rounds >= HOST_COPY_ROUNDS)
        return 0;
    hc->rounds++;
    if (!hc->from) {
        hc->from = malloc(HOST_COPY_BYTES);
        hc->to = malloc(HOST_COPY_BYTES);
        if (!hc->from || !hc->to) {
            gw_host_copy_free(hc);
            hc->rounds = HOST_COPY_ROUNDS;
            return 0;
        }
        /* (the pages are made first, untimed: a staging buffer is allocated once) */
        memset(hc->from, 1, HOST_COPY_BYTES);
        memset(hc->to, 0, HOST_COPY_BYTES);
    }
    uint64_t best_ns = 0;
    for (unsigned i = 0; i < tries; i++) {
        evict(hc->from, HOST_COPY_BYTES);
        evict(hc->to, HOST_COPY_BYTES);
        uint64_t t0 = gw_monotonic_ns();
        memcpy(hc->to, hc->from, HOST_COPY_BYTES);
        __asm__ volatile("" : : "r"(hc->to) : "memory");  /* (the copy is kept) */
        uint64_t ns = gw_monotonic_ns() - t0;
        if (ns && (!best_ns || ns < best_ns))
            best_ns = ns;
    }
    if (hc->rounds >= HOST_COPY_ROUNDS)
        gw_host_copy_free(hc);
    uint64_t bps = best_ns ? (uint64_t)HOST_COPY_BYTES * 1000000000ull / best_ns : 0;
    if (!bps || (hc->best_bps && (double)bps < 1.05 * (double)hc->best_bps))
        return 0;
    hc->best_bps = bps;
    return bps;
}
