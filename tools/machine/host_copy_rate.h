/*
 * The host's memcpy rate, measured by the gpuwatch command in its own process (before
 * `gpuwatch run` execs the program, or by `gpuwatch machine`), never inside the traced
 * program: what gathering many small uploads into one pinned staging buffer costs the host
 * (the fix small_copies and per_sample_copies advise), which the program's calls do not show.
 * The shim writes the figure it is handed (GPUWATCH_HOST_COPY_BPS) as a HOST_COPY definition.
 */
#ifndef GW_HOST_COPY_RATE_H
#define GW_HOST_COPY_RATE_H

#include <stdint.h>

/* The environment variable the figure travels in, from the launcher to the shim. */
#define GW_HOST_COPY_ENV "GPUWATCH_HOST_COPY_BPS"

/* Copies timed by default: the best of a few, so that one moment with the CPUs busy does not
 * make the figure (~1 ms each). */
#define GW_HOST_COPY_TRIES 5

/* The best of `tries` copies of a 4 MiB batch just written into a staging buffer used
 * before (as the fix gathers a batch a loader made), bytes/s; 0 when the buffers cannot be
 * had. */
uint64_t gw_host_copy_rate(unsigned tries);

#endif
