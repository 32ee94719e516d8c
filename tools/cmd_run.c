/*
 * gpuwatch run [--output DIR] [--no-analyze] [--report] -- CMD...
 *
 * Runs CMD with GPUWATCH_OUTPUT=DIR (absolute; created when missing) and the shim first in
 * LD_PRELOAD, forwards SIGINT/SIGTERM/SIGHUP sent to gpuwatch itself to the child (a
 * terminal's Ctrl-C already reaches the whole foreground group, so it is not sent twice),
 * then lists the trace files that appeared in DIR on stderr, prints their analysis (as
 * `gpuwatch analyze`, text) on stderr unless --no-analyze, and exits with the child's
 * status (128 + signal when it was killed). Before the exec it times the host's memcpy rate
 * (machine/host_copy_rate.h) and a sleeping thread's wake-up latency (machine/
 * wake_latency.h) and hands them to the shim in GPUWATCH_HOST_COPY_BPS and GPUWATCH_WAKE_NS.
 *
 * The shim is found at: $GPUWATCH_LIB; else next to this executable (install_paths.c:
 * ../<libdir>/ or ../lib/, CMake's install and the Python package's; ../libintercept/, the
 * build tree); else the bare name "libgpuwatch.so" for the loader to find. Its absolute path
 * goes on LD_PRELOAD: nothing changes the library lookup of the program's children.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "cli.h"
#include "export/html_report.h"
#include "install_paths.h"
#include "machine/host_copy_rate.h"
#include "machine/wake_latency.h"
#include "trace_reader.h"

#define DEFAULT_OUTPUT "./gpuwatch-traces"

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    /* Signals from the terminal (SI_KERNEL) went to the child's group already. */
    if (child_pid > 0 && info->si_code != SI_KERNEL)
        kill((pid_t)child_pid, sig);
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(buf, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* LD_PRELOAD with the shim first (once). Returns a malloc'd string. */
static char *preload_value(const char *shim)
{
    const char *old = getenv("LD_PRELOAD");
    if (!old || !*old)
        return strdup(shim);
    size_t n = strlen(shim);
    for (const char *p = old; (p = strstr(p, shim)) != NULL; p += n) {
        int starts = p == old || p[-1] == ':' || p[-1] == ' ';
        int ends = p[n] == 0 || p[n] == ':' || p[n] == ' ';
        if (starts && ends)
            return strdup(old);  /* already there */
    }
    char *value = malloc(n + strlen(old) + 2);
    if (value)
        sprintf(value, "%s:%s", shim, old);
    return value;
}

struct name_list {
    char **names;
    size_t count, cap;
};

static void list_dir(const char *dir, struct name_list *list)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (list->count == list->cap) {
            size_t cap = list->cap ? list->cap * 2 : 64;
            char **names = realloc(list->names, cap * sizeof *names);
            if (!names)
                break;
            list->names = names;
            list->cap = cap;
        }
        if ((list->names[list->count] = strdup(e->d_name)) != NULL)
            list->count++;
    }
    closedir(d);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_list(struct name_list *list)
{
    if (list->count)
        qsort(list->names, list->count, sizeof *list->names, cmp_names);
}

static int in_list(const struct name_list *list, const char *name)
{
    return list->count &&
           bsearch(&name, list->names, list->count, sizeof *list->names, cmp_names) != NULL;
}

static void free_list(struct name_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->names[i]);
    free(list->names);
}

