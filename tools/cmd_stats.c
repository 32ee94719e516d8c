/*
 * gpuwatch stats [--json] [--top N] TRACE...: per exact entry point name called, the count,
 * errors and host time; totals; top kernels by launch count; the device of each trace; and
 * from the GPU timeline, when the trace has one: GPU busy time per device (kernels, copies
 * and sets unioned across streams), kernel count, top kernels by GPU time, memcpy bytes,
 * time and bandwidth by direction and memory kinds, GPU records lost, NVTX ranges.
 *
 * --json prints one object; its keys are documented in docs/stats-json.md (stable: new
 * keys are only ever added). Entry points this build does not know are named "api_<id>";
 * kernels whose shape or name is missing from the trace are named "shape_<id>". Exit
 * status: 0, or 1 when a trace could not be read or was damaged, 2 on usage errors.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gw_busy.h"
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

/* Kernels by name (host launches or GPU records). */
struct kernel_table {
    struct kernel_stat *items;
    size_t count, cap;
    struct gw_map ids;            /* name hash (+ probe) -> index */
};

/* One device of one trace, from its GPU records. */
struct device_stat {
    uint64_t device;
    struct gw_busy busy;          /* kernels, copies and sets: union across streams */
    uint64_t busy_ns, span_ns;    /* from busy, once the trace is read */
    uint64_t late, late_ns;       /* records that came after their time was settled */
    uint64_t kernels, memcpys, memsets;
    uint64_t kernel_ns, memcpy_ns, memset_ns;  /* summed durations */
};

/* memcpy by CUPTI copy kind and memory kinds, or memset by memory kind. */
struct transfer_stat {
    unsigned kind, src, dst;      /* memset: kind = memory kind, src = dst = 0 */
    uint64_t count, bytes, total_ns;
};

struct transfer_table {
    struct transfer_stat *items;
    size_t count, cap;
    struct gw_map ids;            /* kind << 40 | src << 20 | dst -> index */
};

struct trace_stat {
    const char *path;
    uint64_t bytes;
    int readable;
    char error[512];
    struct gw_file_header hdr;
    struct gw_reader_stats rs;
    struct device_stat *devices;  /* by ordinal */
    size_t ndevices;
    uint64_t nvtx_ranges;         /* RANGE_PUSH + RANGE_START */
    uint64_t nvtx_marks;
    uint64_t bad_durations;       /* GPU records whose end wraps past 2^64 (not in busy) */
};

struct stats {
    struct api_stat *apis;
    size_t napis, apis_cap;
    struct gw_map api_ids;        /* api id -> index */
    uint32_t known[GW_API_ID_LIMIT]; /* index + 1 for ids below the limit, 0 unseen */
    struct kernel_table kernels;  /* host launches */
    struct kernel_table gpu_kernels; /* GPU kernel records */
    struct transfer_table memcpys, memsets;
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

static struct kernel_stat *kernel_stat(struct kernel_table *t, const char *name)
{
    uint64_t key = hash_name(name);
    for (;; key++) {
        uint64_t *slot = gw_map_get(&t->ids, key);
        if (!slot)
            break;
        if (!strcmp(t->items[*slot].name, name))
            return &t->items[*slot];
    }
    t->items = grow(t->items, &t->cap, t->count, sizeof *t->items);
    struct kernel_stat *k = &t->items[t->count];
    k->name = strdup(name);
    k->launches = k->total_ns = 0;
    if (!k->name) {
        fprintf(stderr, "gpuwatch stats: out of memory\n");
        exit(GW_EXIT_DAMAGE);
    }
    gw_map_put(&t->ids, key, t->count);
    t->count++;
    return k;
}

/* Shape id -> kernel index for one trace, with a direct-mapped front for the hot ones. */
#define SHAPE_FRONT 64
struct shape_cache {
    struct gw_map map;
    uint64_t ids[SHAPE_FRONT];  /* shape id + 1, 0 empty */
    uint64_t index[SHAPE_FRONT];
};

/* The kernel of a shape id of this trace, looked up once per shape. */
static struct kernel_stat *shape_kernel(struct kernel_table *t, struct shape_cache *cache,
                                        struct gw_reader *r, uint64_t shape_id)
{
    size_t front = (size_t)(shape_id % SHAPE_FRONT);
    if (cache->ids[front] == shape_id + 1)
        return &t->items[cache->index[front]];
    uint64_t *slot = gw_map_get(&cache->map, shape_id);
    if (slot) {
        cache->ids[front] = shape_id + 1, cache->index[front] = *slot;
        return &t->items[*slot];
    }
    char fallback[32];
    const char *name = gw_reader_kernel_name(r, shape_id);
    if (!name || !*name) {
        snprintf(fallback, sizeof fallback, "shape_%" PRIu64, shape_id);
        name = fallback;
    }
    struct kernel_stat *k = kernel_stat(t, name);
    gw_map_put(&cache->map, shape_id, (uint64_t)(k - t->items));
    return k;
}

static void free_kernels(struct kernel_table *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->items[i].name);
    free(t->items);
    gw_map_free(&t->ids);
}

