#include "host_copy_rate.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

/* As large as a batch of small tensors, larger than a core's cache share. */
#define HOST_COPY_BYTES (4u << 20)

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Out of the caches, to memory: copied again and again, the same 8 MiB stay in a large cache
 * and move at twice the rate a staged batch sees (per_sample_copies: timed hot, 22 GB/s, the
 * coalesced world over-predicted by half; timed cold, 9-11 GB/s, within the noise). */
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

uint64_t gw_host_copy_rate(unsigned tries)
{
    unsigned char *from = malloc(HOST_COPY_BYTES), *to = malloc(HOST_COPY_BYTES);
    uint64_t best_ns = 0;
    if (from && to) {
        /* (the pages are made first, untimed: a staging buffer is allocated once) */
        memset(from, 1, HOST_COPY_BYTES);
        memset(to, 0, HOST_COPY_BYTES);
        for (unsigned i = 0; i < tries; i++) {
            evict(from, HOST_COPY_BYTES);
            evict(to, HOST_COPY_BYTES);
            uint64_t t0 = monotonic_ns();
            memcpy(to, from, HOST_COPY_BYTES);
            __asm__ volatile("" : : "r"(to) : "memory");  /* (the copy is kept) */
            uint64_t ns = monotonic_ns() - t0;
            if (ns && (!best_ns || ns < best_ns))
                best_ns = ns;
        }
    }
    free(from);
    free(to);
    return best_ns ? (uint64_t)HOST_COPY_BYTES * 1000000000ull / best_ns : 0;
}
