/*
 * gpuwatch serve [--listen HOST:PORT] [--gpu-price DOLLARS] [--print] [DIR]
 *
 * The run in DIR (default ./gpuwatch-traces) as Prometheus metrics at /metrics, while its
 * processes write their traces and after: a thread analyzes what the files hold so far with
 * the analyzer of `gpuwatch analyze` (tools/analyze/) whenever they changed, at most once a
 * second (tools/live/metrics_cache.c), and a scrape gets the latest figures
 * (tools/live/metrics.c) in the format it asks for (text 0.0.4 or OpenMetrics).
 * Listens on 127.0.0.1:9464 unless told otherwise; port 0 picks a free one (printed).
 *
 * Exit status: 0 stopped by SIGINT/SIGTERM (or --print done); 2 usage error, or the
 * address could not be listened on (in use).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "cli.h"
#include "live/http_server.h"
#include "live/live_run.h"
#include "live/metrics.h"
#include "live/metrics_cache.h"

#define DEFAULT_LISTEN "127.0.0.1:9464"
#define REQUEST_TIMEOUT_MS 5000
#define ANALYSIS_PERIOD_MS 1000     /* the traces analyzed again at most this often */
#define FIRST_ANALYSIS_WAIT_MS 8000 /* a scrape before the first analysis waits this long */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch serve [OPTIONS] [DIR]\n"
            "Serves the run whose traces are in DIR (default ./gpuwatch-traces) as\n"
            "Prometheus metrics at http://HOST:PORT/metrics, while it runs and after;\n"
            "the traces are analyzed as gpuwatch analyze does whenever they changed, at\n"
            "most once a second; a scrape gets the latest figures.\n\n"
            "  -l, --listen HOST:PORT   address to listen on (default " DEFAULT_LISTEN ");\n"
            "                           port 0: any free port, printed on stderr\n"
            "  -p, --gpu-price DOLLARS  price of one GPU-hour (or GPUWATCH_GPU_PRICE):\n"
            "                           exports gpuwatch_cost_dollars_total\n"
            "  -P, --print              write the metrics once to stdout and exit\n"
            "  -o, --openmetrics        with --print: OpenMetrics text instead of 0.0.4\n"
            "  -h, --help               this text\n"
            "Exit status: 0 stopped by SIGINT or SIGTERM; 2 usage error or the address\n"
            "cannot be listened on (in use).\n");
}

static void answer(int fd, struct gw_metrics_cache *cache)
{
    struct gw_http_request req;
    if (gw_http_read_request(fd, &req, REQUEST_TIMEOUT_MS) != 0) {
        static const char bad[] = "bad request\n";
        gw_http_respond(fd, 400, "text/plain; charset=utf-8", bad, sizeof bad - 1);
        return;
    }
    int head = !strcmp(req.method, "HEAD");
    if (strcmp(req.method, "GET") && !head) {
        static const char no[] = "only GET\n";
        gw_http_respond(fd, 405, "text/plain; charset=utf-8", no, sizeof no - 1);
        return;
    }
    if (!strcmp(req.path, "/metrics")) {
        int om = gw_http_wants_openmetrics(req.accept);
        size_t len = 0;
        char *body = gw_metrics_cache_get(cache, om, &len, FIRST_ANALYSIS_WAIT_MS);
        if (!body) {
            static const char busy[] = "the first analysis of the traces is not done yet\n";
            gw_http_respond(fd, 503, "text/plain; charset=utf-8", busy, sizeof busy - 1);
            return;
        }
        gw_http_respond(fd, 200, om ? GW_CONTENT_TYPE_OPENMETRICS : GW_CONTENT_TYPE_TEXT, body,
                        head ? 0 : len);
        free(body);
    } else if (!strcmp(req.path, "/")) {
        static const char page[] = "<html><body><h1>gpuwatch serve</h1>"
                                   "<p><a href=\"/metrics\">/metrics</a></p></body></html>\n";
        gw_http_respond(fd, 200, "text/html; charset=utf-8", page, head ? 0 : sizeof page - 1);
    } else {
        static const char missing[] = "not found: try /metrics\n";
        gw_http_respond(fd, 404, "text/plain; charset=utf-8", missing, sizeof missing - 1);
    }
}

int gw_parse_gpu_price(const char *text, double *price)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v >= 0) || v > 1e6)
        return -1;
    *price = v;
    return 0;
}

int gw_cmd_serve(int argc, char **argv)
{
    static const struct option options[] = {
        {"listen", required_argument, NULL, 'l'},
        {"gpu-price", required_argument, NULL, 'p'},
        {"print", no_argument, NULL, 'P'},
        {"openmetrics", no_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *listen_at = DEFAULT_LISTEN;
    int print = 0, openmetrics = 0, c;
    struct an_options opt;
    an_options_default(&opt);
    opt.jobs = 1;  /* one file at a time, on one CPU: the traced program keeps the others */
    const char *env_price = getenv("GPUWATCH_GPU_PRICE");
    if (env_price && *env_price && gw_parse_gpu_price(env_price, &opt.gpu_price) != 0)
        return gw_usage_error("serve", "GPUWATCH_GPU_PRICE expects dollars per GPU-hour, "
                                       "got '%s'", env_price);
    while ((c = getopt_long(argc, argv, "l:p:Poh", options, NULL)) != -1) {
        switch (c) {
        case 'l': listen_at = optarg; break;
        case 'p':
            if (gw_parse_gpu_price(optarg, &opt.gpu_price) != 0)
                return gw_usage_error("serve", "--gpu-price expects dollars per GPU-hour, "
                                               "got '%s'", optarg);
            break;
        case 'P': print = 1; break;
        case 'o': openmetrics = 1; break;
        case 'h': help(stdout); return GW_EXIT_OK;
        default: return gw_usage_error("serve", "unknown option");
        }
    }
    if (argc - optind > 1)
        return gw_usage_error("serve", "expected one DIR at most");
    const char *dir = optind < argc ? argv[optind] : "gpuwatch-traces";
    struct gw_counter_floor floor = {0};
    if (print) {
        size_t len = 0;
        char *body = gw_metrics_render(dir, &opt, openmetrics, &floor, &len);
        gw_counter_floor_free(&floor);
        if (!body || fwrite(body, 1, len, stdout) != len || fflush(stdout) != 0) {
            free(body);
            fprintf(stderr, "gpuwatch serve: error writing the output\n");
            return GW_EXIT_DAMAGE;
        }
        free(body);
        return GW_EXIT_OK;
    }
    char err[512];
    int fd = gw_http_listen(listen_at, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "gpuwatch serve: %s\n", err);
        return GW_EXIT_USAGE;
    }
    struct sigaction sa = {.sa_handler = on_signal};  /* no SA_RESTART: poll returns */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct gw_metrics_cache *cache = gw_metrics_cache_start(dir, &opt, ANALYSIS_PERIOD_MS);
    if (!cache) {
        fprintf(stderr, "gpuwatch serve: cannot start the analysis thread\n");
        close(fd);
        return GW_EXIT_DAMAGE;
    }
    fprintf(stderr, "gpuwatch serve: listening on port %d: %s (%s)\n", gw_http_port(fd),
            listen_at, dir);
    while (!stop) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, 1000);
        if (n <= 0)
            continue;
        int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0)
            continue;
        answer(conn, cache);
        shutdown(conn, SHUT_WR);
        close(conn);
    }
    close(fd);
    gw_metrics_cache_stop(cache);
    return GW_EXIT_OK;
}