static struct transfer_stat *transfer_stat(struct transfer_table *t, unsigned kind,
                                           unsigned src, unsigned dst)
{
    kind &= 0xFFFFF, src &= 0xFFFFF, dst &= 0xFFFFF;
    uint64_t key = (uint64_t)kind << 40 | (uint64_t)src << 20 | dst;
    uint64_t *slot = gw_map_get(&t->ids, key);
    if (slot)
        return &t->items[*slot];
    t->items = grow(t->items, &t->cap, t->count, sizeof *t->items);
    struct transfer_stat *x = &t->items[t->count];
    *x = (struct transfer_stat){.kind = kind, .src = src, .dst = dst};
    gw_map_put(&t->ids, key, t->count);
    t->count++;
    return x;
}

static struct device_stat *device_stat(struct trace_stat *t, uint64_t device, size_t *cap)
{
    for (size_t i = 0; i < t->ndevices; i++)
        if (t->devices[i].device == device)
            return &t->devices[i];
    t->devices = grow(t->devices, cap, t->ndevices, sizeof *t->devices);
    size_t at = t->ndevices++;
    while (at > 0 && t->devices[at - 1].device > device) {  /* kept by ordinal */
        t->devices[at] = t->devices[at - 1];
        at--;
    }
    t->devices[at] = (struct device_stat){.device = device};
    return &t->devices[at];
}

/* Adds one GPU operation to the busy time of its device (unless its end wraps past 2^64)
 * and returns that device. */
static struct device_stat *gpu_op(struct trace_stat *t, struct device_stat **last,
                                  size_t *cap, const struct gw_event *ev, uint64_t device)
{
    struct device_stat *d = *last && (*last)->device == device ? *last
                                                                 : device_stat(t, device, cap);
    *last = d;
    uint64_t end = ev->ts_ns + ev->dur_ns;
    if (end < ev->ts_ns)
        t->bad_durations++;
    else
        gw_busy_add(&d->busy, ev->ts_ns, end);
    return d;
}

static int host_only(const struct trace_stat *t)
{
    return !t->rs.gpu_kernels && !t->rs.gpu_memcpys && !t->rs.gpu_memsets &&
           !t->rs.gpu_lost_records;
}

