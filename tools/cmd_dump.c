/*
 * gpuwatch dump TRACE: the header as '#' lines, then one line per event:
 *
 *   time_ns tid kind name dur_ns result details...
 *
 * time_ns is relative to the header's start_ns (absolute with --absolute); kind is call,
 * lost or def for host calls, losses and definitions, and the event kind for the GPU
 * timeline (gpu_kernel, gpu_memcpy, gpu_memset, gpu_lost: time_ns is the GPU start, dur_ns
 * its duration), correlation (untimed) and NVTX (range_push, range_pop, mark, range_start,
 * range_end); name is the exact entry point for calls and the definition kind for defs;
 * '-' fills columns an event does not have. details are key=value pairs, values bare or
 * double-quoted with C escapes. Calls end with call=0x... (their call id); GPU records
 * carry corr=N, and the correlation line with that corr names the call=0x... that issued
 * the work. stream= is our stream id (what calls carry), '-' when no STREAM definition
 * gives the CUPTI stream id (cupti_stream=). Allocating calls show stack=N when they carry
 * a call stack, and the `def stack` line with id=N lists its frames innermost first as
 * frameI="module+0xOFFSET[,symbol+0xOFFSET]" (C++ symbols demangled). Python programs'
 * traces add `def pystack` lines (pyframeI="file:line function", innermost first) and
 * `pysite` lines after the calls they name (calls=FIRST..LAST, their call ids) with the
 * Python stack those calls were made from; `stacksite` lines do the same with native
 * stacks (syncs, copies...). The lines are made by tools/reader/event_text.c and
 * def_text.c. Damage reports go to stderr; the exit status is 1 when there was any, 0
 * otherwise.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "event_text.h"
#include "text_out.h"
#include "trace_reader.h"

#define MAX_DAMAGE_LINES 100

struct dump {
    struct gw_reader *r;
    uint64_t origin;  /* subtracted from timestamps */
    uint64_t damage;
};

static void put_field_line(FILE *out, const char *label, const char *field, size_t size)
{
    fprintf(out, "# %s ", label);
    gw_put_escaped(out, field, gw_field_len(field, size));
    fputc('\n', out);
}

static void put_rank(FILE *out, const char *label, int32_t value)
{
    if (value < 0)
        fprintf(out, " %s unset", label);
    else
        fprintf(out, " %s %" PRId32, label, value);
}

static void put_header(FILE *out, struct gw_reader *r)
{
    const struct gw_file_header *h = gw_reader_header(r);
    fprintf(out, "# gpuwatch trace ");
    gw_put_escaped(out, gw_reader_name(r), strlen(gw_reader_name(r)));
    fprintf(out, " (%" PRIu64 " bytes)\n", gw_reader_file_size(r));
    fprintf(out, "# format v%u min_reader v%u header_size %" PRIu32 " features",
            (unsigned)h->version, (unsigned)h->min_reader_version, h->header_size);
    int any = 0;
    for (unsigned i = 0; i < 32; i++) {
        if (!(h->feature_flags & (1u << i)))
            continue;
        const char *feature = gw_feature_name(i);
        if (feature)
            fprintf(out, "%s%s", any ? "," : " ", feature);
        else
            fprintf(out, "%sbit%u", any ? "," : " ", i);
        any = 1;
    }
    fprintf(out, "%s\n", any ? "" : " none");
    fprintf(out, "# pid %" PRIu32 " ppid %" PRIu32 " host ", h->pid, h->ppid);
    gw_put_escaped(out, h->hostname, gw_field_len(h->hostname, sizeof h->hostname));
    fputc('\n', out);
    put_field_line(out, "cmdline", h->cmdline, sizeof h->cmdline);
    if (h->feature_flags & GW_FEAT_CPU_COUNT)
        fprintf(out, "# cpus online %" PRIu32 " usable %" PRIu32 "\n", h->cpus_online,
                h->cpus_usable);
    fputc('#', out);
    put_rank(out, "rank", h->rank);
    put_rank(out, "local_rank", h->local_rank);
    put_rank(out, "world_size", h->world_size);
    fputc('\n', out);
    fprintf(out, "# device %" PRId32 " name ", h->device_ordinal);
    gw_put_value(out, h->device_name, gw_field_len(h->device_name, sizeof h->device_name));
    fprintf(out, " total_mem %" PRIu64 " free_at_start %" PRIu64 "\n", h->device_total_mem,
            h->device_free_at_start);
    const char *clock = gw_clock_source_name(h->clock_source);
    if (clock)
        fprintf(out, "# clock %s", clock);
    else
        fprintf(out, "# clock %" PRIu32, h->clock_source);
    fprintf(out, " start_ns %" PRIu64 " realtime_minus_trace_ns %" PRId64 "\n", h->start_ns,
            h->realtime_minus_trace_ns);
    const char *cupti = gw_cupti_status_name(h->cupti_status);
    if (cupti)
        fprintf(out, "# cupti %s", cupti);
    else
        fprintf(out, "# cupti %" PRId32, h->cupti_status);
    size_t reason = gw_field_len(h->cupti_reason, sizeof h->cupti_reason);
    if (reason) {
        fputc(' ', out);
        gw_put_escaped(out, h->cupti_reason, reason);
    }
    fputc('\n', out);
    fprintf(out, "# columns: time_ns tid kind name dur_ns result details\n");
}

