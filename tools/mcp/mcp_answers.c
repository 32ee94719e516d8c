/*
 * The tools that answer from a run's JSON report (an_report_json, parsed once per
 * analysis): they select and cap, they compute nothing the analyzer has not, so their
 * figures are those of `gpuwatch analyze --json` on the same traces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/run/run_diff.h"
#include "mcp_json.h"
#include "mcp_tools.h"
#include "rules.h"

static yajl_val member(yajl_val v, const char *a, const char *b)
{
    const char *path[] = {a, b, NULL};
    return mcp_get_path(v, path);
}

static size_t len_of(yajl_val array)
{
    return array && YAJL_IS_ARRAY(array) ? array->u.array.len : 0;
}

static yajl_val at(yajl_val array, size_t i)
{
    return i < len_of(array) ? array->u.array.values[i] : NULL;
}

static void key_str(struct gw_json *j, const char *key, const char *s)
{
    gw_json_key(j, key);
    if (s)
        gw_json_str(j, s);
    else
        gw_json_null(j);
}

int mcp_tool_list_runs(struct mcp_call *c)
{
    struct mcp_runs *rs = &c->s->runs;
    mcp_runs_rescan(rs);
    struct gw_json *j = c->j;
    GW_JSON_KEY(j, "runs");
    gw_json_array(j);
    size_t shown = rs->n < MCP_LIST_RUNS_MAX ? rs->n : MCP_LIST_RUNS_MAX;
    for (size_t i = 0; i < shown; i++) {
        struct mcp_run *r = &rs->items[i];
        char err[512];
        gw_json_object(j);
        key_str(j, "id", r->id);
        GW_JSON_KEY(j, "path");
        gw_json_str(j, r->npaths == 1 ? r->paths[0] : "(the trace files given)");
        if (mcp_run_ready(rs, r, err, sizeof err) != 0) {
            key_str(j, "error", err);
            gw_json_object_end(j);
            continue;
        }
        yajl_val run = mcp_get(r->tree, "run"), procs = mcp_get(r->tree, "processes");
        mcp_put_member(j, run, "traces");
        mcp_put_member(j, run, "processes");
        GW_JSON_KEY(j, "ranks");
        gw_json_array(j);
        for (size_t k = 0; k < len_of(procs); k++) {
            yajl_val rank = mcp_get(at(procs, k), "rank");
            if (rank && YAJL_IS_INTEGER(rank))
                gw_json_i64(j, rank->u.number.i);
        }
        gw_json_array_end(j);
        mcp_put_member(j, run, "wall_ns");
        mcp_put_member(j, run, "gpu_busy_ns");
        mcp_put_member(j, run, "gpu_util");
        mcp_put_member(j, run, "gpu_timeline");
        GW_JSON_KEY(j, "findings");
        gw_json_u64(j, len_of(mcp_get(r->tree, "findings")));
        GW_JSON_KEY(j, "risks");
        gw_json_u64(j, len_of(mcp_get(r->tree, "risks")));
        yajl_val top = at(mcp_get(r->tree, "findings"), 0);
        key_str(j, "top_finding", mcp_get_str(top, "id"));
        mcp_put_member(j, run, "unreadable");
        mcp_put_member(j, run, "damage_reports");
        gw_json_object_end(j);
    }
    gw_json_array_end(j);
    char cut[128] = "";
    if (shown < rs->n)
        snprintf(cut, sizeof cut, "runs: %zu of %zu shown", shown, rs->n);
    mcp_put_cut(j, cut);
    return 0;
}

/* The user's lines and sites of a finding, in a few words each: "file:line (function)"
 * of its Python lines, then its native and allocation sites' "where". */