static uint64_t gpu_busy(const struct trace_stat *t)
{
    uint64_t busy = 0;
    for (size_t i = 0; i < t->ndevices; i++)
        busy += t->devices[i].busy_ns;
    return busy;
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
    struct shape_cache shape_kernel_ids = {0}, gpu_shape_kernel_ids = {0};
    struct device_stat *last_device = NULL;
    size_t devices_cap = 0;
    struct gw_event ev;
    while (gw_reader_next(r, &ev) > 0) {
        if (ev.kind != GW_EV_CALL) {
            switch (ev.kind) {
            case GW_EV_GPU_KERNEL: {
                struct device_stat *d =
                    gpu_op(t, &last_device, &devices_cap, &ev, ev.u.gpu_kernel.device);
                d->kernels++;
                d->kernel_ns += ev.dur_ns;
                struct kernel_stat *k = shape_kernel(&st->gpu_kernels, &gpu_shape_kernel_ids,
                                                     r, ev.u.gpu_kernel.shape_id);
                k->launches++;
                k->total_ns += ev.dur_ns;
                break;
            }
            case GW_EV_GPU_MEMCPY: {
                struct device_stat *d =
                    gpu_op(t, &last_device, &devices_cap, &ev, ev.u.gpu_memcpy.device);
                d->memcpys++;
                d->memcpy_ns += ev.dur_ns;
                struct transfer_stat *x =
                    transfer_stat(&st->memcpys, ev.u.gpu_memcpy.copy_kind,
                                  ev.u.gpu_memcpy.src_kind, ev.u.gpu_memcpy.dst_kind);
                x->count++;
                x->bytes += ev.u.gpu_memcpy.bytes;
                x->total_ns += ev.dur_ns;
                break;
            }
            case GW_EV_GPU_MEMSET: {
                struct device_stat *d =
                    gpu_op(t, &last_device, &devices_cap, &ev, ev.u.gpu_memset.device);
                d->memsets++;
                d->memset_ns += ev.dur_ns;
                struct transfer_stat *x =
                    transfer_stat(&st->memsets, ev.u.gpu_memset.memory_kind, 0, 0);
                x->count++;
                x->bytes += ev.u.gpu_memset.bytes;
                x->total_ns += ev.dur_ns;
                break;
            }
            case GW_EV_RANGE_PUSH:
            case GW_EV_RANGE_START:
                t->nvtx_ranges++;
                break;
            case GW_EV_MARK:
                t->nvtx_marks++;
                break;
            default:
                break;
            }
            continue;
        }
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
            struct kernel_stat *k =
                shape_kernel(&st->kernels, &shape_kernel_ids, r, ev.u.launch.shape_id);
            k->launches++;
            k->total_ns += ev.dur_ns;
        }
    }
    gw_map_free(&shape_kernel_ids.map);
    gw_map_free(&gpu_shape_kernel_ids.map);
    for (size_t i = 0; i < t->ndevices; i++) {
        struct device_stat *d = &t->devices[i];
        d->busy_ns = gw_busy_total(&d->busy);
        d->span_ns = gw_busy_span(&d->busy);
        d->late = d->busy.late;
        d->late_ns = d->busy.late_ns;
        if (d->busy.failed)
            fprintf(stderr, "gpuwatch stats: %s: out of memory: the busy time of device %"
                    PRIu64 " is a lower bound\n", t->path, d->device);
        gw_busy_free(&d->busy);
    }
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