static void on_damage(const struct gw_damage *damage, void *user)
{
    struct dump *d = user;
    d->damage++;
    if (d->damage <= MAX_DAMAGE_LINES)
        fprintf(stderr, "gpuwatch dump: %s\n", damage->message);
    else if (d->damage == MAX_DAMAGE_LINES + 1)
        fprintf(stderr, "gpuwatch dump: further damage reports are only counted\n");
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch dump [--absolute] [--no-defs] TRACE\n"
            "Prints the trace header as '#' lines, then one line per event:\n"
            "  time_ns tid kind name dur_ns result details...\n"
            "time_ns is relative to the header's start_ns; kind is call, lost or def, or\n"
            "for the GPU timeline gpu_kernel, gpu_memcpy, gpu_memset, gpu_lost (time_ns is\n"
            "the GPU start), correlation, and range_push, range_pop, mark, range_start,\n"
            "range_end for NVTX. Calls end with call=0x... (their call id); a GPU record's\n"
            "corr=N leads to the correlation line naming the call=0x... that issued it.\n"
            "Damage reports go to stderr; exit status 1 when the trace is damaged.\n\n"
            "  -a, --absolute  print absolute trace-clock timestamps\n"
            "  -n, --no-defs   leave out definition lines (strings, shapes, streams...)\n"
            "  -h, --help      this text\n");
}

int gw_cmd_dump(int argc, char **argv)
{
    static const struct option options[] = {
        {"absolute", no_argument, NULL, 'a'},
        {"no-defs", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int absolute = 0, defs = 1, c;
    while ((c = getopt_long(argc, argv, "anh", options, NULL)) != -1) {
        switch (c) {
        case 'a': absolute = 1; break;
        case 'n': defs = 0; break;
        case 'h': help(stdout); return GW_EXIT_OK;
        default: return gw_usage_error("dump", "unknown option");
        }
    }
    if (argc - optind != 1)
        return gw_usage_error("dump", "expected exactly one TRACE, got %d", argc - optind);

    char err[512];
    struct dump d = {0};
    if (gw_reader_open(argv[optind], &d.r, err, sizeof err) != 0) {
        fprintf(stderr, "gpuwatch dump: %s\n", err);
        return gw_reader_error_not_trace(err) ? GW_EXIT_USAGE : GW_EXIT_DAMAGE;
    }
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    d.origin = absolute ? 0 : gw_reader_header(d.r)->start_ns;
    gw_reader_load_defs(d.r);
    gw_reader_on_damage(d.r, on_damage, &d);
    put_header(stdout, d.r);
    struct gw_event ev;
    while (gw_reader_next(d.r, &ev) > 0)
        if (defs || !gw_event_kind_is_def(ev.kind))
            gw_event_text(stdout, d.r, d.origin, &ev);
    const struct gw_reader_stats *s = gw_reader_stats(d.r);
    printf("# end calls %" PRIu64 " errors %" PRIu64 " lost_events %" PRIu64
           " lost_chunks %" PRIu64 " damage %" PRIu64 " damaged_bytes %" PRIu64
           " unknown_records %" PRIu64 " gpu_kernels %" PRIu64 " gpu_memcpys %" PRIu64
           " gpu_memsets %" PRIu64 " gpu_lost %" PRIu64 " correlations %" PRIu64
           " nvtx %" PRIu64 " cpu_samples %" PRIu64 "\n",
           s->calls, s->call_errors, s->lost_events, s->lost_chunks, s->damage_reports,
           s->damaged_bytes, s->unknown_records, s->gpu_kernels, s->gpu_memcpys,
           s->gpu_memsets, s->gpu_lost_events, s->correlations, s->nvtx_records,
           s->cpu_samples);
    fflush(stdout);
    if (s->damage_reports)
        fprintf(stderr, "gpuwatch dump: %s: %" PRIu64 " damage report%s, %" PRIu64
                " bytes not read\n",
                gw_reader_name(d.r), s->damage_reports, s->damage_reports == 1 ? "" : "s",
                s->damaged_bytes);
    int rc = s->damage_reports ? GW_EXIT_DAMAGE : GW_EXIT_OK;
    gw_reader_close(d.r);
    if (ferror(stdout)) {
        fprintf(stderr, "gpuwatch dump: error writing the output\n");
        return GW_EXIT_DAMAGE;
    }
    return rc;
}
