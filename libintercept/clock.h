/* The trace clock: nanoseconds on CLOCK_MONOTONIC's scale, read from the TSC where it is
 * invariant (two vDSO clock_gettime calls per hooked call would cost more than the rest
 * of the hook). */
#ifndef GW_CLOCK_H
#define GW_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

struct gw_clock {
    int source;          /* enum gw_clock_source */
    uint64_t tsc_base;
    uint64_t ns_base;    /* CLOCK_MONOTONIC ns at tsc_base */
    uint64_t mult;       /* ns per tick, 32.32 fixed point */
};

extern struct gw_clock gw_clock_state;

/* Calibrates the TSC against CLOCK_MONOTONIC (a few ms) or selects CLOCK_MONOTONIC. */
void gw_clock_init(int want_tsc);

static inline uint64_t gw_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread (a system call, not vDSO: only around calls that may wait
 * for the GPU, which take far longer); 0 when it cannot be read. */
static inline uint64_t gw_thread_cpu_ns(void)
{
    struct timespec ts;
    int saved_errno = errno;  /* read before the program's call too */
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
        errno = saved_errno;
        return 0;
    }
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t gw_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static inline uint64_t gw_ticks(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#define GW_HAVE_TICKS 1
#elif defined(__aarch64__)
static inline uint64_t gw_ticks(void)
{
    uint64_t value;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(value));
    return value;
}
#define GW_HAVE_TICKS 1
#else
#define GW_HAVE_TICKS 0
static inline uint64_t gw_ticks(void) { return 0; }
#endif

static inline uint64_t gw_now(void)
{
    if (gw_clock_state.source == 2 /* GW_CLOCK_TSC */) {
        uint64_t delta = gw_ticks() - gw_clock_state.tsc_base;
        return gw_clock_state.ns_base +
               (uint64_t)(((unsigned __int128)delta * gw_clock_state.mult) >> 32);
    }
    return gw_monotonic_ns();
}

#endif
