/* Shared by the gpuwatch subcommands (one file each: cmd_*.c). */
#ifndef GPUWATCH_CLI_H
#define GPUWATCH_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "gpuwatch/trace_format.h"

#define GW_EXIT_OK 0
#define GW_EXIT_DAMAGE 1  /* a trace was damaged or could not be read */
#define GW_EXIT_USAGE 2

/* Each subcommand gets argv[0] = its own name and parses options with getopt_long. */
int gw_cmd_run(int argc, char **argv);
int gw_cmd_dump(int argc, char **argv);
int gw_cmd_stats(int argc, char **argv);
int gw_cmd_analyze(int argc, char **argv);
int gw_cmd_export(int argc, char **argv);
int gw_cmd_report(int argc, char **argv);
int gw_cmd_diff(int argc, char **argv);
int gw_cmd_serve(int argc, char **argv);
int gw_cmd_top(int argc, char **argv);
int gw_cmd_machine(int argc, char **argv);
int gw_cmd_mcp(int argc, char **argv);

/* A price of one GPU-hour in dollars (--gpu-price, GPUWATCH_GPU_PRICE): 0, or -1. */
int gw_parse_gpu_price(const char *text, double *price);

/* "usage error" helper: prints "gpuwatch CMD: message" and a hint to stderr, returns 2. */
int gw_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Files that are JSON but not a trace (gw_reader_error_not_trace) among the run's inputs,
 * whose headers an_run_open read: each one's error as "gpuwatch CMD: FILE: ...". The
 * commands that write something from the run (export, report, diff) refuse it as a usage
 * error (exit 2) rather than write or compare without it. Returns how many. */
struct an_run;
size_t gw_print_not_traces(const char *cmd, const struct an_run *run);

/* Length of a fixed-size header string field up to its NUL (or the whole field). */
size_t gw_field_len(const char *field, size_t size);

#endif
