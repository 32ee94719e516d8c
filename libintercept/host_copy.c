#include "host_copy.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"

/* Larger than a CPU's last-level cache share, as a batch of small tensors is; a few tries,
 * the best kept (another thread may take the CPU during one) */
#define HOST_COPY_BYTES (4u << 20)
#define HOST_COPY_TRIES 8

uint64_t gw_host_copy_bps(void)
{
    unsigned char *from = malloc(HOST_COPY_BYTES), *to = malloc(HOST_COPY_BYTES);
    uint64_t best_ns = 0;
    if (from && to) {
        /* (the pages are made first, untimed: a staging buffer is allocated once) */
        memset(from, 1, HOST_COPY_BYTES);
        memset(to, 0, HOST_COPY_BYTES);
        for (int i = 0; i < HOST_COPY_TRIES; i++) {
            uint64_t t0 = gw_monotonic_ns();
            memcpy(to, from, HOST_COPY_BYTES);
            /* (read back: the copy is not optimized away) */
            __asm__ volatile("" : : "r"(to) : "memory");
            uint64_t ns = gw_monotonic_ns() - t0;
            if (ns && (!best_ns || ns < best_ns))
                best_ns = ns;
        }
    }
    free(from);
    free(to);
    return best_ns ? (uint64_t)HOST_COPY_BYTES * 1000000000ull / best_ns : 0;
}
