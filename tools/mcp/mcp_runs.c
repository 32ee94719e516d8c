/* The runs under the server's roots, found by directory, analyzed once and kept. */
#include "mcp_runs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export/html_report.h"
#include "mcp_json.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* A trace by its name, as the analyzer takes them from a directory. */
static int is_trace_name(const char *name)
{
    return name[0] != '.' && (ends_with(name, GW_TRACE_SUFFIX) || ends_with(name, ".json") ||
                              ends_with(name, ".json.gz"));
}

/* The last component of path ("runs/" -> "runs"), into out. */
static void base_name(const char *path, char *out, size_t size)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t start = n;
    while (start > 0 && path[start - 1] != '/')
        start--;
    snprintf(out, size, "%.*s", (int)(n - start), path + start);
}

/* FNV-1a over what says a file changed: its name, size and modification time. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t stamp_file(uint64_t h, const char *path)
{
    struct stat st;
    h = mix(h, path, strlen(path) + 1);
    if (stat(path, &st) != 0)
        return mix(h, "-", 1);
    int64_t v[3] = {(int64_t)st.st_size, (int64_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
    return mix(h, v, sizeof v);
}

/* The run's files as they are now; a directory: its traces (1 when it holds any). */
static uint64_t stamp_path(uint64_t h, const char *path, int *traces)
{
    DIR *d = opendir(path);
    if (!d) {
        if (traces)
            *traces = 0;
        return stamp_file(h, path);
    }
    struct dirent *e;
    uint64_t sum = 0;  /* (readdir's order is no order: the files' stamps are added) */
    int found = 0;
    while ((e = readdir(d)) != NULL) {
        if (!is_trace_name(e->d_name))
            continue;
        char file[PATH_MAX];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        sum += stamp_file(1469598103934665603ull, file);
        found = 1;
    }
    closedir(d);
    if (traces)
        *traces = found;
    return mix(h, &sum, sizeof sum);
}

static uint64_t run_stamp(const struct mcp_run *r)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < r->npaths; i++)
        h = stamp_path(h, r->paths[i], NULL);
    return h;
}

static struct mcp_run *find_id(struct mcp_runs *rs, const char *id)
{
    for (size_t i = 0; i < rs->n; i++)
        if (!strcmp(rs->items[i].id, id))
            return &rs->items[i];
    return NULL;
}

static int add_run(struct mcp_runs *rs, const char *id, char **paths, int npaths)
{
    if (find_id(rs, id) || rs->n == MCP_MAX_RUNS)
        return 0;
    struct mcp_run *grown = realloc(rs->items, (rs->n + 1) * sizeof *grown);
    if (!grown)
        return -1;
    rs->items = grown;
    struct mcp_run *r = &rs->items[rs->n];
    memset(r, 0, sizeof *r);
    r->id = strdup(id);
    r->paths = calloc((size_t)npaths, sizeof *r->paths);
    if (!r->id || !r->paths) {
        free(r->id);
        free(r->paths);
        return -1;
    }
    for (int i = 0; i < npaths; i++)
        r->paths[r->npaths++] = strdup(paths[i]);
    rs->n++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir (rel below the root named root_id) and the directories under it, sorted by name: a
 * directory that holds traces is a run. */
static void walk(struct mcp_runs *rs, const char *dir, const char *rel, const char *root_id,
                 int depth)
{
    int traces = 0;
    stamp_path(0, dir, &traces);
    if (traces) {
        char id[PATH_MAX];
        if (!*rel)
            snprintf(id, sizeof id, "%s", root_id);
        else if (rs->nroots > 1)
            snprintf(id, sizeof id, "%s/%s", root_id, rel);
        else
            snprintf(id, sizeof id, "%s", rel);
        char *paths[1] = {(char *)dir};
        add_run(rs, id, paths, 1);
    }
    if (depth >= MCP_RUN_DEPTH)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 4096) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (!grown)
            break;
        names = grown;
        if ((names[n] = strdup(e->d_name)) != NULL)
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX], sub[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", names[i]);
        walk(rs, path, sub, root_id, depth + 1);
        free(names[i]);
    }
    free(names);
}

