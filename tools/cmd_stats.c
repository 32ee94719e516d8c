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
#include "stats_totals.h"
#include "text_out.h"
#include "trace_stats.h"

static void on_damage(const struct gw_damage *damage, void *user)
{
    uint64_t *count = user;
    if (++*count <= 20)
        fprintf(stderr, "gpuwatch stats: %s\n", damage->message);
}

/* Reads one trace into st and says on stderr what could not be read or counted. */
static void read_trace(struct gw_stats *st, struct gw_trace_stat *t)
{
    uint64_t shown = 0;
    if (gw_stats_read(st, t, on_damage, &shown) != 0 && !t->readable) {
        fprintf(stderr, "gpuwatch stats: %s\n", t->error);
        return;
    }
    for (size_t i = 0; i < t->devices.count; i++)
        if (t->devices.items[i].busy_failed)
            fprintf(stderr, "gpuwatch stats: %s: out of memory: the busy time of device %"
                    PRIu64 " is a lower bound\n", t->path, t->devices.items[i].device);
    if (shown > 20)
        fprintf(stderr, "gpuwatch stats: %s: %" PRIu64 " damage reports in all\n", t->path,
                shown);
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

static void json_trace_gpu(FILE *out, const struct gw_trace_stat *tr)
{
    const struct gw_reader_stats *rs = &tr->rs;
    fprintf(out, ", \"host_only\": %s, \"gpu\": {\"kernels\": %" PRIu64 ", \"memcpys\": %"
            PRIu64 ", \"memsets\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"correlations\": %"
            PRIu64 ", \"busy_ns\": %" PRIu64 ", \"sampled_windows\": %" PRIu64
            ", \"devices\": [",
            gw_trace_host_only(tr) ? "true" : "false", rs->gpu_kernels, rs->gpu_memcpys,
            rs->gpu_memsets, rs->gpu_lost_events, rs->correlations, gw_devices_busy(&tr->devices),
            (tr->hdr.feature_flags & GW_FEAT_GPU_SAMPLED) ? rs->gpu_windows : 0);
    for (size_t i = 0; i < tr->devices.count; i++) {
        const struct gw_device_stat *d = &tr->devices.items[i];
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

static void json_trace_shim(FILE *out, const struct gw_trace_stat *tr)
{
    const struct gw_shim_stats *shim = &tr->rs.shim;
    if (!shim->rounds) {
        fputs(", \"shim\": null", out);
        return;
    }
    fprintf(out, ", \"shim\": {\"rounds\": %" PRIu64 ", \"cpu_ns\": %" PRIu64
            ", \"late_p50_ns\": %" PRIu64 ", \"late_p99_ns\": %" PRIu64
            ", \"late_max_ns\": %" PRIu64 ", \"flush_ns\": %" PRIu64 "}",
            shim->rounds, shim->cpu_ns, gw_shim_late_quantile_ns(shim, 0.5),
            gw_shim_late_quantile_ns(shim, 0.99), shim->late_max_ns, shim->flush_ns);
}

static void print_json(FILE *out, const struct gw_stats *st, size_t top)
{
    struct gw_stats_totals t = gw_stats_totals(st);
    fprintf(out, "{\n\"format\": \"gpuwatch-stats\",\n\"version\": 1,\n\"traces\": [");
    for (size_t i = 0; i < st->ntraces; i++) {
        const struct gw_trace_stat *tr = &st->traces[i];
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
                tr->rs.damage_reports, tr->rs.damaged_bytes, gw_trace_span(tr));
        json_trace_gpu(out, tr);
        json_trace_shim(out, tr);
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
    for (size_t i = 0; i < st->apis.count; i++) {
        const struct gw_api_stat *a = &st->apis.items[i];
        fprintf(out, "%s\n  ", i ? "," : "");
        gw_put_json_string(out, a->name, strlen(a->name));
        fprintf(out, ": {\"count\": %" PRIu64 ", \"errors\": %" PRIu64 ", \"total_ns\": %" PRIu64
                ", \"mean_ns\": %" PRIu64 "}",
                a->count, a->errors, a->total_ns, a->count ? a->total_ns / a->count : 0);
    }
    fprintf(out, "%s},\n\"top_kernels\": [", st->apis.count ? "\n" : "");
    const struct gw_kernel_table *kt = &st->kernels;
    for (size_t i = 0; i < kt->count && i < top; i++) {
        const struct gw_kernel_stat *k = &kt->items[i];
        fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
        gw_put_json_string(out, k->name, strlen(k->name));
        fprintf(out, ", \"launches\": %" PRIu64 ", \"total_ns\": %" PRIu64 "}", k->launches,
                k->total_ns);
    }
    fprintf(out, "%s],\n\"top_gpu_kernels\": [", kt->count && top ? "\n" : "");
    const struct gw_kernel_table *gt = &st->gpu_kernels;
    for (size_t i = 0; i < gt->count && i < top; i++) {
        const struct gw_kernel_stat *k = &gt->items[i];
        fprintf(out, "%s\n  {\"name\": ", i ? "," : "");
        gw_put_json_string(out, k->name, strlen(k->name));
        fprintf(out, ", \"count\": %" PRIu64 ", \"total_ns\": %" PRIu64 ", \"mean_ns\": %" PRIu64
                "}",
                k->launches, k->total_ns, k->launches ? k->total_ns / k->launches : 0);
    }
    fprintf(out, "%s],\n\"memcpy\": [", gt->count && top ? "\n" : "");
    for (size_t i = 0; i < st->memcpys.count; i++) {
        const struct gw_transfer_stat *x = &st->memcpys.items[i];
        fprintf(out, "%s\n  {\"kind\": \"%s\", \"src\": \"%s\", \"dst\": \"%s\", \"count\": %"
                PRIu64 ", \"bytes\": %" PRIu64 ", \"total_ns\": %" PRIu64 ", \"gb_per_s\": ",
                i ? "," : "", gw_gpu_copy_kind_name(x->kind), gw_gpu_memory_kind_name(x->src),
                gw_gpu_memory_kind_name(x->dst), x->count, x->bytes, x->total_ns);
        json_bandwidth(out, x->bytes, x->total_ns);
        fputc('}', out);
    }
    fprintf(out, "%s],\n\"memset\": [", st->memcpys.count ? "\n" : "");
    for (size_t i = 0; i < st->memsets.count; i++) {
        const struct gw_transfer_stat *x = &st->memsets.items[i];
        fprintf(out, "%s\n  {\"memory\": \"%s\", \"count\": %" PRIu64 ", \"bytes\": %" PRIu64
                ", \"total_ns\": %" PRIu64 ", \"gb_per_s\": ",
                i ? "," : "", gw_gpu_memory_kind_name(x->kind), x->count, x->bytes,
                x->total_ns);
        json_bandwidth(out, x->bytes, x->total_ns);
        fputc('}', out);
    }
    fprintf(out, "%s]\n}\n", st->memsets.count ? "\n" : "");
}

/* The shim's own cost, where the trace has it: the writer's CPU against the run's span and
 * how late its rounds drained (docs/architecture.md: the budget). */
static void print_text_shim(FILE *out, const struct gw_trace_stat *tr)
{
    const struct gw_shim_stats *shim = &tr->rs.shim;
    if (!shim->rounds)
        return;
    uint64_t span = gw_trace_span(tr);
    fprintf(out, "  shim: writer %" PRIu64 " rounds, CPU %.3f ms", shim->rounds,
            (double)shim->cpu_ns / 1e6);
    if (span)
        fprintf(out, " (%.3f %% of one CPU over the run)", 100.0 * (double)shim->cpu_ns / (double)span);
    fprintf(out, ", late p50 %.3f ms p99 %.3f ms max %.3f ms (flush every %.0f ms)\n",
            (double)gw_shim_late_quantile_ns(shim, 0.5) / 1e6,
            (double)gw_shim_late_quantile_ns(shim, 0.99) / 1e6,
            (double)shim->late_max_ns / 1e6, (double)shim->flush_ns / 1e6);
}

static void print_text_gpu(FILE *out, const struct gw_trace_stat *tr)
{
    const struct gw_file_header *h = &tr->hdr;
    const char *cupti = gw_cupti_status_name(h->cupti_status);
    size_t reason = gw_field_len(h->cupti_reason, sizeof h->cupti_reason);
    fputs(gw_trace_host_only(tr) ? "  host only: no GPU records  cupti " : "  cupti ", out);
    if (cupti)
        fputs(cupti, out);
    else
        fprintf(out, "%" PRId32, h->cupti_status);
    if (reason) {
        fputs(" (", out);
        gw_put_escaped(out, h->cupti_reason, reason);
        fputc(')', out);
    }
    if (!gw_trace_host_only(tr))
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
    for (size_t i = 0; i < tr->devices.count; i++) {
        const struct gw_device_stat *d = &tr->devices.items[i];
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

static void print_text(FILE *out, const struct gw_stats *st, size_t top)
{
    struct gw_stats_totals t = gw_stats_totals(st);
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
        const struct gw_trace_stat *tr = &st->traces[i];
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
                (double)gw_trace_span(tr) / 1e9);
        if (tr->rs.salvaged_chunks)
            fprintf(out, "  the process did not end cleanly: %" PRIu64 " bytes of %" PRIu64
                    " thread%s last records read from %s%s\n",
                    tr->rs.salvaged_bytes, tr->rs.salvaged_chunks,
                    tr->rs.salvaged_chunks == 1 ? "'s" : "s'", tr->path, GW_RINGS_SUFFIX);
        print_text_gpu(out, tr);
        print_text_shim(out, tr);
    }
    fprintf(out, "\n%-32s %10s %8s %14s %12s\n", "entry point", "count", "errors",
            "total_ns", "mean_ns");
    for (size_t i = 0; i < st->apis.count; i++) {
        const struct gw_api_stat *a = &st->apis.items[i];
        fprintf(out, "%-32s %10" PRIu64 " %8" PRIu64 " %14" PRIu64 " %12" PRIu64 "\n", a->name,
                a->count, a->errors, a->total_ns, a->count ? a->total_ns / a->count : 0);
    }
    const struct gw_kernel_table *kt = &st->kernels;
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
    const struct gw_kernel_table *gt = &st->gpu_kernels;
    if (gt->count && top) {
        fprintf(out, "\ntop kernels by GPU time\n%10s %14s %12s  %s\n", "count", "total_ns",
                "mean_ns", "kernel");
        for (size_t i = 0; i < gt->count && i < top; i++) {
            const struct gw_kernel_stat *k = &gt->items[i];
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
            const struct gw_transfer_stat *x = &st->memcpys.items[i];
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
            const struct gw_transfer_stat *x = &st->memsets.items[i];
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

    struct gw_stats st;
    if (gw_stats_init(&st, (size_t)(argc - optind)) != 0) {
        fprintf(stderr, "gpuwatch stats: out of memory\n");
        return GW_EXIT_DAMAGE;
    }
    int rc = GW_EXIT_OK;
    for (size_t i = 0; i < st.ntraces; i++) {
        st.traces[i].path = argv[optind + (int)i];
        read_trace(&st, &st.traces[i]);
        if (st.out_of_memory) {
            fprintf(stderr, "gpuwatch stats: out of memory\n");
            gw_stats_free(&st);
            return GW_EXIT_DAMAGE;
        }
        if (!st.traces[i].readable || st.traces[i].rs.damage_reports)
            rc = rc == GW_EXIT_USAGE ? rc : GW_EXIT_DAMAGE;
        if (!st.traces[i].readable && gw_reader_error_not_trace(st.traces[i].error))
            rc = GW_EXIT_USAGE;  /* a JSON file that is not a trace */
    }
    gw_stats_sort(&st);
    if (json)
        print_json(stdout, &st, top);
    else
        print_text(stdout, &st, top);
    fflush(stdout);
    if (ferror(stdout)) {
        fprintf(stderr, "gpuwatch stats: error writing the output\n");
        rc = GW_EXIT_DAMAGE;
    }
    gw_stats_free(&st);
    return rc;
}
