/*
 * gpuwatch: one binary, a table of subcommands (one file each).
 *
 *   gpuwatch run [--output DIR] [--no-analyze] -- CMD...
 *   gpuwatch dump TRACE
 *   gpuwatch stats [--json] TRACE...
 *   gpuwatch analyze [--json] [--fail-if EXPR] TRACE|DIR...
 *   gpuwatch serve [--listen HOST:PORT] [DIR]
 *   gpuwatch top [DIR]
 *   gpuwatch machine [--env]
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analyze.h"
#include "cli.h"
#include "install_paths.h"
#include "trace_reader.h"

#ifndef GPUWATCH_VERSION
#define GPUWATCH_VERSION "unknown"
#endif

struct command {
    const char *name;
    const char *help;
    int (*fn)(int argc, char **argv);
};

static const struct command commands[] = {
    {"run", "run a command with the shim preloaded and list the traces it wrote", gw_cmd_run},
    {"dump", "print a trace's header and one line per event", gw_cmd_dump},
    {"stats", "per entry point counts and host time, totals, top kernels", gw_cmd_stats},
    {"analyze", "what wastes the GPU, why, what to change; ranked by time saved",
     gw_cmd_analyze},
    {"export", "the run as a timeline for Perfetto UI / chrome://tracing", gw_cmd_export},
    {"report", "the analysis as one self-contained HTML page", gw_cmd_report},
    {"diff", "two runs before and after a change: what moved, predicted vs realized",
     gw_cmd_diff},
    {"serve", "the run as Prometheus metrics at /metrics, while it runs and after",
     gw_cmd_serve},
    {"top", "a live view of the processes tracing: busy, idle by cause, memory, findings",
     gw_cmd_top},
    {"machine", "this machine's host memcpy rate, as gpuwatch run hands it to the shim",
     gw_cmd_machine},
    {"mcp", "a Model Context Protocol server over the traces, for an assistant", gw_cmd_mcp},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: gpuwatch COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "\n'gpuwatch COMMAND --help' describes a command. Trace format v%u.\n",
            GW_FORMAT_VERSION);
}

int gw_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gpuwatch %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'gpuwatch %s --help'.\n", cmd);
    return GW_EXIT_USAGE;
}

size_t gw_print_not_traces(const char *cmd, const struct an_run *run)
{
    size_t found = 0;
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (!t->readable && gw_reader_error_not_trace(t->error)) {
            fprintf(stderr, "gpuwatch %s: %s\n", cmd, t->error);
            found++;
        }
    }
    return found;
}

size_t gw_field_len(const char *field, size_t size)
{
    const char *nul = memchr(field, 0, size);
    return nul ? (size_t)(nul - field) : size;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GW_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return GW_EXIT_OK;
    }
    if (!strcmp(name, "--version")) {
        gw_print_version(stdout, GPUWATCH_VERSION, GW_FORMAT_VERSION);
        return GW_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(name, commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "gpuwatch: unknown command '%s'\n", name);
    usage(stderr);
    return GW_EXIT_USAGE;
}
