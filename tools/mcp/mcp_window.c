/*
 * The tools over a stretch of one run's time: idle by cause (from the report over the
 * whole run, from the analysis's time slices over a window) and the timeline (the
 * traces' calls and GPU records in the window, read again from the files). Times are ms
 * since the process's first traced event, as the report's _s fields are seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_text.h"
#include "mcp_json.h"
#include "mcp_tools.h"
#include "text_out.h"

/* The i-th process of the report is the i-th active trace (report_json.c's order). */
static const struct an_trace *process_trace(const struct an_run *run, size_t index)
{
    for (size_t i = 0, k = 0; i < run->ntraces; i++)
        if (run->traces[i].active && run->traces[i].model && k++ == index)
            return &run->traces[i];
    return NULL;
}

/* Whether process index of the run is asked for (the rank argument, when given); an error
 * when no process has that rank. */
static int rank_wanted(const struct an_trace *t, int64_t rank)
{
    return rank < 0 || t->hdr.rank == rank;
}

static int check_rank(struct mcp_call *c, const struct mcp_run *r, int64_t rank)
{
    if (rank < 0)
        return 0;
    for (size_t i = 0; process_trace(&r->run, i); i++)
        if (rank_wanted(process_trace(&r->run, i), rank))
            return 0;
    return mcp_call_fail(c, MCP_INVALID_PARAMS, "run '%s' has no process of rank %lld "
                         "(list_runs gives its ranks)", r->id, (long long)rank);
}

/* Idle by cause inside [t0, t1) ns from the process's start, prorated from the model's
 * time slices. */
static void window_idle(struct gw_json *j, const struct an_model *m, double t0, double t1)
{
    double busy = 0, idle[AN_CAUSE_COUNT] = {0}, width = 0;
    for (size_t s = 0; s < m->nover_time; s++) {
        const struct an_time_slice *sl = &m->over_time[s];
        double a = (double)(sl->start - m->first_ts), b = (double)(sl->end - m->first_ts);
        width = b - a;
        double lo = a > t0 ? a : t0, hi = b < t1 ? b : t1;
        if (hi <= lo || b <= a)
            continue;
        double share = (hi - lo) / (b - a);
        busy += (double)sl->busy_ns * share;
        for (int c = 0; c < AN_CAUSE_COUNT; c++)
            idle[c] += (double)sl->idle_ns[c] * share;
    }
    GW_JSON_KEY(j, "window");
    gw_json_object(j);
    GW_JSON_KEY(j, "resolution_ms");
    gw_json_double(j, width / 1e6);
    GW_JSON_KEY(j, "gpu_busy_ns");
    gw_json_double(j, busy);
    GW_JSON_KEY(j, "idle_ns");
    gw_json_object(j);
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        gw_json_key(j, an_cause_name(c));
        gw_json_double(j, idle[c]);
    }
    gw_json_object_end(j);
    gw_json_object_end(j);
}

