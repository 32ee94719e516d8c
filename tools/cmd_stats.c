/*
 * gpuwatch stats [--json] [--top N] TRACE...: per exact entry point name called, the count,
 * errors and host time; totals; top kernels by launch count; the device of each trace.
 *
 * --json prints one object with these keys (stable; new keys are only ever added):
 *
 *   "format":      "gpuwatch-stats"
 *   "version":     1                     version of this JSON layout
 *   "traces":      [ one object per TRACE argument, in argument order:
 *       "path", "bytes" (file size), "readable" (false when the header was rejected; then
 *       only "error" follows), "format_version", "pid", "ppid", "host", "cmdline",
 *       "rank", "local_rank", "world_size" (null when unset),
 *       "device": {"ordinal", "name", "total_mem", "free_at_start"},
 *       "cupti": status name, "cupti_reason",
 *       "events" (calls), "errors" (calls that returned an error),
 *       "lost_events" (sum of LOST record counts), "lost_chunks" (per-thread chunk
 *       sequence gaps), "damage_reports", "damaged_bytes",
 *       "wall_span_ns" (first event to the end of the last, 0 without events) ]
 *   "totals":      {"traces", "events", "errors", "lost_events", "lost_chunks",
 *                   "damage_reports", "file_bytes", "bytes_per_event" (file bytes / events,
 *                   null without events), "wall_span_ns" (over all traces, aligned on
 *                   CLOCK_REALTIME with each header's realtime_minus_trace_ns)}
 *   "apis":        {exact entry point name: {"count", "errors", "total_ns", "mean_ns"}}
 *                  ordered by count (descending), then name; one entry per line
 *   "top_kernels": [{"name", "launches", "total_ns"}] by launches (descending), then name;
 *                  at most --top entries (default 10)
 *
 * Entry points this build does not know are named "api_<id>"; kernels whose shape or
 * name is missing from the trace are named "shape_<id>". Exit status: 0, or 1 when a
 * trace could not be read or was damaged, 2 on usage errors.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gw_map.h"
#include "text_out.h"
#include "trace_reader.h"

struct api_stat {
    uint32_t api_id;
    char name[48];   /* exact names are at most 31 characters; "api_<id>" otherwise */
    uint64_t count, errors, total_ns;
};

struct kernel_stat {
    char *name;
    uint64_t launches, total_ns;
};

struct trace_stat {
    const char *path;
    uint64_t bytes;
    int readable;
    char error[512];
    struct gw_file_header hdr;
    struct gw_reader_stats rs;
};

struct stats {
    struct api_stat *apis;
    size_t napis, apis_cap;
    struct gw_map api_ids;        /* api id -> index */
    uint32_t known[GW_API_ID_LIMIT]; /* index + 1 for ids below the limit, 0 unseen */
    struct kernel_stat *kernels;
    size_t nkernels, kernels_cap;
    struct gw_map kernel_ids;     /* name hash (+ probe) -> index */
    struct trace_stat *traces;
    size_t ntraces;
};

static void *grow(void *items, size_t *cap, size_t count, size_t size)
{
    if (count < *cap)
        return items;
    size_t ncap = *cap ? *cap * 2 : 32;
    void *grown = realloc(items, ncap * size);
    if (!grown) {
        fprintf(stderr, "gpuwatch stats: out of memory\n");
        exit(GW_EXIT_DAMAGE);
    }
    *cap = ncap;
    return grown;
}