static int by_gpu_time(const void *a, const void *b)
{
    const struct kernel_stat *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int by_kinds(const void *a, const void *b)
{
    const struct transfer_stat *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return (x->dst > y->dst) - (x->dst < y->dst);
}

struct totals {
    uint64_t traces, events, errors, lost_events, lost_chunks, damage, bytes;
    uint64_t span_ns;
    uint64_t gpu_kernels, gpu_memcpys, gpu_memsets, gpu_lost, gpu_busy_ns, nvtx_ranges;
    int host_only;
};

static struct totals sum_up(const struct stats *st)
{
    struct totals t = {0};
    int64_t first = 0, last = 0;
    int any = 0;
    t.host_only = 1;
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
        t.gpu_kernels += tr->rs.gpu_kernels;
        t.gpu_memcpys += tr->rs.gpu_memcpys;
        t.gpu_memsets += tr->rs.gpu_memsets;
        t.gpu_lost += tr->rs.gpu_lost_events;
        t.gpu_busy_ns += gpu_busy(tr);
        t.nvtx_ranges += tr->nvtx_ranges;
        t.host_only &= host_only(tr);
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

/* Bytes per ns = GB/s (10^9 bytes per second). */
static void json_bandwidth(FILE *out, uint64_t bytes, uint64_t ns)
{
    if (ns)
        fprintf(out, "%.3f", (double)bytes / (double)ns);
    else
        fputs("null", out);
}

static void json_trace_gpu(FILE *out, const struct trace_stat *tr)
{
    const struct gw_reader_stats *rs = &tr->rs;
    fprintf(out, ", \"host_only\": %s, \"gpu\": {\"kernels\": %" PRIu64 ", \"memcpys\": %"
            PRIu64 ", \"memsets\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"correlations\": %"
            PRIu64 ", \"busy_ns\": %" PRIu64 ", \"sampled_windows\": %" PRIu64
            ", \"devices\": [",
            host_only(tr) ? "true" : "false", rs->gpu_kernels, rs->gpu_memcpys,
            rs->gpu_memsets, rs->gpu_lost_events, rs->correlations, gpu_busy(tr),
            (tr->hdr.feature_flags & GW_FEAT_GPU_SAMPLED) ? rs->gpu_windows : 0);
    for (size_t i = 0; i < tr->ndevices; i++) {
        const struct device_stat *d = &tr->devices[i];
        fprintf(out, "%s{\"device\": %" PRIu64 ", \"busy_ns\": %" PRIu64 ", \"span_ns\": %" PRIu64
                ", \"kernels\": %" PRIu64 ", \"memcpys\": %" PRIu64 ", \"memsets\": %" PRIu64
                ", \"kernel_ns\": %" PRIu64 ", \"memcpy_ns\": %" PRIu64 ", \"memset_ns\": %"
                PRIu64 ", \"late\": %" PRIu64 ", \"late_ns\": %" PRIu64 "}",
                i ? ", " : "", d->device, d->busy_ns, d->span_ns, d->kernels, d->memcpys,
                d->memsets, d->kernel_ns, d->memcpy_ns, d->memset_ns, d->late, d->late_ns);
    }
    fprintf(out, "]}, \"nvtx\": {\"records\": %" PRIu64 ", \"ranges\": %" PRIu64
            ", \"marks\": %" PRIu64 "}",
            rs->nvtx_records, tr->nvtx_ranges, tr->nvtx_marks);
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
        if (h->feature_flags & GW_FEAT_CPU_COUNT)
            fprintf(out, ", \"cpus_online\": %" PRIu32 ", \"cpus_usable\": %" PRIu32,
                    h->cpus_online, h->cpus_usable);
        else
            fputs(", \"cpus_online\": null, \"cpus_usable\": null", out);
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
                ", \"wall_span_ns\": %" PRIu64,
                tr->rs.calls, tr->rs.call_errors, tr->rs.lost_events, tr->rs.lost_chunks,
                tr->rs.damage_reports, tr->rs.damaged_bytes, span_of(tr));
        json_trace_gpu(out, tr);
        fputc('}', out);
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
    fprintf(out, ", \"wall_span_ns\": %" PRIu64 ", \"host_only\": %s, \"gpu_kernels\": %" PRIu64
            ", \"gpu_memcpys\": %" PRIu64 ", \"gpu_memsets\": %" PRIu64 ", \"gpu_lost\": %"
            PRIu64 ", \"gpu_busy_ns\": %" PRIu64 ", \"nvtx_ranges\": %" PRIu64 "},\n\"apis\": {",
            t.span_ns, t.host_only ? "true" : "false", t.gpu_kernels, t.gpu_memcpys,
            t.gpu_memsets, t.gpu_lost, t.gpu_busy_ns, t.nvtx_ranges);
    for (size_t i = 0; i < st->napis; i++) {
        const struct api_stat *a = &st->apis[i];
        fprintf(out, "%s\n  ", i ? "," : "");
        gw_put_json_string(out, a->name, strlen(a->name));
        fprintf(out, ": {\"count\": %" PRIu64 ", \"errors\": %" PRIu64 ", \"total_ns\": %" PRIu64
                ", \"mean_ns\": %" PRIu64 "}",
                a->count, a->errors, a->total_ns, a->count ? a->total_ns / a->count : 0);
    }
    fprintf(out, "%s},\n\"top_kernels\": [", st->napis ? "\n" : "");
    const struct kernel_table *kt = &st->kernels;
    for (size_t i = 0; i < kt->count && i < top; i++) {
        const struct kernel_stat *k = &kt->items[i];
        fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
        gw_put_json_string(out, k->name, strlen(k->name));
        fprintf(out, ", \"launches\": %" PRIu64 ", \"total_ns\": %" PRIu64 "}", k->launches,
                k->total_ns);
    }
    fprintf(out, "%s],\n\"top_gpu_kernels\": [", kt->count && top ? "\n" : "");
    const struct kernel_table *gt = &st->gpu_kernels;
    for (size_t i = 0; i < gt->count && i < top; i++) {
        const struct kernel_stat *k = &gt->items[i];
        fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
        gw_put_json_string(out, k->name, strlen(k->name));
        fprintf(out, ", \"count\": %" PRIu64 ", \"total_ns\": %" PRIu64 ", \"mean_ns\": %" PRIu64
                "}",
                k->launches, k->total_ns, k->launches ? k->total_ns / k->launches : 0);
    }
    fprintf(out, "%s],\n\"memcpy\": [", gt->count && top ? "\n" : "");
    for (size_t i = 0; i < st->memcpys.count; i++) {
        const struct transfer_stat *x = &st->memcpys.items[i];
        fprintf(out, "%s\n  {\"kind\": \"%s\", \"src\": \"%s\", \"dst\": \"%s\", \"count\": %"
                PRIu64 ", \"bytes\": %" PRIu64 ", \"total_ns\": %" PRIu64 ", \"gb_per_s\": ",
                i ? "," : "", gw_gpu_copy_kind_name(x->kind), gw_gpu_memory_kind_name(x->src),
                gw_gpu_memory_kind_name(x->dst), x->count, x->bytes, x->total_ns);
        json_bandwidth(out, x->bytes, x->total_ns);
        fputc('}', out);
    }
    fprintf(out, "%s],\n\"memset\": [", st->memcpys.count ? "\n" : "");
    for (size_t i = 0; i < st->memsets.count; i++) {
        const struct transfer_stat *x = &st->memsets.items[i];
        fprintf(out, "%s\n  {\"memory\": \"%s\", \"count\": %" PRIu64 ", \"bytes\": %" PRIu64
                ", \"total_ns\": %" PRIu64 ", \"gb_per_s\": ",
                i ? "," : "", gw_gpu_memory_kind_name(x->kind), x->count, x->bytes,
                x->total_ns);
        json_bandwidth(out, x->bytes, x->total_ns);
        fputc('}', out);
    }
    fprintf(out, "%s]\n}\n", st->memsets.count ? "\n" : "");
}

static void print_text_gpu(FILE *out, const struct trace_stat *tr)
{
    const struct gw_file_header *h = &tr->hdr;
    const char *cupti = gw_cupti_status_name(h->cupti_status);
    size_t reason = gw_field_len(h->cupti_reason, sizeof h->cupti_reason);
    fputs(host_only(tr) ? "  host only: no GPU records  cupti " : "  cupti ", out);
    if (cupti)
        fputs(cupti, out);
    else
        fprintf(out, "%" PRId32, h->cupti_status);
    if (reason) {
        fputs(" (", out);
        gw_put_escaped(out, h->cupti_reason, reason);
        fputc(')', out);
    }
    if (!host_only(tr))
        fprintf(out, "  gpu kernels %" PRIu64 "  memcpys %" PRIu64 "  memsets %" PRIu64
                "  lost %" PRIu64 "  correlations %" PRIu64,
                tr->rs.gpu_kernels, tr->rs.gpu_memcpys, tr->rs.gpu_memsets,
                tr->rs.gpu_lost_events, tr->rs.correlations);
    if (tr->hdr.feature_flags & GW_FEAT_GPU_SAMPLED)
        fprintf(out, "  sampled in %" PRIu64 " windows (the GPU figures cover those only)",
                tr->rs.gpu_windows);
    if (tr->rs.nvtx_records)
        fprintf(out, "  nvtx ranges %" PRIu64 "  marks %" PRIu64, tr->nvtx_ranges,
                tr->nvtx_marks);
    fputc('\n', out);
    for (size_t i = 0; i < tr->ndevices; i++) {
        const struct device_stat *d = &tr->devices[i];
        fprintf(out, "  gpu %" PRIu64 ": busy %.6f s of %.6f s (%.1f %%)  kernels %" PRIu64
                " (%.6f s)  memcpys %" PRIu64 " (%.6f s)  memsets %" PRIu64 " (%.6f s)\n",
                d->device, (double)d->busy_ns / 1e9, (double)d->span_ns / 1e9,
                d->span_ns ? 100.0 * (double)d->busy_ns / (double)d->span_ns : 0.0,
                d->kernels, (double)d->kernel_ns / 1e9, d->memcpys, (double)d->memcpy_ns / 1e9,
                d->memsets, (double)d->memset_ns / 1e9);
        if (d->late)
            fprintf(out, "  gpu %" PRIu64 ": %" PRIu64 " records came long after their time "
                    "(%.6f s of them before it): busy time is exact to within that\n",
                    d->device, d->late, (double)d->late_ns / 1e9);
    }
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
    fprintf(out, "  wall span %.6f s\n", (double)t.span_ns / 1e9);
    if (t.host_only)
        fputs("host only: no GPU records\n", out);
    else
        fprintf(out, "gpu kernels %" PRIu64 "  memcpys %" PRIu64 "  memsets %" PRIu64
                "  gpu records lost %" PRIu64 "  gpu busy %.6f s  nvtx ranges %" PRIu64 "\n",
                t.gpu_kernels, t.gpu_memcpys, t.gpu_memsets, t.gpu_lost,
                (double)t.gpu_busy_ns / 1e9, t.nvtx_ranges);
    fputc('\n', out);
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
        if (tr->rs.salvaged_chunks)
            fprintf(out, "  the process did not end cleanly: %" PRIu64 " bytes of %" PRIu64
                    " thread%s last records read from %s%s\n",
                    tr->rs.salvaged_bytes, tr->rs.salvaged_chunks,
                    tr->rs.salvaged_chunks == 1 ? "'s" : "s'", tr->path, GW_RINGS_SUFFIX);
        print_text_gpu(out, tr);
    }
    fprintf(out, "\n%-32s %10s %8s %14s %12s\n", "entry point", "count", "errors",
            "total_ns", "mean_ns");
    for (size_t i = 0; i < st->napis; i++) {
        const struct api_stat *a = &st->apis[i];
        fprintf(out, "%-32s %10" PRIu64 " %8" PRIu64 " %14" PRIu64 " %12" PRIu64 "\n", a->name,
                a->count, a->errors, a->total_ns, a->count ? a->total_ns / a->count : 0);
    }
    const struct kernel_table *kt = &st->kernels;
    if (kt->count && top) {
        fprintf(out, "\ntop kernels by launches\n%10s %14s  %s\n", "launches", "total_ns",
                "kernel");
        for (size_t i = 0; i < kt->count && i < top; i++) {
            fprintf(out, "%10" PRIu64 " %14" PRIu64 "  ", kt->items[i].launches,
                    kt->items[i].total_ns);
            gw_put_escaped(out, kt->items[i].name, strlen(kt->items[i].name));
            fputc('\n', out);
        }
    }
    const struct kernel_table *gt = &st->gpu_kernels;
    if (gt->count && top) {
        fprintf(out, "\ntop kernels by GPU time\n%10s %14s %12s  %s\n", "count", "total_ns",
                "mean_ns", "kernel");
        for (size_t i = 0; i < gt->count && i < top; i++) {
            const struct kernel_stat *k = &gt->items[i];
            fprintf(out, "%10" PRIu64 " %14" PRIu64 " %12" PRIu64 "  ", k->launches, k->total_ns,
                    k->launches ? k->total_ns / k->launches : 0);
            gw_put_escaped(out, k->name, strlen(k->name));
            fputc('\n', out);
        }
    }
    if (st->memcpys.count) {
        fprintf(out, "\nmemcpy by kind\n%-6s %-14s %-14s %10s %16s %14s %10s\n", "kind", "src",
                "dst", "count", "bytes", "total_ns", "GB/s");
        for (size_t i = 0; i < st->memcpys.count; i++) {
            const struct transfer_stat *x = &st->memcpys.items[i];
            fprintf(out, "%-6s %-14s %-14s %10" PRIu64 " %16" PRIu64 " %14" PRIu64,
                    gw_gpu_copy_kind_name(x->kind), gw_gpu_memory_kind_name(x->src),
                    gw_gpu_memory_kind_name(x->dst), x->count, x->bytes, x->total_ns);
            if (x->total_ns)
                fprintf(out, " %10.3f\n", (double)x->bytes / (double)x->total_ns);
            else
                fprintf(out, " %10s\n", "-");
        }
    }
    if (st->memsets.count) {
        fprintf(out, "\nmemset by memory\n%-14s %10s %16s %14s %10s\n", "memory", "count",
                "bytes", "total_ns", "GB/s");
        for (size_t i = 0; i < st->memsets.count; i++) {
            const struct transfer_stat *x = &st->memsets.items[i];
            fprintf(out, "%-14s %10" PRIu64 " %16" PRIu64 " %14" PRIu64,
                    gw_gpu_memory_kind_name(x->kind), x->count, x->bytes, x->total_ns);
            if (x->total_ns)
                fprintf(out, " %10.3f\n", (double)x->bytes / (double)x->total_ns);
            else
                fprintf(out, " %10s\n", "-");
        }
    }
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch stats [--json] [--top N] TRACE...\n"
            "Per exact driver entry point called: count, errors, total and mean host time;\n"
            "totals (events, lost events and chunks, file bytes, bytes per event, wall\n"
            "span); the most launched kernels; each trace's device. From the GPU timeline:\n"
            "busy time per GPU (kernels, copies and sets unioned across streams), kernels\n"
            "by GPU time, memcpy bytes and bandwidth by kind, GPU records lost, NVTX ranges;\n"
            "'host only' when the trace has no GPU records (with the header's CUPTI status).\n\n"
            "  -j, --json      print one JSON object (keys in docs/stats-json.md)\n"
            "  -t, --top N     kernels to list (default 10)\n"
            "  -h, --help      this text\n"
            "Exit status 1 when a trace could not be read or was damaged, or holds a second\n"
            "trace appended to it. A file that ends inside a chunk, as a killed or crashed\n"
            "run's does, is not damage: \"ended abruptly at offset N\" on stderr, status 0.\n");
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
    if (st.kernels.count)
        qsort(st.kernels.items, st.kernels.count, sizeof *st.kernels.items, by_launches);
    if (st.gpu_kernels.count)
        qsort(st.gpu_kernels.items, st.gpu_kernels.count, sizeof *st.gpu_kernels.items,
              by_gpu_time);
    if (st.memcpys.count)
        qsort(st.memcpys.items, st.memcpys.count, sizeof *st.memcpys.items, by_kinds);
    if (st.memsets.count)
        qsort(st.memsets.items, st.memsets.count, sizeof *st.memsets.items, by_kinds);
    if (json)
        print_json(stdout, &st, top);
    else
        print_text(stdout, &st, top);
    fflush(stdout);
    if (ferror(stdout)) {
        fprintf(stderr, "gpuwatch stats: error writing the output\n");
        rc = GW_EXIT_DAMAGE;
    }
    free_kernels(&st.kernels);
    free_kernels(&st.gpu_kernels);
    free(st.memcpys.items);
    free(st.memsets.items);
    gw_map_free(&st.memcpys.ids);
    gw_map_free(&st.memsets.ids);
    for (size_t i = 0; i < st.ntraces; i++)
        free(st.traces[i].devices);
    free(st.apis);
    free(st.traces);
    gw_map_free(&st.api_ids);
    return rc;
}
