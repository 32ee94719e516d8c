#include "wake_latency.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "monotonic_ns.h"

/* As long as a wait for a step's kernels sleeps, at the least: the longer a CPU idles the
 * later it wakes (on this VM the median was 29 us after 0.2 ms asleep, 51 after 1 ms, 91
 * after 3 ms), so longer waits end later than this says. */
#define AHEAD_NS 1000000ull
#define MAX_TRIES 1000

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t gw_wake_latency_ns(unsigned tries)
{
    uint64_t late[MAX_TRIES];
    if (tries < 1)
        tries = 1;
    if (tries > MAX_TRIES)
        tries = MAX_TRIES;
    /* a driver's wait ends on an interrupt, not on a timer Linux may defer: no slack (a
     * normal thread's timed sleep may end 50 us late) */
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack > 1)
        prctl(PR_SET_TIMERSLACK, 1ul, 0, 0, 0);
    unsigned n = 0;
    for (unsigned i = 0; i < tries; i++) {
        uint64_t due = gw_monotonic_ns() + AHEAD_NS;
        struct timespec at = {(time_t)(due / 1000000000ull), (long)(due % 1000000000ull)};
        int rc;
        while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL)) == EINTR)
            ;
        uint64_t woke = gw_monotonic_ns();
        if (rc == 0)
            late[n++] = woke > due ? woke - due : 0;
    }
    if (slack > 1)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
    if (!n)
        return 0;
    qsort(late, n, sizeof late[0], by_value);
    return late[n / 2];
}