static void put_where(struct gw_json *j, yajl_val f)
{
    GW_JSON_KEY(j, "where");
    gw_json_array(j);
    yajl_val lines = member(f, "python_lines", "lines");
    for (size_t i = 0; i < len_of(lines); i++) {
        yajl_val l = at(lines, i);
        const char *file = mcp_get_str(l, "file"), *fn = mcp_get_str(l, "function");
        double line = 0;
        mcp_get_num(l, "line", &line);
        char text[1024];
        snprintf(text, sizeof text, "%s:%.0f%s%s%s", file ? file : "?", line,
                 fn ? " (" : "", fn ? fn : "", fn ? ")" : "");
        gw_json_str(j, text);
    }
    const char *const lists[][2] = {{"native_sites", "sites"}, {"alloc_sites", NULL}};
    for (size_t k = 0; k < 2; k++) {
        yajl_val sites = lists[k][1] ? member(f, lists[k][0], lists[k][1])
                                     : mcp_get(f, lists[k][0]);
        for (size_t i = 0; i < len_of(sites); i++) {
            const char *where = mcp_get_str(at(sites, i), "where");
            if (where && *where)
                gw_json_str(j, where);
        }
    }
    gw_json_array_end(j);
}

/* How far a finding's saving is known: the report's own word for a profiler trace's
 * findings; a host-only replay that took most of its work as nil gives an upper bound. */
static void put_confidence(struct gw_json *j, yajl_val f)
{
    const char *conf = mcp_get_str(f, "confidence"), *why = mcp_get_str(f, "confidence_why");
    double unproven = 0;
    if (!conf && mcp_get_num(mcp_get(f, "figures"), "unproven_share", &unproven) &&
        unproven >= 0.5) {
        conf = "upper_bound";
        why = "host-only trace: the replay took the work no call waited for as nil, the "
              "saving is at most this (said \"up to\")";
    }
    key_str(j, "confidence", conf ? conf : "measured");
    key_str(j, "confidence_why", why);
}

/* A finding as get_findings gives it (fields of the report's, by name). */
static void put_finding(struct gw_json *j, yajl_val f, int full)
{
    static const char *const keys[] = {
        "rank", "risk_rank", "id", "title", "evidence", "change", "risk", "strikes_s",
        "saving_ns", "saving_share", "step_share", "after", "same_wait_as", "saving_usd",
        "pid", "process_rank", "processes", "ranks", "first_s", "last_s", "figures"};
    gw_json_object(j);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        mcp_put_member(j, f, keys[i]);
    put_confidence(j, f);
    put_where(j, f);
    if (full) {
        mcp_put_member(j, f, "gpu_hours_saved");
        mcp_put_member(j, f, "python_lines");
        mcp_put_member(j, f, "native_sites");
        mcp_put_member(j, f, "alloc_sites");
    }
    gw_json_object_end(j);
}

/* The first n of list (a report array) under key; what was left out added to cut. */
static void put_list(struct gw_json *j, const char *key, yajl_val list, size_t n, int full,
                     char *cut, size_t cutlen)
{
    size_t total = len_of(list), shown = total < n ? total : n;
    gw_json_key(j, key);
    gw_json_array(j);
    for (size_t i = 0; i < shown; i++)
        put_finding(j, at(list, i), full);
    gw_json_array_end(j);
    if (shown < total)
        snprintf(cut + strlen(cut), cutlen - strlen(cut), "%s%s: %zu of %zu shown (top_n)",
                 *cut ? "; " : "", key, shown, total);
}

int mcp_tool_get_findings(struct mcp_call *c)
{
    struct mcp_run *r = mcp_call_run(c, "run");
    if (!r)
        return -1;
    size_t n = (size_t)mcp_arg_int(c, "top_n", 10);
    char cut[256] = "";
    key_str(c->j, "run", r->id);
    put_list(c->j, "risks", mcp_get(r->tree, "risks"), n, 1, cut, sizeof cut);
    put_list(c->j, "findings", mcp_get(r->tree, "findings"), n, 1, cut, sizeof cut);
    GW_JSON_KEY(c->j, "unproven");
    mcp_put_val(c->j, mcp_get(r->tree, "unproven"));
    mcp_put_cut(c->j, cut);
    return 0;
}