/* Prints the files that appeared in dir since `before`, with sizes and event counts. */
static void report_traces(const char *dir, const struct name_list *before, const char *shim)
{
    struct name_list after = {0};
    list_dir(dir, &after);
    sort_list(&after);
    size_t fresh = 0;
    for (size_t i = 0; i < after.count; i++)
        fresh += !in_list(before, after.names[i]);
    if (fresh == 0)
        fprintf(stderr, "gpuwatch: no trace file was written to %s (the program made no CUDA "
                "driver call, or %s was not loaded)\n", dir, shim);
    else
        fprintf(stderr, "gpuwatch: %zu trace file%s in %s:\n", fresh, fresh == 1 ? "" : "s",
                dir);
    for (size_t i = 0; i < after.count; i++) {
        if (in_list(before, after.names[i]))
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, after.names[i]);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            fprintf(stderr, "  %s\n", path);
            continue;
        }
        struct gw_reader *r;
        char err[512];
        if (gw_reader_open(path, &r, err, sizeof err) != 0) {
            fprintf(stderr, "  %s  %jd bytes  (unreadable: %s)\n", path, (intmax_t)st.st_size,
                    err);
            continue;
        }
        struct gw_event ev;
        while (gw_reader_next(r, &ev) > 0)
            ;
        const struct gw_reader_stats *s = gw_reader_stats(r);
        fprintf(stderr, "  %s  %jd bytes  %" PRIu64 " events", path, (intmax_t)st.st_size,
                s->calls);
        if (s->lost_events || s->lost_chunks)
            fprintf(stderr, "  (lost: %" PRIu64 " events, %" PRIu64 " chunks)", s->lost_events,
                    s->lost_chunks);
        if (s->damage_reports)
            fprintf(stderr, "  (%" PRIu64 " damage reports: see gpuwatch dump)",
                    s->damage_reports);
        fputc('\n', stderr);
        gw_reader_close(r);
    }
    free_list(&after);
}

/* The analysis of the trace files that appeared in dir since `before` (the run's), on
 * stderr; with `report`, also as DIR/report.html (gpuwatch report). */
static void analyze_traces(const char *dir, const struct name_list *before, int report)
{
    struct name_list after = {0};
    list_dir(dir, &after);
    sort_list(&after);
    char **paths = calloc(after.count + 1, sizeof *paths);
    int n = 0;
    for (size_t i = 0; paths && i < after.count; i++) {
        size_t len = strlen(after.names[i]);
        if (in_list(before, after.names[i]) || len < 4 ||
            strcmp(after.names[i] + len - 4, GW_TRACE_SUFFIX))
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, after.names[i]);
        if ((paths[n] = strdup(path)) != NULL)
            n++;
    }
    struct an_options opt;
    an_options_default(&opt);
    struct an_run run;
    if (n && an_run_paths(&run, paths, n, &opt) == 0) {
        fputc('\n', stderr);
        an_report_text(stderr, &run, 0);
        fprintf(stderr, "(details: gpuwatch analyze %s)\n", dir);
        char html[PATH_MAX + 32];
        snprintf(html, sizeof html, "%s/report.html", dir);
        FILE *page = report ? fopen(html, "w") : NULL;
        if (page) {
            int written = gw_report_html(page, &run);
            if (fclose(page) == 0 && written == 0)
                fprintf(stderr, "(report: %s)\n", html);
            else
                fprintf(stderr, "gpuwatch run: writing %s failed\n", html);
        } else if (report) {
            fprintf(stderr, "gpuwatch run: %s: %s\n", html, strerror(errno));
        }
    }
    if (n)
        an_run_free(&run);
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free_list(&after);
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch run [--output DIR] [--no-analyze] [--report] -- CMD [ARGS...]\n"
            "Runs CMD with libgpuwatch.so preloaded, then lists the trace files it wrote\n"
            "and prints their analysis (gpuwatch analyze) on stderr.\n"
            "Exits with CMD's exit status (128 + signal number when it was killed).\n\n"
            "  -o, --output DIR  trace directory (default: $GPUWATCH_OUTPUT, else\n"
            "                    " DEFAULT_OUTPUT "); created when missing\n"
            "      --no-analyze  do not analyze the traces afterwards\n"
            "      --report      also write the analysis as DIR/report.html (gpuwatch report)\n"
            "  -h, --help        this text\n"
            "The shim is $GPUWATCH_LIB, else found next to this program, else loaded by name.\n");
}

