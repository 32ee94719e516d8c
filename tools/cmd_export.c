/*
 * gpuwatch export [--format chrome|kineto] [-o FILE] TRACE|DIR...
 *
 * A run as a timeline for viewers: Chrome trace-event JSON, which Perfetto UI and
 * chrome://tracing open, or in the layout of PyTorch's profiler (Kineto) that HTA reads
 * (tools/export/chrome_trace.c says what is in it). The run is
 * analyzed first, so its findings are on a track of their own.
 *
 * Exit status: 0 written; 1 a trace could not be read or was damaged (the rest is
 * written); 2 usage error, a JSON file that is not a trace (nothing written), or the
 * output cannot be written.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze.h"
#include "cli.h"
#include "export/chrome_trace.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch export [OPTIONS] TRACE|DIR...\n"
            "Writes the traces of one run (a directory: every *.gwt in it) as a timeline:\n"
            "host threads with every driver call, NVTX ranges, one track per GPU stream with\n"
            "flows from each call to its GPU work, counters (device memory, GPU busy per\n"
            "10 ms, CPU use) and the findings over the time their evidence covers.\n\n"
            "  -f, --format chrome   Chrome trace-event JSON, for Perfetto UI (ui.perfetto.dev)\n"
            "                        and chrome://tracing (the default)\n"
            "  -f, --format kineto   the layout of PyTorch's profiler (Kineto), which HTA\n"
            "                        (HolisticTraceAnalysis) and TensorBoard read: one rank\n"
            "                        per file (several traces: -o DIR gets DIR/rank-R.json\n"
            "                        each); ProfilerStep#N from the steps found\n"
            "  -o, --output FILE     write there (default: standard output); a directory\n"
            "                        for --format kineto of several traces\n"
            "  -h, --help            this text\n"
            "Exit status: 0; 1 a trace was unreadable or damaged (the rest is written);\n"
            "2 usage error, a JSON file that is not a trace (nothing written), or the output\n"
            "cannot be written.\n");
}

/* --format kineto of several traces: HTA reads one file per rank, so DIR/rank-R.json per
 * trace (pid-P.json without a rank). Frees run. */
static int split_kineto(struct an_run *run, const char *dir)
{
    int rc = GW_EXIT_OK;
    if (!dir) {
        an_run_free(run);
        return gw_usage_error("export", "--format kineto of %zu traces writes one file per "
                              "rank: give -o DIR", run->ntraces);
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        perror(dir);
        an_run_free(run);
        return GW_EXIT_USAGE;
    }
    for (size_t i = 0; i < run->ntraces; i++) {
        const struct an_trace *t = &run->traces[i];
        if (!t->readable) {
            fprintf(stderr, "gpuwatch export: %s\n", t->error);
            rc = GW_EXIT_DAMAGE;
            continue;
        }
        char path[4096];
        if (t->hdr.rank >= 0)
            snprintf(path, sizeof path, "%s/rank-%d.json", dir, (int)t->hdr.rank);
        else
            snprintf(path, sizeof path, "%s/pid-%u.json", dir, (unsigned)t->hdr.pid);
        FILE *out = fopen(path, "w");
        if (!out) {
            perror(path);
            rc = GW_EXIT_USAGE;
            continue;
        }
        int written = gw_export_kineto_trace(out, run, i);
        if (fclose(out) != 0 || written == -2) {
            perror(path);
            rc = GW_EXIT_USAGE;
        } else if (written != 0 && rc == GW_EXIT_OK) {
            rc = GW_EXIT_DAMAGE;
        }
        fprintf(stderr, "gpuwatch export: %s\n", path);
    }
    if (rc == GW_EXIT_OK && run->damage_reports)
        rc = GW_EXIT_DAMAGE;
    an_run_free(run);
    return rc;
}

static void *analyze_thread(void *run)
{
    an_run_analyze(run);
    return NULL;
}

/* 1 when the run's files come from one host: its traces share one clock, so the timeline
 * can be written before the analysis has aligned any (an_run_clock_shift). */
static int one_host(const struct an_run *run)
{
    for (size_t i = 1; i < run->ntraces; i++)
        if (!an_same_host(&run->traces[i], &run->traces[0]))
            return 0;
    return 1;
}

/* The analysis on a thread of its own while this one reads the files again for the
 * timeline (gw_export_begin): the export takes about as long as the slower of the two,
 * plus a read of each file with steps for their spans. Several hosts (or no thread to be
 * had): the analysis first. */
static int write_concurrently(FILE *out, struct an_run *run, int kineto)
{
    pthread_t thread;
    int analyzing = one_host(run) && pthread_create(&thread, NULL, analyze_thread, run) == 0;
    if (!analyzing)
        an_run_analyze(run);
    int rc;
    struct gw_export *e = gw_export_begin(out, run, kineto, SIZE_MAX, &rc);
    if (e)
        gw_export_bodies(e);
    if (analyzing)
        pthread_join(thread, NULL);
    return e ? gw_export_finish(e) : rc;
}

int gw_cmd_export(int argc, char **argv)
{
    static const struct option options[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    int c, kineto = 0;
    while ((c = getopt_long(argc, argv, "f:o:h", options, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (!strcmp(optarg, "kineto"))
                kineto = 1;
            else if (strcmp(optarg, "chrome") != 0)
                return gw_usage_error("export", "--format %s: the formats are: chrome, kineto",
                                      optarg);
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            help(stdout);
            return GW_EXIT_OK;
        default:
            return gw_usage_error("export", "unknown option");
        }
    }
    if (optind >= argc)
        return gw_usage_error("export", "no trace file or directory given");
    struct an_options opt;
    an_options_default(&opt);
    struct an_run run;
    if (an_run_open(&run, argv + optind, argc - optind, &opt) != 0) {
        an_run_free(&run);
        return GW_EXIT_USAGE;
    }
    if (gw_print_not_traces("export", &run)) {  /* (before -o FILE is made) */
        an_run_free(&run);
        return GW_EXIT_USAGE;
    }
    if (kineto && run.ntraces > 1) {
        an_run_analyze(&run);
        return split_kineto(&run, output);
    }
    FILE *out = output ? fopen(output, "w") : stdout;
    if (!out) {
        perror(output);
        an_run_free(&run);
        return GW_EXIT_USAGE;
    }
    int written = write_concurrently(out, &run, kineto);
    int rc = written == -2 || written == -3        ? GW_EXIT_USAGE
             : written == 0 && !run.damage_reports ? GW_EXIT_OK
                                                   : GW_EXIT_DAMAGE;
    if ((output ? fclose(out) : fflush(out)) != 0) {
        perror(output ? output : "standard output");
        rc = GW_EXIT_USAGE;
    }
    an_run_free(&run);
    return rc;
}
