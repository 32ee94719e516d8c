/*
 * How late a sleeping thread runs after what it waits for has happened, on this machine:
 * measured by the gpuwatch command in its own process (before `gpuwatch run` execs the
 * program, or by `gpuwatch machine`), never inside the traced program. A wait for the GPU
 * that sleeps (cudaDeviceScheduleBlockingSync, the driver's interrupt wake-up) returns that
 * much after the GPU's work ended; a host-only trace cannot tell that time from the GPU's,
 * and without it the per-step sync of such a program looked cheaper than it is (the replay
 * took the wake-up as GPU work: 41 ms predicted where the read's removal gained 47-75). The
 * shim writes the figure it is handed (GPUWATCH_WAKE_NS) in the HOST_COPY definition.
 */
#ifndef GW_WAKE_LATENCY_H
#define GW_WAKE_LATENCY_H

#include <stdint.h>

#define GW_WAKE_ENV "GPUWATCH_WAKE_NS"

/* Sleeps timed by default: the median of this many (~1 ms each). */
#define GW_WAKE_TRIES 21

/* The median, over `tries` sleeps until an absolute time 1 ms ahead, of how late the
 * thread ran after it (an interrupt's timer, no timer slack: as a wake-up by the GPU's
 * interrupt), ns; 0 when it cannot be measured. */
uint64_t gw_wake_latency_ns(unsigned tries);

#endif