int gw_cmd_run(int argc, char **argv)
{
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},
        {"no-analyze", no_argument, NULL, 'N'},
        {"report", no_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    int c, analyze = 1, report = 0;
    while ((c = getopt_long(argc, argv, "+o:h", options, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'N': analyze = 0; break;
        case 'R': report = 1; break;
        case 'h': help(stdout); return GW_EXIT_OK;
        default: return gw_usage_error("run", "unknown option");
        }
    }
    if (optind >= argc)
        return gw_usage_error("run", "expected a command to run after --");
    if (!output || !*output) {
        const char *env = getenv("GPUWATCH_OUTPUT");
        output = env && *env ? env : DEFAULT_OUTPUT;
    }
    if (make_dirs(output) != 0) {
        fprintf(stderr, "gpuwatch run: cannot create the output directory %s: %s\n", output,
                strerror(errno));
        return GW_EXIT_DAMAGE;
    }
    char dir[PATH_MAX];
    if (!realpath(output, dir)) {
        fprintf(stderr, "gpuwatch run: %s: %s\n", output, strerror(errno));
        return GW_EXIT_DAMAGE;
    }
    char shim[PATH_MAX];
    gw_find_shim(shim, sizeof shim);
    char *preload = preload_value(shim);
    if (!preload) {
        fprintf(stderr, "gpuwatch run: out of memory\n");
        return GW_EXIT_DAMAGE;
    }
    /* The host's memcpy rate and a sleeping thread's wake-up latency, timed here before
     * the program exists (never inside it: its CPUs and caches are the program's); one the
     * caller set is kept. */
    char rate[32] = "", wake[32] = "";
    const char *given = getenv(GW_HOST_COPY_ENV);
    if (!given || !*given) {
        uint64_t bps = gw_host_copy_rate(GW_HOST_COPY_TRIES);
        if (bps)
            snprintf(rate, sizeof rate, "%" PRIu64, bps);
    }
    given = getenv(GW_WAKE_ENV);
    if (!given || !*given) {
        uint64_t ns = gw_wake_latency_ns(GW_WAKE_TRIES);
        if (ns)
            snprintf(wake, sizeof wake, "%" PRIu64, ns);
    }
    struct name_list before = {0};
    list_dir(dir, &before);
    sort_list(&before);

    static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
    sigset_t block, saved;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaddset(&block, forwarded[i]);
    sigprocmask(SIG_BLOCK, &block, &saved);
    struct sigaction sa = {0}, old_sa[3];
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < 3; i++)
        sigaction(forwarded[i], &sa, &old_sa[i]);

    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gpuwatch run: fork: %s\n", strerror(errno));
        free(preload);
        free_list(&before);
        return GW_EXIT_DAMAGE;
    }
    if (pid == 0) {
        for (size_t i = 0; i < 3; i++)
            sigaction(forwarded[i], &old_sa[i], NULL);
        sigprocmask(SIG_SETMASK, &saved, NULL);
        if (setenv("GPUWATCH_OUTPUT", dir, 1) != 0 || setenv("LD_PRELOAD", preload, 1) != 0 ||
            (rate[0] && setenv(GW_HOST_COPY_ENV, rate, 1) != 0) ||
            (wake[0] && setenv(GW_WAKE_ENV, wake, 1) != 0)) {
            fprintf(stderr, "gpuwatch run: setenv: %s\n", strerror(errno));
            _exit(127);
        }
        execvp(argv[optind], argv + optind);
        int e = errno;
        fprintf(stderr, "gpuwatch run: %s: %s\n", argv[optind], strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    child_pid = pid;
    sigprocmask(SIG_SETMASK, &saved, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "gpuwatch run: waitpid: %s\n", strerror(errno));
            status = 0xFF00;  /* exit 255 */
            break;
        }
    }
    child_pid = 0;
    for (size_t i = 0; i < 3; i++)
        sigaction(forwarded[i], &old_sa[i], NULL);

    report_traces(dir, &before, shim);
    if (analyze)
        analyze_traces(dir, &before, report);
    free(preload);
    free_list(&before);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}