static struct api_stat *api_stat(struct stats *st, uint32_t api_id)
{
    uint64_t *slot = gw_map_get(&st->api_ids, api_id);
    if (slot)
        return &st->apis[*slot];
    st->apis = grow(st->apis, &st->apis_cap, st->napis, sizeof *st->apis);
    struct api_stat *a = &st->apis[st->napis];
    memset(a, 0, sizeof *a);
    a->api_id = api_id;
    const char *name = gw_api_name(api_id);
    if (name)
        snprintf(a->name, sizeof a->name, "%s", name);
    else
        snprintf(a->name, sizeof a->name, "api_%" PRIu32, api_id);
    gw_map_put(&st->api_ids, api_id, st->napis);
    st->napis++;
    return a;
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static struct kernel_stat *kernel_stat(struct stats *st, const char *name)
{
    uint64_t key = hash_name(name);
    for (;; key++) {
        uint64_t *slot = gw_map_get(&st->kernel_ids, key);
        if (!slot)
            break;
        if (!strcmp(st->kernels[*slot].name, name))
            return &st->kernels[*slot];
    }
    st->kernels = grow(st->kernels, &st->kernels_cap, st->nkernels, sizeof *st->kernels);
    struct kernel_stat *k = &st->kernels[st->nkernels];
    k->name = strdup(name);
    k->launches = k->total_ns = 0;
    if (!k->name) {
        fprintf(stderr, "gpuwatch stats: out of memory\n");
        exit(GW_EXIT_DAMAGE);
    }
    gw_map_put(&st->kernel_ids, key, st->nkernels);
    st->nkernels++;
    return k;
}

static int is_kernel_launch(const struct gw_event *ev)
{
    return ev->family == GW_FAM_LAUNCH && ev->u.launch.shape_id != 0;
}

static void on_damage(const struct gw_damage *damage, void *user)
{
    uint64_t *count = user;
    if (++*count <= 20)
        fprintf(stderr, "gpuwatch stats: %s\n", damage->message);
}

static void read_trace(struct stats *st, struct trace_stat *t)
{
    struct gw_reader *r;
    if (gw_reader_open(t->path, &r, t->error, sizeof t->error) != 0) {
        fprintf(stderr, "gpuwatch stats: %s\n", t->error);
        return;
    }
    t->readable = 1;
    t->bytes = gw_reader_file_size(r);
    t->hdr = *gw_reader_header(r);
    gw_reader_load_defs(r);
    uint64_t shown = 0;
    gw_reader_on_damage(r, on_damage, &shown);
    /* per event: known api ids index st->known directly; a launch's shape id maps to its
     * kernel's index once per trace */
    struct gw_map shape_kernel = {0};
    struct gw_event ev;
    while (gw_reader_next(r, &ev) > 0) {
        if (ev.kind != GW_EV_CALL)
            continue;
        struct api_stat *a;
        if (ev.api_id < GW_API_ID_LIMIT) {
            if (st->known[ev.api_id] == 0)
                st->known[ev.api_id] = (uint32_t)(api_stat(st, ev.api_id) - st->apis) + 1;
            a = &st->apis[st->known[ev.api_id] - 1];
        } else {
            a = api_stat(st, ev.api_id);
        }
        a->count++;
        a->errors += ev.result != 0;
        a->total_ns += ev.dur_ns;
        if (is_kernel_launch(&ev)) {
            uint64_t *slot = gw_map_get(&shape_kernel, ev.u.launch.shape_id);
            struct kernel_stat *k;
            if (slot) {
                k = &st->kernels[*slot];
            } else {
                char fallback[32];
                const char *name = gw_reader_kernel_name(r, ev.u.launch.shape_id);
                if (!name || !*name) {
                    snprintf(fallback, sizeof fallback, "shape_%" PRIu64,
                             ev.u.launch.shape_id);
                    name = fallback;
                }
                k = kernel_stat(st, name);
                gw_map_put(&shape_kernel, ev.u.launch.shape_id, (uint64_t)(k - st->kernels));
            }
            k->launches++;
            k->total_ns += ev.dur_ns;
        }
    }
    gw_map_free(&shape_kernel);
    t->rs = *gw_reader_stats(r);
    if (shown > 20)
        fprintf(stderr, "gpuwatch stats: %s: %" PRIu64 " damage reports in all\n", t->path,
                shown);
    gw_reader_close(r);
}

static int by_count(const void *a, const void *b)
{
    const struct api_stat *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int by_launches(const void *a, const void *b)
{
    const struct kernel_stat *x = a, *y = b;
    if (x->launches != y->launches)
        return x->launches < y->launches ? 1 : -1;
    return strcmp(x->name, y->name);
}

struct totals {
    uint64_t traces, events, errors, lost_events, lost_chunks, damage, bytes;
    uint64_t span_ns;
};

static struct totals sum_up(const struct stats *st)
{
    struct totals t = {0};
    int64_t first = 0, last = 0;
    int any = 0;
    for (size_t i = 0; i < st->ntraces; i++) {
        const struct trace_stat *tr = &st->traces[i];
        if (!tr->readable)
            continue;
        t.traces++;
        t.events += tr->rs.calls;
        t.errors += tr->rs.call_errors;
        t.lost_events += tr->rs.lost_events;
        t.lost_chunks += tr->rs.lost_chunks;
        t.damage += tr->rs.damage_reports;
        t.bytes += tr->bytes;
        if (tr->rs.last_ts_ns == 0)
            continue;
        int64_t a = (int64_t)tr->rs.first_ts_ns + tr->hdr.realtime_minus_trace_ns;
        int64_t b = (int64_t)tr->rs.last_ts_ns + tr->hdr.realtime_minus_trace_ns;
        if (!any || a < first)
            first = a;
        if (!any || b > last)
            last = b;
        any = 1;
    }
    t.span_ns = any && last > first ? (uint64_t)(last - first) : 0;
    return t;
}

static uint64_t span_of(const struct trace_stat *t)
{
    return t->rs.last_ts_ns > t->rs.first_ts_ns ? t->rs.last_ts_ns - t->rs.first_ts_ns : 0;
}

static void json_field_string(FILE *out, const char *key, const char *s, size_t size)
{
    fprintf(out, "\"%s\": ", key);
    gw_put_json_string(out, s, gw_field_len(s, size));
}

static void json_rank(FILE *out, const char *key, int32_t v)
{
    if (v < 0)
        fprintf(out, ", \"%s\": null", key);
    else
        fprintf(out, ", \"%s\": %" PRId32, key, v);
}

static void print_json(FILE *out, const struct stats *st, size_t top)
{
    struct totals t = sum_up(st);
    fprintf(out, "{\n\"format\": \"gpuwatch-stats\",\n\"version\": 1,\n\"traces\": [");
    for (size_t i = 0; i < st->ntraces; i++) {
        const struct trace_stat *tr = &st->traces[i];
        const struct gw_file_header *h = &tr->hdr;
        fprintf(out, "%s\n  {\"path\": ", i ? "," : "");
        gw_put_json_string(out, tr->path, strlen(tr->path));
        if (!tr->readable) {
            fprintf(out, ", \"readable\": false, \"error\": ");
            gw_put_json_string(out, tr->error, strlen(tr->error));
            fputc('}', out);
            continue;
        }
        fprintf(out, ", \"bytes\": %" PRIu64 ", \"readable\": true, \"format_version\": %u"
                ", \"pid\": %" PRIu32 ", \"ppid\": %" PRIu32 ", ",
                tr->bytes, (unsigned)h->version, h->pid, h->ppid);
        json_field_string(out, "host", h->hostname, sizeof h->hostname);
        fputs(", ", out);
        json_field_string(out, "cmdline", h->cmdline, sizeof h->cmdline);
        json_rank(out, "rank", h->rank);
        json_rank(out, "local_rank", h->local_rank);
        json_rank(out, "world_size", h->world_size);
        fprintf(out, ", \"device\": {\"ordinal\": %" PRId32 ", ", h->device_ordinal);
        json_field_string(out, "name", h->device_name, sizeof h->device_name);
        fprintf(out, ", \"total_mem\": %" PRIu64 ", \"free_at_start\": %" PRIu64 "}",
                h->device_total_mem, h->device_free_at_start);
        const char *cupti = gw_cupti_status_name(h->cupti_status);
        fprintf(out, ", \"cupti\": ");
        if (cupti)
            gw_put_json_string(out, cupti, strlen(cupti));
        else
            fprintf(out, "%" PRId32, h->cupti_status);
        fputs(", ", out);
        json_field_string(out, "cupti_reason", h->cupti_reason, sizeof h->cupti_reason);
        fprintf(out, ", \"events\": %" PRIu64 ", \"errors\": %" PRIu64
                ", \"lost_events\": %" PRIu64 ", \"lost_chunks\": %" PRIu64
                ", \"damage_reports\": %" PRIu64 ", \"damaged_bytes\": %" PRIu64
                ", \"wall_span_ns\": %" PRIu64 "}",
                tr->rs.calls, tr->rs.call_errors, tr->rs.lost_events, tr->rs.lost_chunks,
                tr->rs.damage_reports, tr->rs.damaged_bytes, span_of(tr));
    }
    fprintf(out, "\n],\n\"totals\": {\"traces\": %" PRIu64 ", \"events\": %" PRIu64
            ", \"errors\": %" PRIu64 ", \"lost_events\": %" PRIu64 ", \"lost_chunks\": %" PRIu64
            ", \"damage_reports\": %" PRIu64 ", \"file_bytes\": %" PRIu64
            ", \"bytes_per_event\": ",
            t.traces, t.events, t.errors, t.lost_events, t.lost_chunks, t.damage, t.bytes);
    if (t.events)
        fprintf(out, "%.2f", (double)t.bytes / (double)t.events);
    else
        fputs("null", out);
    fprintf(out, ", \"wall_span_ns\": %" PRIu64 "},\n\"apis\": {", t.span_ns);
    for (size_t i = 0; i < st->napis; i++) {
        const struct api_stat *a = &st->apis[i];
        fprintf(out, "%s\n  ", i ? "," : "");
        gw_put_json_string(out, a->name, strlen(a->name));
        fprintf(out, ": {\"count\": %" PRIu64 ", \"errors\": %" PRIu64 ", \"total_ns\": %" PRIu64
                ", \"mean_ns\": %" PRIu64 "}",
                a->count, a->errors, a->total_ns, a->count ? a->total_ns / a->count : 0);
    }
    fprintf(out, "%s},\n\"top_kernels\": [", st->napis ? "\n" : "");
    for (size_t i = 0; i < st->nkernels && i < top; i++) {
        const struct kernel_stat *k = &st->kernels[i];
        fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
        gw_put_json_string(out, k->name, strlen(k->name));
        fprintf(out, ", \"launches\": %" PRIu64 ", \"total_ns\": %" PRIu64 "}", k->launches,
                k->total_ns);
    }
    fprintf(out, "%s]\n}\n", st->nkernels && top ? "\n" : "");
}

static void print_text(FILE *out, const struct stats *st, size_t top)
{
    struct totals t = sum_up(st);
    fprintf(out, "traces %" PRIu64 "  events %" PRIu64 "  errors %" PRIu64
            "  lost events %" PRIu64 "  lost chunks %" PRIu64 "  damage reports %" PRIu64 "\n",
            t.traces, t.events, t.errors, t.lost_events, t.lost_chunks, t.damage);
    fprintf(out, "file bytes %" PRIu64 "  bytes/event ", t.bytes);
    if (t.events)
        fprintf(out, "%.2f", (double)t.bytes / (double)t.events);
    else
        fputs("-", out);
    fprintf(out, "  wall span %.6f s\n\n", (double)t.span_ns / 1e9);
    for (size_t i = 0; i < st->ntraces; i++) {
        const struct trace_stat *tr = &st->traces[i];
        const struct gw_file_header *h = &tr->hdr;
        gw_put_escaped(out, tr->path, strlen(tr->path));
        if (!tr->readable) {
            fprintf(out, ": unreadable\n");
            continue;
        }
        fprintf(out, ": pid %" PRIu32 " host ", h->pid);
        gw_put_escaped(out, h->hostname, gw_field_len(h->hostname, sizeof h->hostname));
        if (h->rank >= 0)
            fprintf(out, " rank %" PRId32, h->rank);
        fprintf(out, "  device %" PRId32 " ", h->device_ordinal);
        gw_put_value(out, h->device_name, gw_field_len(h->device_name, sizeof h->device_name));
        fprintf(out, " %.2f GiB total, %.2f GiB free at start  events %" PRIu64
                "  span %.6f s\n",
                (double)h->device_total_mem / (1u << 30),
                (double)h->device_free_at_start / (1u << 30), tr->rs.calls,
                (double)span_of(tr) / 1e9);
    }
    fprintf(out, "\n%-32s %10s %8s %14s %12s\n", "entry point", "count", "errors",
            "total_ns", "mean_ns");
    for (size_t i = 0; i < st->napis; i++) {
        const struct api_stat *a = &st->apis[i];
        fprintf(out, "%-32s %10" PRIu64 " %8" PRIu64 " %14" PRIu64 " %12" PRIu64 "\n", a->name,
                a->count, a->errors, a->total_ns, a->count ? a->total_ns / a->count : 0);
    }
    if (st->nkernels && top) {
        fprintf(out, "\ntop kernels by launches\n%10s %14s  %s\n", "launches", "total_ns",
                "kernel");
        for (size_t i = 0; i < st->nkernels && i < top; i++) {
            fprintf(out, "%10" PRIu64 " %14" PRIu64 "  ", st->kernels[i].launches,
                    st->kernels[i].total_ns);
            gw_put_escaped(out, st->kernels[i].name, strlen(st->kernels[i].name));
            fputc('\n', out);
        }
    }
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch stats [--json] [--top N] TRACE...\n"
            "Per exact driver entry point called: count, errors, total and mean host time;\n"
            "totals (events, lost events and chunks, file bytes, bytes per event, wall\n"
            "span); the most launched kernels; each trace's device.\n\n"
            "  -j, --json      print one JSON object (keys documented in cmd_stats.c)\n"
            "  -t, --top N     kernels to list (default 10)\n"
            "  -h, --help      this text\n"
            "Exit status 1 when a trace could not be read or was damaged.\n");
}

int gw_cmd_stats(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"top", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int json = 0, c;
    size_t top = 10;
    while ((c = getopt_long(argc, argv, "jt:h", options, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 't': {
            char *end;
            unsigned long v = strtoul(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-')
                return gw_usage_error("stats", "--top expects a number, got '%s'", optarg);
            top = v;
            break;
        }
        case 'h': help(stdout); return GW_EXIT_OK;
        default: return gw_usage_error("stats", "unknown option");
        }
    }
    if (optind >= argc)
        return gw_usage_error("stats", "expected at least one TRACE");

    struct stats st = {0};
    st.ntraces = (size_t)(argc - optind);
    st.traces = calloc(st.ntraces, sizeof *st.traces);
    if (!st.traces) {
        fprintf(stderr, "gpuwatch stats: out of memory\n");
        return GW_EXIT_DAMAGE;
    }
    int rc = GW_EXIT_OK;
    for (size_t i = 0; i < st.ntraces; i++) {
        st.traces[i].path = argv[optind + (int)i];
        read_trace(&st, &st.traces[i]);
        if (!st.traces[i].readable || st.traces[i].rs.damage_reports)
            rc = GW_EXIT_DAMAGE;
    }
    if (st.napis)
        qsort(st.apis, st.napis, sizeof *st.apis, by_count);
    if (st.nkernels)
        qsort(st.kernels, st.nkernels, sizeof *st.kernels, by_launches);
    if (json)
        print_json(stdout, &st, top);
    else
        print_text(stdout, &st, top);
    fflush(stdout);
    if (ferror(stdout)) {
        fprintf(stderr, "gpuwatch stats: error writing the output\n");
        rc = GW_EXIT_DAMAGE;
    }
    for (size_t i = 0; i < st.nkernels; i++)
        free(st.kernels[i].name);
    free(st.kernels);
    free(st.apis);
    free(st.traces);
    gw_map_free(&st.api_ids);
    gw_map_free(&st.kernel_ids);
    return rc;
}
