/*
 * gpuwatch machine: the facts about this machine that the analysis needs and the trace
 * cannot show, measured here, in gpuwatch's own process. `gpuwatch run` measures the same
 * before it execs the program and hands them to the shim; a program preloaded by hand gets
 * them from the environment this prints (eval "$(gpuwatch machine --env)").
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "machine/host_copy_rate.h"
#include "machine/wake_latency.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch machine [--env] [--tries N]\n"
            "  the host's memcpy rate, memory to memory (bytes/s): what gathering many small\n"
            "  uploads into one pinned buffer costs the host, for the small-copies advice;\n"
            "  and how late a sleeping thread runs after its wake-up is due (ns): what a wait\n"
            "  for the GPU that sleeps adds to each sync, for a host-only trace\n"
            "  --env      print them as GPUWATCH_HOST_COPY_BPS=N GPUWATCH_WAKE_NS=M, for a\n"
            "             program preloaded by hand\n"
            "  --tries N  copies timed, the best kept (default %u)\n",
            GW_HOST_COPY_TRIES);
}

int gw_cmd_machine(int argc, char **argv)
{
    static const struct option options[] = {
        {"env", no_argument, NULL, 'e'},
        {"tries", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, env = 0;
    unsigned tries = GW_HOST_COPY_TRIES;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'e': env = 1; break;
        case 't': {
            char *end;
            unsigned long n = strtoul(optarg, &end, 10);
            if (*end || n < 1 || n > 1000)
                return gw_usage_error("machine", "--tries takes 1..1000, not '%s'", optarg);
            tries = (unsigned)n;
            break;
        }
        case 'h': help(stdout); return GW_EXIT_OK;
        default: return gw_usage_error("machine", "unknown option");
        }
    }
    uint64_t bps = gw_host_copy_rate(tries);
    if (!bps) {
        fprintf(stderr, "gpuwatch machine: cannot allocate the copy's buffers\n");
        return GW_EXIT_DAMAGE;
    }
    uint64_t wake = gw_wake_latency_ns(GW_WAKE_TRIES);
    /* (--env on one line: eval "export $(gpuwatch machine --env)" exports both) */
    if (env)
        printf(GW_HOST_COPY_ENV "=%" PRIu64 " " GW_WAKE_ENV "=%" PRIu64 "\n", bps, wake);
    else
        printf("host_copy_bps %" PRIu64 "\nwake_ns %" PRIu64 "\n", bps, wake);
    return GW_EXIT_OK;
}
