/* The run in a directory as it is now (live_run.h). */
#include "live_run.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 when path is a trace file, or a directory holding one: analyzing one without says so
 * on stderr, which should not happen at every refresh before the run has started. */
static int has_traces(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return 1;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        found = n > 4 && !strcmp(e->d_name + n - 4, ".gwt");
    }
    closedir(d);
    return found;
}

static uint64_t mix(uint64_t h, const void *p, size_t n)  /* FNV-1a */
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

static uint64_t mix_stat(uint64_t h, const struct stat *st)
{
    h = mix(h, &st->st_size, sizeof st->st_size);
    h = mix(h, &st->st_mtim.tv_sec, sizeof st->st_mtim.tv_sec);
    return mix(h, &st->st_mtim.tv_nsec, sizeof st->st_mtim.tv_nsec);
}

uint64_t gw_live_fingerprint(const char *dir)
{
    uint64_t h = 1469598103934665603ull;
    struct stat st;
    if (stat(dir, &st) != 0)
        return h;
    if (!S_ISDIR(st.st_mode))
        return mix_stat(h, &st);
    DIR *d = opendir(dir);
    if (!d)
        return h;
    char path[4096];
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        int trace = n > 4 && !strcmp(e->d_name + n - 4, ".gwt");
        int rings = n > 10 && !strcmp(e->d_name + n - 10, ".gwt.rings");
        if (!trace && !rings)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        /* (readdir's order is not sorted: each entry mixed alone, summed) */
        h += mix_stat(mix(1469598103934665603ull, e->d_name, n), &st);
    }
    closedir(d);
    return h;
}

int gw_live_analyze(const char *dir, const struct an_options *opt, struct an_run *run)
{
    if (!has_traces(dir))
        return 0;
    char *paths[] = {(char *)dir};
    if (an_run_paths(run, paths, 1, opt) != 0) {
        an_run_free(run);
        return 0;
    }
    return 1;
}

/* 1 while process pid of this host runs: it is there and not a zombie (its exit handlers,
 * which finish its trace, have run once it is one). */
static int alive_here(uint32_t pid)
{
    char path[64], stat_line[512];
    snprintf(path, sizeof path, "/proc/%" PRIu32 "/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return kill((pid_t)pid, 0) == 0 || errno == EPERM;  /* (no /proc) */
    size_t n = fread(stat_line, 1, sizeof stat_line - 1, f);
    fclose(f);
    stat_line[n] = 0;
    const char *paren = strrchr(stat_line, ')');  /* "PID (COMM) STATE ..." */
    return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

int gw_live_running(const struct an_trace *t)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0 &&
        !strncmp(host, t->hdr.hostname, sizeof t->hdr.hostname))
        return alive_here(t->hdr.pid);
    /* another host's process: its rings file, which a clean exit removes, is all we know */
    char rings[4096];
    struct stat st;
    snprintf(rings, sizeof rings, "%s.rings", t->path);
    return stat(rings, &st) == 0;
}
