#include "clock.h"

#include <stdio.h>
#include <string.h>

#include "gpuwatch/trace_format.h"
#include "log.h"

struct gw_clock gw_clock_state = {.source = GW_CLOCK_MONOTONIC};

#define CALIBRATION_NS 4000000ull

/* Only a TSC that runs at a constant rate through sleep states can stand in for a clock. */
static int tsc_is_invariant(void)
{
#if defined(__x86_64__)
    FILE *cpuinfo = fopen("/proc/cpuinfo", "re");
    if (!cpuinfo)
        return 0;
    char line[4096];
    int constant = 0, nonstop = 0;
    while (fgets(line, sizeof line, cpuinfo)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(cpuinfo);
    return constant && nonstop;
#elif defined(__aarch64__)
    return 1; /* the generic timer is architecturally constant-rate */
#else
    return 0;
#endif
}

/* One (ticks, ns) pair taken as close together as the machine allows. */
static void paired_sample(uint64_t *ticks, uint64_t *ns)
{
    uint64_t best_span = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t before = gw_ticks();
        uint64_t mono = gw_monotonic_ns();
        uint64_t after = gw_ticks();
        if (after - before < best_span) {
            best_span = after - before;
            *ticks = before + (after - before) / 2;
            *ns = mono;
        }
    }
}

void gw_clock_init(int want_tsc)
{
    gw_clock_state.source = GW_CLOCK_MONOTONIC;
    if (!want_tsc || !GW_HAVE_TICKS || !tsc_is_invariant())
        return;
    uint64_t tsc0 = 0, ns0 = 0, tsc1 = 0, ns1 = 0;  /* (set by paired_sample; GCC cannot tell) */
    paired_sample(&tsc0, &ns0);
    do
        paired_sample(&tsc1, &ns1);
    while (ns1 - ns0 < CALIBRATION_NS);
    if (tsc1 <= tsc0)
        return;
    gw_clock_state.mult = (uint64_t)((((unsigned __int128)(ns1 - ns0)) << 32) / (tsc1 - tsc0));
    gw_clock_state.tsc_base = tsc1;
    gw_clock_state.ns_base = ns1;
    gw_clock_state.source = GW_CLOCK_TSC;
    gw_debug("clock: TSC at %.3f GHz", (double)(tsc1 - tsc0) / (double)(ns1 - ns0));
}