void mcp_runs_rescan(struct mcp_runs *rs)
{
    char **files = NULL;
    int nfiles = 0;
    for (int i = 0; i < rs->nroots; i++) {
        struct stat st;
        if (stat(rs->roots[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            char root_id[NAME_MAX + 1];
            base_name(rs->roots[i], root_id, sizeof root_id);
            walk(rs, rs->roots[i], "", root_id, 0);
        } else {
            char **grown = realloc(files, (size_t)(nfiles + 1) * sizeof *files);
            if (!grown)
                break;
            files = grown;
            files[nfiles++] = rs->roots[i];
        }
    }
    /* trace files named on the command line: one run together, as analyze takes them */
    if (nfiles == 1) {
        char id[NAME_MAX + 1];
        base_name(files[0], id, sizeof id);
        add_run(rs, id, files, 1);
    } else if (nfiles > 1) {
        add_run(rs, "traces", files, nfiles);
    }
    free(files);
}

int mcp_runs_init(struct mcp_runs *rs, char **roots, int nroots, char *err, size_t errlen)
{
    memset(rs, 0, sizeof *rs);
    an_options_default(&rs->opt);
    for (int i = 0; i < nroots; i++) {
        struct stat st;
        if (stat(roots[i], &st) != 0) {
            snprintf(err, errlen, "%s: %s", roots[i], strerror(errno));
            return -1;
        }
    }
    rs->roots = roots;
    rs->nroots = nroots;
    mcp_runs_rescan(rs);
    return 0;
}

static void drop_analysis(struct mcp_run *r)
{
    if (r->analyzed)
        an_run_free(&r->run);
    yajl_tree_free(r->tree);
    free(r->report);
    free(r->html);
    r->tree = NULL;
    r->report = r->html = NULL;
    r->report_len = r->html_len = 0;
    r->analyzed = 0;
}

void mcp_runs_free(struct mcp_runs *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        struct mcp_run *r = &rs->items[i];
        drop_analysis(r);
        for (int k = 0; k < r->npaths; k++)
            free(r->paths[k]);
        free(r->paths);
        free(r->id);
    }
    free(rs->items);
    memset(rs, 0, sizeof *rs);
}

struct mcp_run *mcp_runs_find(struct mcp_runs *rs, const char *id, char *err, size_t errlen)
{
    struct mcp_run *r = find_id(rs, id);
    if (!r) {
        mcp_runs_rescan(rs);  /* (one written since) */
        r = find_id(rs, id);
    }
    if (r)
        return r;
    int n = snprintf(err, errlen, "no run '%s'; the runs are:", id);
    for (size_t i = 0; i < rs->n && n > 0 && (size_t)n < errlen; i++)
        n += snprintf(err + n, errlen - (size_t)n, " %s", rs->items[i].id);
    if (!rs->n)
        snprintf(err, errlen, "no run '%s': no traces were found under the server's paths",
                 id);
    return NULL;
}

/* Why nothing of the run could be read, from its traces' errors. */
static void unreadable(const struct mcp_run *r, char *err, size_t errlen)
{
    const struct an_run *run = &r->run;
    for (size_t i = 0; i < run->ntraces; i++)
        if (!run->traces[i].readable) {
            snprintf(err, errlen, "run '%s': no trace could be read: %s", r->id,
                     run->traces[i].error);
            return;
        }
    snprintf(err, errlen, "run '%s': no trace could be read", r->id);
}

int mcp_run_ready(struct mcp_runs *rs, struct mcp_run *r, char *err, size_t errlen)
{
    uint64_t stamp = run_stamp(r);
    if (r->analyzed && r->stamp == stamp)
        return 0;
    if (r->analyzed)
        fprintf(stderr, "gpuwatch mcp: run '%s' changed: analyzing it again\n", r->id);
    drop_analysis(r);
    if (an_run_open(&r->run, r->paths, r->npaths, &rs->opt) != 0) {
        an_run_free(&r->run);
        snprintf(err, errlen, "run '%s': no trace to analyze in %s", r->id, r->paths[0]);
        return -1;
    }
    size_t readable = 0;
    for (size_t i = 0; i < r->run.ntraces; i++)
        readable += r->run.traces[i].readable != 0;
    if (!readable) {
        unreadable(r, err, errlen);
        an_run_free(&r->run);
        return -1;
    }
    an_run_analyze(&r->run);
    r->analyzed = 1;
    r->stamp = stamp;
    struct mcp_text t;
    if (mcp_text_open(&t) == 0) {
        an_report_json(t.f, &r->run);
        r->report = mcp_text_close(&t, 0);
        r->report_len = t.len;
    }
    char perr[256] = "";
    if (r->report)
        r->tree = yajl_tree_parse(r->report, perr, sizeof perr);
    if (!r->tree) {
        snprintf(err, errlen, "run '%s': its JSON report could not be made%s%s", r->id,
                 *perr ? ": " : "", perr);
        drop_analysis(r);
        return -1;
    }
    return 0;
}

const char *mcp_run_html(struct mcp_runs *rs, struct mcp_run *r, size_t *len, char *err,
                         size_t errlen)
{
    if (mcp_run_ready(rs, r, err, errlen) != 0)
        return NULL;
    if (!r->html) {
        struct mcp_text t;
        if (mcp_text_open(&t) == 0) {
            int failed = gw_report_html(t.f, &r->run) != 0;
            r->html = mcp_text_close(&t, failed);
            r->html_len = t.len;
        }
        if (!r->html) {
            snprintf(err, errlen, "run '%s': its HTML report could not be made", r->id);
            return NULL;
        }
    }
    *len = r->html_len;
    return r->html;
}