/* get_top_kernels: the report keeps each process's kernels with most GPU time; across
 * processes they are summed by name. */
struct kernel {
    const char *name;
    double records, gpu_ns;
};

static const char *kernel_order;

static double kernel_key(const struct kernel *k)
{
    if (!strcmp(kernel_order, "records"))
        return k->records;
    if (!strcmp(kernel_order, "avg_ns"))
        return k->records > 0 ? k->gpu_ns / k->records : 0;
    return k->gpu_ns;
}

static int cmp_kernel(const void *a, const void *b)
{
    double x = kernel_key(a), y = kernel_key(b);
    if (x != y)
        return x > y ? -1 : 1;
    return strcmp(((const struct kernel *)a)->name, ((const struct kernel *)b)->name);
}

int mcp_tool_get_top_kernels(struct mcp_call *c)
{
    struct mcp_run *r = mcp_call_run(c, "run");
    if (!r)
        return -1;
    const char *order = mcp_arg_str(c, "sort_by");
    size_t n = (size_t)mcp_arg_int(c, "top_n", 10);
    yajl_val procs = mcp_get(r->tree, "processes");
    size_t cap = 0, count = 0;
    for (size_t p = 0; p < len_of(procs); p++)
        cap += len_of(mcp_get(at(procs, p), "kernels"));
    struct kernel *ks = calloc(cap ? cap : 1, sizeof *ks);
    if (!ks)
        return mcp_call_fail(c, MCP_INTERNAL_ERROR, "out of memory");
    for (size_t p = 0; p < len_of(procs); p++) {
        yajl_val list = mcp_get(at(procs, p), "kernels");
        for (size_t i = 0; i < len_of(list); i++) {
            yajl_val k = at(list, i);
            const char *name = mcp_get_str(k, "name");
            double records = 0, ns = 0;
            mcp_get_num(k, "records", &records);
            mcp_get_num(k, "gpu_ns", &ns);
            if (!name)
                continue;
            size_t e = 0;
            while (e < count && strcmp(ks[e].name, name))
                e++;
            if (e == count)
                ks[count++] = (struct kernel){name, 0, 0};
            ks[e].records += records;
            ks[e].gpu_ns += ns;
        }
    }
    kernel_order = order ? order : "gpu_ns";
    qsort(ks, count, sizeof *ks, cmp_kernel);
    struct gw_json *j = c->j;
    key_str(j, "run", r->id);
    key_str(j, "sort_by", kernel_order);
    GW_JSON_KEY(j, "kernels");
    gw_json_array(j);
    size_t shown = count < n ? count : n;
    for (size_t i = 0; i < shown; i++) {
        gw_json_object(j);
        key_str(j, "name", ks[i].name);
        GW_JSON_KEY(j, "records");
        gw_json_double(j, ks[i].records);
        GW_JSON_KEY(j, "gpu_ns");
        gw_json_double(j, ks[i].gpu_ns);
        GW_JSON_KEY(j, "avg_ns");
        gw_json_double(j, ks[i].records > 0 ? ks[i].gpu_ns / ks[i].records : 0);
        gw_json_object_end(j);
    }
    gw_json_array_end(j);
    char cut[256];
    snprintf(cut, sizeof cut, "%s%sthe analysis keeps each process's %d kernels with most GPU "
             "time%s", shown < count ? "kernels: " : "", shown < count ? "some left out "
             "(top_n); " : "", AN_KEEP_KERNEL_TIMES,
             count ? "" : " (none: no GPU records in the trace)");
    mcp_put_cut(j, cut);
    free(ks);
    return 0;
}

/* The process's members named, as the report has them, with pid and rank first. */
static void put_process(struct gw_json *j, yajl_val p, const char *const *keys)
{
    mcp_put_member(j, p, "pid");
    mcp_put_member(j, p, "rank");
    for (; *keys; keys++)
        mcp_put_member(j, p, *keys);
}

