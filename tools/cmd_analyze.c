/*
 * gpuwatch analyze [--json] [--fail-if EXPR]... [--gpu-price DOLLARS] [--jobs N] TRACE|DIR...
 *
 * What wastes the GPU in a run, why, and what to change, ranked by the time it would
 * save. The analysis is in tools/analyze/ (docs/analyze.md); the JSON layout in
 * docs/analyze-json.md.
 *
 * Exit status: 0 analyzed (a trace that ended abruptly, as a killed run's does, included);
 * 1 a trace could not be read or was damaged (what was intact is analyzed); 2 usage error,
 * or a file that is no trace (JSON that is not a PyTorch profiler trace);
 * 3 a --fail-if condition holds (takes precedence over 1).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "cli.h"

#define GW_EXIT_CONDITION 3
#define MAX_CONDITIONS 32

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch analyze [OPTIONS] TRACE|DIR...\n"
            "Reads the traces of one run (a directory: every *.gwt in it, one per process)\n"
            "and prints what wastes the GPU, the evidence, what to change, and an upper bound\n"
            "on the time each change would save, ranked.\n\n"
            "  -j, --json               one JSON object (docs/analyze-json.md)\n"
            "  -f, --fail-if EXPR       exit 3 when EXPR holds; repeatable (any holds). EXPR:\n"
            "                           METRIC OP NUMBER[%%] or finding=ID / finding!=ID,\n"
            "                           e.g. 'gpu_util<0.6', 'finding=input_pipeline'\n"
            "                           metrics: %s\n"
            "  -p, --gpu-price DOLLARS  price of one GPU-hour (or GPUWATCH_GPU_PRICE): cost\n"
            "                           of the run and savings in money too\n"
            "  -c, --cpus N             CPUs of the traced machine (default: those the trace\n"
            "                           records, or this machine's when it is the traced one)\n"
            "  -b, --brief              summary and findings only\n"
            "  -w, --window-ms N        reorder window for out-of-order chunks (default 2000)\n"
            "  -J, --jobs N             files read at once, one thread each (default: one per\n"
            "                           CPU); the result is the same for any N\n"
            "      --without-cpu-samples  analyze as if the traces had no CPU samples nor CPU\n"
            "                           count, as a PyTorch profiler trace has neither (to\n"
            "                           hold a .gwt against its --format kineto export)\n"
            "  -h, --help               this text\n"
            "Exit status: 0 (a trace that ends inside a chunk, as a killed run's does, is\n"
            "said on stderr: \"ended abruptly at offset N\"); 1 a trace was unreadable,\n"
            "damaged or had a second trace appended (the rest is analyzed);\n"
            "2 usage error, or JSON that is not a PyTorch profiler trace; 3 a --fail-if\n"
            "condition holds.\n",
            an_condition_metrics());
}

static int parse_positive(const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v >= 0))
        return -1;
    *out = v;
    return 0;
}

int gw_cmd_analyze(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"fail-if", required_argument, NULL, 'f'},
        {"gpu-price", required_argument, NULL, 'p'},
        {"cpus", required_argument, NULL, 'c'},
        {"brief", no_argument, NULL, 'b'},
        {"window-ms", required_argument, NULL, 'w'},
        {"jobs", required_argument, NULL, 'J'},
        {"without-cpu-samples", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct an_options opt;
    an_options_default(&opt);
    struct an_condition *conditions[MAX_CONDITIONS];
    const char *expressions[MAX_CONDITIONS];
    size_t nconditions = 0;
    int json = 0, brief = 0, c, rc = GW_EXIT_OK;
    double v;
    char err[512];
    const char *env_price = getenv("GPUWATCH_GPU_PRICE");  /* the option overrides it */
    if (env_price && *env_price && gw_parse_gpu_price(env_price, &opt.gpu_price) != 0)
        return gw_usage_error("analyze", "GPUWATCH_GPU_PRICE expects dollars per GPU-hour, "
                                         "got '%s'", env_price);
    while ((c = getopt_long(argc, argv, "jf:p:c:bw:J:h", options, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'b': brief = 1; break;
        case 'f':
            if (nconditions == MAX_CONDITIONS) {
                rc = gw_usage_error("analyze", "at most %d --fail-if", MAX_CONDITIONS);
                goto out;
            }
            if (an_condition_parse(optarg, &conditions[nconditions], err, sizeof err) != 0) {
                rc = gw_usage_error("analyze", "--fail-if %s", err);
                goto out;
            }
            expressions[nconditions++] = optarg;
            break;
        case 'p':
            if (gw_parse_gpu_price(optarg, &opt.gpu_price) != 0) {
                rc = gw_usage_error("analyze", "--gpu-price expects dollars per hour, got '%s'",
                                    optarg);
                goto out;
            }
            break;
        case 'c':
            if (parse_positive(optarg, &v) != 0 || v < 1 || v > 1e6) {
                rc = gw_usage_error("analyze", "--cpus expects a count, got '%s'", optarg);
                goto out;
            }
            opt.cpus = (unsigned)v;
            break;
        case 'w':
            if (parse_positive(optarg, &v) != 0 || v > 3.6e6) {
                rc = gw_usage_error("analyze", "--window-ms expects milliseconds, got '%s'",
                                    optarg);
                goto out;
            }
            opt.window_ns = (uint64_t)(v * 1e6);
            break;
        case 'J':
            if (parse_positive(optarg, &v) != 0 || v < 1 || v > AN_MAX_JOBS ||
                v != (unsigned)v) {
                rc = gw_usage_error("analyze", "--jobs expects a count from 1 to %d, got '%s'",
                                    AN_MAX_JOBS, optarg);
                goto out;
            }
            opt.jobs = (unsigned)v;
            break;
        case 'S': opt.without_cpu_samples = 1; break;
        case 'h': help(stdout); goto out;
        default: rc = gw_usage_error("analyze", "unknown option"); goto out;
        }
    }
    if (optind >= argc) {
        rc = gw_usage_error("analyze", "expected at least one TRACE or DIR");
        goto out;
    }
    struct an_run run;
    if (an_run_paths(&run, argv + optind, argc - optind, &opt) != 0) {
        fprintf(stderr, "gpuwatch analyze: no trace to analyze\n");
        an_run_free(&run);
        rc = GW_EXIT_DAMAGE;
        goto out;
    }
    for (size_t i = 0; i < run.ntraces; i++) {
        const struct an_trace *t = &run.traces[i];
        if (!t->readable)
            fprintf(stderr, "gpuwatch analyze: %s\n", t->error);
        for (size_t k = 0; k < t->ndamage; k++)
            fprintf(stderr, "gpuwatch analyze: %s\n", t->damage[k].message);
        if (!t->readable || t->rs.damage_reports)
            rc = rc == GW_EXIT_USAGE ? rc : GW_EXIT_DAMAGE;
        if (!t->readable && gw_reader_error_not_trace(t->error))
            rc = GW_EXIT_USAGE;  /* not a trace at all (a JSON file of something else) */
    }
    if (json)
        an_report_json(stdout, &run);
    else
        an_report_text(stdout, &run, !brief);
    fflush(stdout);
    if (ferror(stdout)) {
        fprintf(stderr, "gpuwatch analyze: error writing the output\n");
        rc = GW_EXIT_DAMAGE;
    }
    for (size_t i = 0; i < nconditions; i++) {
        if (an_condition_holds(conditions[i], &run)) {
            fprintf(stderr, "gpuwatch analyze: --fail-if %s holds\n", expressions[i]);
            rc = GW_EXIT_CONDITION;
            break;
        }
    }
    an_run_free(&run);
out:
    for (size_t i = 0; i < nconditions; i++)
        an_condition_free(conditions[i]);
    return rc;
}
