/* CLOCK_MONOTONIC in ns: what the machine's measurements (host_copy_rate.c, wake_latency.c)
 * time with. */
#ifndef GW_MACHINE_MONOTONIC_NS_H
#define GW_MACHINE_MONOTONIC_NS_H

#include <stdint.h>
#include <time.h>

static inline uint64_t gw_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