/* The findings whose ids are listed: their calls' sites (copy sites), or in full. */
static void put_findings_of(struct gw_json *j, yajl_val tree, const char *const *ids,
                            int full)
{
    const char *const lists[] = {"risks", "findings"};
    gw_json_array(j);
    for (size_t l = 0; l < 2; l++) {
        yajl_val list = mcp_get(tree, lists[l]);
        for (size_t i = 0; i < len_of(list); i++) {
            yajl_val f = at(list, i);
            const char *id = mcp_get_str(f, "id");
            const char *const *k = ids;
            while (id && *k && strcmp(*k, id))
                k++;
            if (!id || !*k)
                continue;
            if (full) {
                put_finding(j, f, 1);
                continue;
            }
            gw_json_object(j);
            mcp_put_member(j, f, "id");
            mcp_put_member(j, f, "pid");
            put_where(j, f);
            mcp_put_member(j, f, "python_lines");
            mcp_put_member(j, f, "native_sites");
            gw_json_object_end(j);
        }
    }
    gw_json_array_end(j);
}

/* "run" and "processes": each process's pid, rank and `keys`, and what `more` adds (NULL:
 * nothing) */
static void put_processes(struct gw_json *j, const struct mcp_run *r, const char *const *keys,
                          void (*more)(struct gw_json *j, yajl_val proc))
{
    yajl_val procs = mcp_get(r->tree, "processes");
    key_str(j, "run", r->id);
    GW_JSON_KEY(j, "processes");
    gw_json_array(j);
    for (size_t p = 0; p < len_of(procs); p++) {
        gw_json_object(j);
        put_process(j, at(procs, p), keys);
        if (more)
            more(j, at(procs, p));
        gw_json_object_end(j);
    }
    gw_json_array_end(j);
}

int mcp_tool_get_copies(struct mcp_call *c)
{
    struct mcp_run *r = mcp_call_run(c, "run");
    if (!r)
        return -1;
    static const char *const keys[] = {"transfers", "best_bandwidth_bytes_per_s", NULL};
    static const char *const copy_findings[] = {"pageable_h2d", "small_copies", NULL};
    struct gw_json *j = c->j;
    put_processes(j, r, keys, NULL);
    GW_JSON_KEY(j, "sites");
    put_findings_of(j, r->tree, copy_findings, 0);
    mcp_put_cut(j, NULL);
    return 0;
}

/* headroom: what neither this process at its peak nor the others held */
static void put_headroom(struct gw_json *j, yajl_val proc)
{
    yajl_val mem = mcp_get(proc, "memory");
    double cap = 0, peak = 0, others = 0;
    GW_JSON_KEY(j, "headroom_bytes");
    if (mcp_get_num(mem, "capacity_bytes", &cap) && cap > 0 &&
        mcp_get_num(mem, "peak_bytes", &peak)) {
        mcp_get_num(mem, "others_at_start_bytes", &others);
        gw_json_double(j, cap - peak - others);
    } else {
        gw_json_null(j);
    }
}

int mcp_tool_get_memory(struct mcp_call *c)
{
    struct mcp_run *r = mcp_call_run(c, "run");
    if (!r)
        return -1;
    static const char *const keys[] = {"device", "memory", "memory_timeline", NULL};
    static const char *const memory_findings[] = {"leak", "oom_retry", "fragmentation",
                                                  "memory_headroom", "shared_gpu", NULL};
    struct gw_json *j = c->j;
    put_processes(j, r, keys, put_headroom);
    GW_JSON_KEY(j, "findings");
    put_findings_of(j, r->tree, memory_findings, 1);
    mcp_put_cut(j, "memory_over_time is left out (the JSON report resource has it)");
    return 0;
}