int mcp_tool_get_idle_breakdown(struct mcp_call *c)
{
    struct mcp_run *r = mcp_call_run(c, "run");
    if (!r)
        return -1;
    int64_t rank = mcp_arg_int(c, "rank", -1);
    int windowed = mcp_arg_given(c, "t0") || mcp_arg_given(c, "t1");
    double t0 = mcp_arg_num(c, "t0", 0) * 1e6, t1 = mcp_arg_num(c, "t1", 1e9) * 1e6;
    if (windowed && !(t1 > t0))
        return mcp_call_fail(c, MCP_INVALID_PARAMS, "t1 (%g ms) must be after t0 (%g ms)",
                             t1 / 1e6, t0 / 1e6);
    if (check_rank(c, r, rank) != 0)
        return -1;
    struct gw_json *j = c->j;
    yajl_val procs = mcp_get(r->tree, "processes");
    GW_JSON_KEY(j, "run");
    gw_json_str(j, r->id);
    GW_JSON_KEY(j, "processes");
    gw_json_array(j);
    size_t kept_intervals = 0;
    for (size_t i = 0; process_trace(&r->run, i); i++) {
        const struct an_trace *t = process_trace(&r->run, i);
        yajl_val p = procs && YAJL_IS_ARRAY(procs) && i < procs->u.array.len
                         ? procs->u.array.values[i] : NULL;
        if (!rank_wanted(t, rank) || !p)
            continue;
        gw_json_object(j);
        static const char *const keys[] = {"pid", "rank", "gpu_timeline", "wall_ns",
                                           "gpu_busy_ns", "gpu_util", "steady_util", "idle"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            mcp_put_member(j, p, keys[k]);
        if (windowed)
            window_idle(j, t->model, t0, t1);
        /* the longest idle intervals (the report keeps 16), those in the window */
        yajl_val largest = mcp_get(p, "largest_idle");
        GW_JSON_KEY(j, "largest_idle");
        gw_json_array(j);
        for (size_t k = 0; largest && YAJL_IS_ARRAY(largest) && k < largest->u.array.len;
             k++) {
            yajl_val iv = largest->u.array.values[k];
            double s = 0, e = 0;
            mcp_get_num(iv, "start_s", &s);
            mcp_get_num(iv, "end_s", &e);
            if (windowed && (e * 1e9 <= t0 || s * 1e9 >= t1))
                continue;
            mcp_put_val(j, iv);
            kept_intervals++;
        }
        gw_json_array_end(j);
        gw_json_object_end(j);
    }
    gw_json_array_end(j);
    mcp_put_cut(j, "largest_idle: the analysis keeps each process's 16 longest intervals");
    return 0;
}

/* get_timeline: the events of the window, earliest first, at most limit. */
struct hit {
    uint64_t ts;
    size_t trace, ordinal;
};

static int cmp_hit(const void *a, const void *b)
{
    const struct hit *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->trace != y->trace)
        return x->trace < y->trace ? -1 : 1;
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

static int timed(enum gw_event_kind kind)
{
    return kind == GW_EV_CALL || kind == GW_EV_GPU_KERNEL || kind == GW_EV_GPU_MEMCPY ||
           kind == GW_EV_GPU_MEMSET || kind == GW_EV_RANGE_PUSH || kind == GW_EV_RANGE_POP ||
           kind == GW_EV_MARK || kind == GW_EV_RANGE_START || kind == GW_EV_RANGE_END;
}

/* One trace's events in [lo, hi): their times and places appended to *hits. */
static int scan(struct gw_reader *rd, size_t trace, uint64_t lo, uint64_t hi,
                struct hit **hits, size_t *n, size_t *cap)
{
    struct gw_event ev;
    for (size_t ordinal = 0; gw_reader_next(rd, &ev) > 0; ordinal++) {
        if (!timed(ev.kind) || ev.ts_ns < lo || ev.ts_ns >= hi)
            continue;
        if (*n == *cap) {
            size_t grown_cap = *cap ? *cap * 2 : 1024;
            struct hit *grown = realloc(*hits, grown_cap * sizeof *grown);
            if (!grown)
                return -1;
            *hits = grown;
            *cap = grown_cap;
        }
        (*hits)[(*n)++] = (struct hit){ev.ts_ns, trace, ordinal};
    }
    return 0;
}

/* One event as a JSON object's text (malloc'd), its time from the process's start. */
static char *event_json(struct gw_reader *rd, const struct an_trace *t,
                        const struct gw_event *ev)
{
    struct mcp_text line, obj;
    char *text = NULL, *out = NULL;
    if (mcp_text_open(&line) == 0) {
        gw_event_text(line.f, rd, t->model->first_ts, ev);
        text = mcp_text_close(&line, 0);
    }
    size_t len = text ? strlen(text) : 0;
    while (len && text[len - 1] == '\n')
        len--;
    if (mcp_text_open(&obj) == 0) {
        fprintf(obj.f, "{\"t_ms\":%.6f,\"pid\":%u,\"kind\":\"%s\",\"dur_ns\":%llu,\"text\":",
                (double)(ev->ts_ns - t->model->first_ts) / 1e6, (unsigned)t->hdr.pid,
                gw_event_kind_name(ev->kind), (unsigned long long)ev->dur_ns);
        gw_put_json_string(obj.f, text ? text : "", len);
        fputc('}', obj.f);
        out = mcp_text_close(&obj, 0);
    }
    free(text);
    return out;
}

struct pick {
    size_t ordinal, index;       /* the event's place in its file; its place in the answer */
};

static int cmp_pick(const void *a, const void *b)
{
    const struct pick *x = a, *y = b;
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

/* Reads trace i again and renders its picked events (picked[k].trace == i) into
 * texts[k]. */
static void render_trace(const struct an_trace *t, size_t i, const struct hit *picked,
                         size_t npicked, char **texts)
{
    struct pick *mine = malloc(npicked * sizeof *mine);
    size_t nmine = 0;
    if (!mine)
        return;
    for (size_t k = 0; k < npicked; k++)
        if (picked[k].trace == i)
            mine[nmine++] = (struct pick){picked[k].ordinal, k};
    qsort(mine, nmine, sizeof *mine, cmp_pick);
    struct gw_reader *rd;
    char err[512];
    if (!nmine || gw_reader_open(t->path, &rd, err, sizeof err) != 0) {
        free(mine);
        return;
    }
    gw_reader_load_defs(rd);
    struct gw_event ev;
    size_t next = 0;
    for (size_t ordinal = 0; next < nmine && gw_reader_next(rd, &ev) > 0; ordinal++)
        if (mine[next].ordinal == ordinal)
            texts[mine[next++].index] = event_json(rd, t, &ev);
    gw_reader_close(rd);
    free(mine);
}

int mcp_tool_get_timeline(struct mcp_call *c)
{
    struct mcp_run *r = mcp_call_run(c, "run");
    if (!r)
        return -1;
    double t0 = mcp_arg_num(c, "t0_ms", 0), t1 = mcp_arg_num(c, "t1_ms", 0);
    size_t limit = (size_t)mcp_arg_int(c, "limit", 100);
    int64_t rank = mcp_arg_int(c, "rank", -1);
    if (!(t1 > t0))
        return mcp_call_fail(c, MCP_INVALID_PARAMS, "t1_ms (%g) must be after t0_ms (%g)",
                             t1, t0);
    if (check_rank(c, r, rank) != 0)
        return -1;
    struct hit *hits = NULL;
    size_t n = 0, cap = 0;
    size_t ntr = r->run.ntraces;
    for (size_t i = 0; i < ntr; i++) {
        const struct an_trace *t = &r->run.traces[i];
        if (!t->active || !t->model || !rank_wanted(t, rank))
            continue;
        struct gw_reader *rd;
        char err[512];
        if (gw_reader_open(t->path, &rd, err, sizeof err) != 0) {
            free(hits);
            return mcp_call_fail(c, MCP_INVALID_PARAMS, "run '%s': %s", r->id, err);
        }
        uint64_t base = t->model->first_ts;
        int rc = scan(rd, i, base + (uint64_t)(t0 * 1e6), base + (uint64_t)(t1 * 1e6), &hits,
                      &n, &cap);
        gw_reader_close(rd);
        if (rc != 0) {
            free(hits);
            return mcp_call_fail(c, MCP_INTERNAL_ERROR, "out of memory");
        }
    }
    if (n)
        qsort(hits, n, sizeof *hits, cmp_hit);
    size_t shown = n < limit ? n : limit;
    /* the picked ones back in file order, trace by trace, to be read again */
    struct hit *picked = malloc((shown ? shown : 1) * sizeof *picked);
    if (!picked) {
        free(hits);
        return mcp_call_fail(c, MCP_INTERNAL_ERROR, "out of memory");
    }
    memcpy(picked, hits, shown * sizeof *picked);
    free(hits);
    char **texts = calloc(shown ? shown : 1, sizeof *texts);
    if (!texts) {
        free(picked);
        return mcp_call_fail(c, MCP_INTERNAL_ERROR, "out of memory");
    }
    for (size_t i = 0; i < ntr && shown; i++) {
        const struct an_trace *t = &r->run.traces[i];
        if (t->active && t->model && rank_wanted(t, rank))
            render_trace(t, i, picked, shown, texts);
    }
    struct gw_json *j = c->j;
    GW_JSON_KEY(j, "run");
    gw_json_str(j, r->id);
    GW_JSON_KEY(j, "t0_ms");
    gw_json_double(j, t0);
    GW_JSON_KEY(j, "t1_ms");
    gw_json_double(j, t1);
    GW_JSON_KEY(j, "events_in_window");
    gw_json_u64(j, n);
    GW_JSON_KEY(j, "events");
    gw_json_array(j);
    for (size_t k = 0; k < shown; k++) {
        if (texts[k])
            mcp_put_raw(j, texts[k], strlen(texts[k]));
        free(texts[k]);
    }
    gw_json_array_end(j);
    free(texts);
    free(picked);
    char cut[160] = "";
    if (shown < n)
        snprintf(cut, sizeof cut, "events: the first %zu of %zu in the window (limit)", shown,
                 n);
    mcp_put_cut(j, cut);
    return 0;
}
