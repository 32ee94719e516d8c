/*
 * gpuwatch top [--gpu-price DOLLARS] [DIR]
 *
 * A live view of the processes writing traces into DIR (default ./gpuwatch-traces),
 * refreshed every second from the analysis of what their traces hold so far
 * (tools/live/top_view.c). On a terminal the view is redrawn in place and `q` quits; else
 * one block of plain text per refresh. Ends once every process seen has exited (after the
 * block with their final figures, the same as `gpuwatch analyze` prints), or on SIGINT.
 *
 * Exit status: 0; 2 usage error.
 */
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "cli.h"
#include "live/live_run.h"
#include "live/top_view.h"

#define REFRESH_MS 1000

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch top [OPTIONS] [DIR]\n"
            "Shows the processes writing traces into DIR (default ./gpuwatch-traces) while\n"
            "they run, every second: GPU busy, GPU idle by cause (the last 10 s and since\n"
            "start), device memory in use and peak, H2D copies from pageable and pinned\n"
            "memory, the top finding so far and its saving. Ends when they have exited\n"
            "(or on q). Plain text, one block a second, when stdout is not a terminal.\n\n"
            "  -p, --gpu-price DOLLARS  price of one GPU-hour (or GPUWATCH_GPU_PRICE):\n"
            "                           the top finding's saving in dollars too\n"
            "  -h, --help               this text\n");
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Waits for the next refresh; 1 when q was typed (keys read from a terminal on stdin). */
static int wait_refresh(int keys)
{
    long end = now_ms() + REFRESH_MS;
    for (long left; !stop && (left = end - now_ms()) > 0;) {
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        if (!keys) {
            poll(NULL, 0, (int)left);
            continue;
        }
        if (poll(&p, 1, (int)left) == 1) {
            char c;
            if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q'))
                return 1;
        }
    }
    return 0;
}

int gw_cmd_top(int argc, char **argv)
{
    static const struct option options[] = {
        {"gpu-price", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct an_options opt;
    an_options_default(&opt);
    opt.jobs = 1;  /* one file at a time, on one CPU: the traced program keeps the others */
    const char *env_price = getenv("GPUWATCH_GPU_PRICE");
    if (env_price && *env_price && gw_parse_gpu_price(env_price, &opt.gpu_price) != 0)
        return gw_usage_error("top", "GPUWATCH_GPU_PRICE expects dollars per GPU-hour, got "
                                     "'%s'", env_price);
    for (int c; (c = getopt_long(argc, argv, "p:h", options, NULL)) != -1;) {
        switch (c) {
        case 'p':
            if (gw_parse_gpu_price(optarg, &opt.gpu_price) != 0)
                return gw_usage_error("top", "--gpu-price expects dollars per GPU-hour, got "
                                             "'%s'", optarg);
            break;
        case 'h': help(stdout); return GW_EXIT_OK;
        default: return gw_usage_error("top", "unknown option");
        }
    }
    if (argc - optind > 1)
        return gw_usage_error("top", "expected one DIR at most");
    const char *dir = optind < argc ? argv[optind] : "gpuwatch-traces";
    int screen = isatty(STDOUT_FILENO);
    int keys = isatty(STDIN_FILENO);
    struct termios saved;
    if (keys && tcgetattr(STDIN_FILENO, &saved) == 0) {
        struct termios raw = saved;  /* keys one at a time, not echoed */
        raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    } else {
        keys = 0;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct gw_top_history history = {0};
    int seen = 0, final_pass = 0;
    while (!stop) {
        struct an_run run;
        int have = gw_live_analyze(dir, &opt, &run);
        size_t running = 0;
        if (screen)
            fputs("\033[H\033[2J", stdout);  /* home, clear: redraw in place */
        gw_top_write(stdout, dir, have ? &run : NULL, &history, &running);
        if (screen)
            fputs(keys ? "\n(q quits)\n" : "\n", stdout);
        else
            fputc('\n', stdout);
        fflush(stdout);
        if (have) {
            seen = 1;
            an_run_free(&run);
        }
        /* every process has exited: the analysis above may have read the files before the
         * last of them was flushed, so once more, then that is the final view */
        if (seen && !running && final_pass)
            break;
        if (seen && !running) {
            final_pass = 1;
            continue;
        }
        if (wait_refresh(keys))
            break;
    }
    if (keys)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    gw_top_history_free(&history);
    return GW_EXIT_OK;
}