int mcp_tool_compare_runs(struct mcp_call *c)
{
    struct mcp_run *base = mcp_call_run(c, "base");
    if (!base)
        return -1;
    struct mcp_run *head = mcp_call_run(c, "head");
    if (!head)
        return -1;
    struct an_diff *d = malloc(sizeof *d);
    struct mcp_text t;
    if (!d || mcp_text_open(&t) != 0) {
        free(d);
        return mcp_call_fail(c, MCP_INTERNAL_ERROR, "out of memory");
    }
    an_diff_runs(&base->run, &head->run, d);
    an_diff_json(t.f, d, base->id, head->id);
    free(d);
    char *text = mcp_text_close(&t, 0), perr[256] = "";
    yajl_val tree = text ? yajl_tree_parse(text, perr, sizeof perr) : NULL;
    free(text);
    if (!tree)
        return mcp_call_fail(c, MCP_INTERNAL_ERROR, "the comparison could not be made: %s",
                             perr);
    struct gw_json *j = c->j;
    key_str(j, "base", base->id);
    key_str(j, "head", head->id);
    GW_JSON_KEY(j, "diff");
    mcp_put_val(j, tree);
    mcp_put_cut(j, NULL);
    yajl_tree_free(tree);
    return 0;
}

/* The rule's one-line summary (rules.def), or NULL for a run-level one. */
static const char *rule_summary(const char *id, int *known)
{
    *known = 0;
    for (size_t i = 0; i < an_nrules; i++)
        if (!strcmp(an_rules[i].id, id)) {
            *known = 1;
            return an_rules[i].summary;
        }
    for (size_t i = 0; i < an_nrun_rules; i++)
        if (!strcmp(an_run_rule_ids[i], id))
            *known = 1;
    return NULL;
}

/* The run's finding (or risk) of that id, the first in rank order. */
static yajl_val finding_in(yajl_val tree, const char *id)
{
    const char *const lists[] = {"risks", "findings"};
    for (size_t l = 0; l < 2; l++) {
        yajl_val list = mcp_get(tree, lists[l]);
        for (size_t i = 0; i < len_of(list); i++) {
            const char *fid = mcp_get_str(at(list, i), "id");
            if (fid && !strcmp(fid, id))
                return at(list, i);
        }
    }
    return NULL;
}

int mcp_tool_explain_finding(struct mcp_call *c)
{
    const char *id = mcp_arg_str(c, "id");
    int known;
    const char *summary = rule_summary(id, &known);
    if (!known) {
        char ids[512] = "";
        for (size_t i = 0; i < an_nrules; i++)
            snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%s", i ? ", " : "",
                     an_rules[i].id);
        return mcp_call_fail(c, MCP_INVALID_PARAMS, "unknown finding id '%.64s' (the ids: "
                             "%s, straggler)", id, ids);
    }
    struct mcp_runs *rs = &c->s->runs;
    struct mcp_run *only = NULL;
    if (mcp_arg_given(c, "run") && !(only = mcp_call_run(c, "run")))
        return -1;
    struct gw_json *j = c->j;
    key_str(j, "id", id);
    key_str(j, "rule", summary);
    GW_JSON_KEY(j, "seen");
    gw_json_array(j);
    size_t found = 0, shown = 0;
    for (size_t i = 0; i < rs->n; i++) {
        struct mcp_run *r = only ? only : &rs->items[i];
        char err[512];
        if (only && i)
            break;
        if (mcp_run_ready(rs, r, err, sizeof err) != 0)
            continue;
        yajl_val f = finding_in(r->tree, id);
        if (!f)
            continue;
        if (found++ >= 4)
            continue;
        shown++;
        gw_json_object(j);
        key_str(j, "run", r->id);
        GW_JSON_KEY(j, "finding");
        put_finding(j, f, 1);
        gw_json_object_end(j);
    }
    gw_json_array_end(j);
    char cut[128] = "";
    if (shown < found)
        snprintf(cut, sizeof cut, "seen: %zu of %zu runs shown", shown, found);
    mcp_put_cut(j, cut);
    if (!found && only)
        return mcp_call_fail(c, MCP_INVALID_PARAMS, "run '%s' has no finding '%s' "
                             "(get_findings lists its findings)", only->id, id);
    return 0;
}
