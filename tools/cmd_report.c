/*
 * gpuwatch report [-o FILE] [--gpu-price DOLLARS] TRACE|DIR...
 *
 * The run analyzed, as one self-contained HTML page (tools/export/html_report.c): no
 * network, inline CSS and SVG, printable.
 *
 * Exit status: 0 written; 1 a trace could not be read or was damaged (the rest is in it);
 * 2 usage error, a JSON file that is not a trace (nothing written), or the output cannot
 * be written.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/analyze.h"
#include "cli.h"
#include "export/html_report.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch report [OPTIONS] TRACE|DIR...\n"
            "Writes the analysis of one run (a directory: every *.gwt in it) as one HTML\n"
            "page: the findings with their evidence, change, saving and the lines that cause\n"
            "them; per process the summary and plots (GPU idle by cause, device memory over\n"
            "time, the longest idle intervals). Self-contained: no network, no script.\n\n"
            "  -o, --output FILE     write there (default: report.html)\n"
            "  -p, --gpu-price D     price of one GPU-hour (or GPUWATCH_GPU_PRICE): what each\n"
            "                        process and phase cost, its idle time by cause\n"
            "  -h, --help            this text\n"
            "Exit status: 0; 1 a trace was unreadable or damaged (the rest is reported);\n"
            "2 usage error, a JSON file that is not a trace (nothing written), or the output\n"
            "cannot be written.\n");
}

int gw_cmd_report(int argc, char **argv)
{
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},
        {"gpu-price", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = "report.html";
    int c;
    struct an_options opt;
    an_options_default(&opt);
    const char *env_price = getenv("GPUWATCH_GPU_PRICE");
    if (env_price && *env_price && gw_parse_gpu_price(env_price, &opt.gpu_price) != 0)
        return gw_usage_error("report", "GPUWATCH_GPU_PRICE expects dollars per GPU-hour, "
                                        "got '%s'", env_price);
    while ((c = getopt_long(argc, argv, "o:p:h", options, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'p':
            if (gw_parse_gpu_price(optarg, &opt.gpu_price) != 0)
                return gw_usage_error("report", "--gpu-price expects dollars per GPU-hour, "
                                                "got '%s'", optarg);
            break;
        case 'h':
            help(stdout);
            return GW_EXIT_OK;
        default:
            return gw_usage_error("report", "unknown option");
        }
    }
    if (optind >= argc)
        return gw_usage_error("report", "no trace file or directory given");
    struct an_run run;
    if (an_run_open(&run, argv + optind, argc - optind, &opt) != 0 ||
        gw_print_not_traces("report", &run)) {  /* (before FILE is made) */
        an_run_free(&run);
        return GW_EXIT_USAGE;
    }
    an_run_analyze(&run);
    FILE *out = fopen(output, "w");
    if (!out) {
        perror(output);
        an_run_free(&run);
        return GW_EXIT_USAGE;
    }
    int written = gw_report_html(out, &run);
    int rc = run.unreadable || run.damage_reports ? GW_EXIT_DAMAGE : GW_EXIT_OK;
    if (fclose(out) != 0 || written != 0) {
        perror(output);
        rc = GW_EXIT_USAGE;
    }
    an_run_free(&run);
    return rc;
}
