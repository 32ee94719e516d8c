/*
 * gpuwatch diff [--json] [--fail-if EXPR]... [--cpus N] [--jobs N] BEFORE AFTER
 *
 * Two runs of one program (each a trace file or a run's directory), before and after a
 * change: the figures that moved, the findings gone, new and kept, and what BEFORE's
 * analysis predicted the change would save against what it saved (tools/analyze/run_diff.c).
 *
 * Exit status: 0 compared; 1 a trace could not be read or was damaged (what was intact is
 * compared); 2 usage error, or a JSON file that is not a trace (nothing compared); 3 a
 * --fail-if condition holds (takes precedence over 1).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/analyze.h"
#include "analyze/run/run_diff.h"
#include "cli.h"

#define GW_EXIT_CONDITION 3
#define MAX_CONDITIONS 32

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch diff [OPTIONS] BEFORE AFTER\n"
            "Compares two runs of one program (each a trace file or a run's directory),\n"
            "before and after a change: step time, utilization, idle by cause, copies,\n"
            "memory peak, GPU time per kernel; the findings gone, new and kept; and what\n"
            "BEFORE's analysis predicted the change would save against the wall time saved.\n\n"
            "  -j, --json            the comparison as JSON (docs/analyze-json.md)\n"
            "  -f, --fail-if EXPR    exit 3 when the change is one EXPR names: a figure, an\n"
            "                        operator and a change, relative with %% (step_ms>+5%%: the\n"
            "                        median step grew by more than 5 %%) or absolute\n"
            "                        (gpu_util<-0.05); or finding=ID (a finding new in AFTER)\n"
            "  -c, --cpus N          the CPU count the advice assumes (as for analyze)\n"
            "  -J, --jobs N          files analyzed at once (as for analyze)\n"
            "  -h, --help            this text\n"
            "Exit status: 0; 1 a trace was unreadable or damaged (the rest is compared);\n"
            "2 usage error or a JSON file that is not a trace; 3 a --fail-if condition holds.\n");
}

/* One side's files found and their headers read; 0, or the exit status to return. */
static int open_side(const char *path, const struct an_options *opt, struct an_run *run)
{
    char *paths[1] = {(char *)path};
    if (an_run_open(run, paths, 1, opt) != 0) {
        fprintf(stderr, "gpuwatch diff: %s: no trace to compare\n", path);
        return GW_EXIT_DAMAGE;
    }
    if (gw_print_not_traces("diff", run))  /* (a comparison without it would mislead) */
        return GW_EXIT_USAGE;
    return 0;
}

/* The analysis of one opened side. */
static void analyze_side(struct an_run *run, int *damaged)
{
    an_run_analyze(run);
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (!t->readable)
            fprintf(stderr, "gpuwatch diff: %s\n", t->error);
        for (size_t k = 0; k < t->ndamage; k++)
            fprintf(stderr, "gpuwatch diff: %s\n", t->damage[k].message);
        if (!t->readable || t->rs.damage_reports)
            *damaged = 1;
    }
}

static int count_option(const char *text, unsigned most, unsigned *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || v < 1 || v > most || v != (unsigned)v)
        return -1;
    *out = (unsigned)v;
    return 0;
}

int gw_cmd_diff(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"fail-if", required_argument, NULL, 'f'},
        {"cpus", required_argument, NULL, 'c'},
        {"jobs", required_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct an_options opt;
    an_options_default(&opt);
    struct an_diff_condition *conditions[MAX_CONDITIONS];
    const char *expressions[MAX_CONDITIONS];
    size_t nconditions = 0;
    int json = 0, c, rc = GW_EXIT_OK;
    char err[512];
    while ((c = getopt_long(argc, argv, "jf:c:J:h", options, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'f':
            if (nconditions == MAX_CONDITIONS) {
                rc = gw_usage_error("diff", "at most %d --fail-if", MAX_CONDITIONS);
                goto out;
            }
            if (an_diff_condition_parse(optarg, &conditions[nconditions], err, sizeof err)) {
                rc = gw_usage_error("diff", "--fail-if %s", err);
                goto out;
            }
            expressions[nconditions++] = optarg;
            break;
        case 'c':
            if (count_option(optarg, 1000000, &opt.cpus) != 0) {
                rc = gw_usage_error("diff", "--cpus expects a count, got '%s'", optarg);
                goto out;
            }
            break;
        case 'J':
            if (count_option(optarg, AN_MAX_JOBS, &opt.jobs) != 0) {
                rc = gw_usage_error("diff", "--jobs expects a count from 1 to %d, got '%s'",
                                    AN_MAX_JOBS, optarg);
                goto out;
            }
            break;
        case 'h': help(stdout); goto out;
        default: rc = gw_usage_error("diff", "unknown option"); goto out;
        }
    }
    if (argc - optind != 2) {
        rc = gw_usage_error("diff", "expected BEFORE and AFTER (trace files or run directories)");
        goto out;
    }
    const char *before_path = argv[optind], *after_path = argv[optind + 1];
    struct an_run before = {0}, after = {0};  /* (an_run_free takes an empty one) */
    int damaged = 0;
    /* both sides' files checked before either is analyzed: each one that is not a trace
     * is named */
    int failed = open_side(before_path, &opt, &before);
    int failed_after = open_side(after_path, &opt, &after);
    if (failed_after > failed)
        failed = failed_after;
    if (!failed) {
        analyze_side(&before, &damaged);
        analyze_side(&after, &damaged);
    }
    if (failed) {
        an_run_free(&before);
        an_run_free(&after);
        rc = failed;
        goto out;
    }
    struct an_diff *diff = malloc(sizeof *diff);
    if (!diff) {
        fprintf(stderr, "gpuwatch diff: out of memory\n");
        rc = GW_EXIT_DAMAGE;
    } else {
        an_diff_runs(&before, &after, diff);
        if (json)
            an_diff_json(stdout, diff, before_path, after_path);
        else
            an_diff_text(stdout, diff, before_path, after_path);
        fflush(stdout);
        rc = damaged || ferror(stdout) ? GW_EXIT_DAMAGE : GW_EXIT_OK;
        for (size_t i = 0; i < nconditions; i++)
            if (an_diff_condition_holds(conditions[i], diff)) {
                fprintf(stderr, "gpuwatch diff: --fail-if %s holds\n", expressions[i]);
                rc = GW_EXIT_CONDITION;
                break;
            }
        free(diff);
    }
    an_run_free(&before);
    an_run_free(&after);
out:
    for (size_t i = 0; i < nconditions; i++)
        an_diff_condition_free(conditions[i]);
    return rc;
}
