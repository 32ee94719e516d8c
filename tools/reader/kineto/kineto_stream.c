/* A Kineto file as a stream: zlib reads it (gzip'd or plain, gzread passes plain bytes
 * through), yajl parses it chunk by chunk into kineto_events.c's callbacks. Two passes: at
 * open, the metadata above traceEvents and the first host event (the header: rank,
 * device, pid, start); at the first event asked for, the whole file into kineto_sort.c.
 * Damage (a truncated gzip member, JSON cut short or malformed) stops the parse there: what
 * came before is analyzed, and the report names the file and the offset. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "kineto.h"
#include "../trace_reader_internal.h"

#define KIN_READ_BYTES (256u << 10)

/* Where the parse is, for messages: the compressed offset, and the JSON's own. */
static void where(struct kineto *k, yajl_handle y, char *out, size_t cap)
{
    uint64_t json = k->bytes_in + (y ? yajl_get_bytes_consumed(y) : 0);
    if (k->gzip)
        snprintf(out, cap, "offset %lld (byte %llu of the uncompressed JSON)",
                 (long long)gzoffset(k->gz), (unsigned long long)json);
    else
        snprintf(out, cap, "offset %llu", (unsigned long long)json);
}

/* One pass over the file. 0 when it reached the end (or the header scan had enough); -1 on
 * damage, with k->error set. */
static int parse(struct gw_reader *r, struct kineto *k, int header_only)
{
    k->header_only = header_only;
    k->stop = 0;
    k->depth = 0;
    k->section = 0;
    k->bytes_in = 0;
    k->error[0] = 0;
    if (gzrewind(k->gz) != 0) {
        snprintf(k->error, sizeof k->error, "%s: offset 0: cannot read the file", k->path);
        return -1;
    }
    yajl_handle y = yajl_alloc(gw_kineto_callbacks, NULL, r);
    if (!y) {
        snprintf(k->error, sizeof k->error, "%s: out of memory", k->path);
        return -1;
    }
    unsigned char *buf = malloc(KIN_READ_BYTES);
    int rc = 0;
    char at[128];
    for (;;) {
        int n = buf ? gzread(k->gz, buf, KIN_READ_BYTES) : -1;
        if (n < 0 || (n == 0 && !gzeof(k->gz))) {
            int code = 0;
            const char *why = buf ? gzerror(k->gz, &code) : "out of memory";
            where(k, NULL, at, sizeof at);
            snprintf(k->error, sizeof k->error, "%s: %s: expected more gzip data, found %s",
                     k->path, at, why && *why ? why : "the end of the file");
            rc = -1;
            break;
        }
        if (n == 0) {
            int code = Z_OK;
            const char *why = k->gzip ? gzerror(k->gz, &code) : NULL;
            if (why && why[0] == '<' && strstr(why, ">: "))  /* zlib's "<fd:5>: " */
                why = strstr(why, ">: ") + 3;
            if (code != Z_OK) {  /* a gzip member cut short */
                where(k, NULL, at, sizeof at);
                snprintf(k->error, sizeof k->error,
                         "%s: %s: expected more gzip data, found %s", k->path, at,
                         why && *why ? why : "the end of the file");
                rc = -1;
            } else if (yajl_complete_parse(y) != yajl_status_ok) {
                where(k, NULL, at, sizeof at);
                snprintf(k->error, sizeof k->error,
                         "%s: %s: expected the rest of the JSON, found the end of the file",
                         k->path, at);
                rc = -1;
            }
            break;
        }
        yajl_status st = yajl_parse(y, buf, (size_t)n);
        if (st == yajl_status_client_canceled)
            break;  /* the header scan has what it needs */
        if (st != yajl_status_ok) {
            where(k, y, at, sizeof at);
            unsigned char *msg = yajl_get_error(y, 0, NULL, 0);
            snprintf(k->error, sizeof k->error, "%s: %s: expected JSON, %s", k->path, at,
                     msg ? (const char *)msg : "parse error");
            if (msg)
                yajl_free_error(y, msg);
            rc = -1;
            break;
        }
        k->bytes_in += (uint64_t)n;
    }
    free(buf);
    yajl_free(y);
    return rc;
}

static int fail(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return -1;
}

/* The file header a .gwt would have had. */
static void make_header(struct gw_reader *r, const struct kineto *k)
{
    struct gw_file_header *h = &r->hdr;
    memset(h, 0, sizeof *h);
    memcpy(h->magic, GW_READER_KINETO_MAGIC, 8);
    h->version = GW_FORMAT_VERSION;
    h->min_reader_version = 1;
    h->header_size = GW_FILE_HEADER_SIZE;
    h->feature_flags = GW_FEAT_HOST_CALLS | GW_FEAT_GPU_ACTIVITY | GW_FEAT_NVTX;
    h->cupti_status = GW_CUPTI_ACTIVE;
    h->pid = k->host_pid ? k->host_pid : (uint32_t)(k->rank >= 0 ? k->rank + 1 : 1);
    h->rank = k->rank;
    h->local_rank = -1;
    h->world_size = k->world_size;
    h->device_ordinal = k->dev_has ? k->device_ordinal : -1;
    h->start_ns = k->first_ts;
    h->device_total_mem = k->device_total_mem;
    memcpy(h->device_name, k->device_name, sizeof h->device_name);
    snprintf(h->cmdline, sizeof h->cmdline, "PyTorch profiler trace %s", k->path);
    snprintf(h->cupti_reason, sizeof h->cupti_reason, "from a Kineto trace");
}

int gw_kineto_open(struct gw_reader *r, const char *path, char *err, size_t errlen)
{
    struct kineto *k = calloc(1, sizeof *k);
    if (!k)
        return fail(err, errlen, "out of memory");
    r->kineto = k;
    k->path = strdup(path);
    k->rank = -1;
    k->world_size = -1;
    unsigned char magic[2] = {0};
    k->gzip = pread(r->fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    int fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 0);
    k->gz = fd >= 0 ? gzdopen(fd, "rb") : NULL;
    if (!k->path || !k->gz) {
        if (fd >= 0 && !k->gz)
            close(fd);
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    gzbuffer(k->gz, KIN_READ_BYTES);
    if (parse(r, k, 1) != 0 && !k->is_kineto) {
        snprintf(err, errlen, "%s", k->error);
        return -1;
    }
    if (!k->is_kineto) {
        snprintf(err, errlen, "%s: offset 0: %s: expected a top-level object holding "
                 "\"traceEvents\" (a PyTorch profiler trace) or a gpuwatch trace",
                 path, GW_KINETO_NOT_TRACE);
        return -1;
    }
    make_header(r, k);
    return 0;
}

/* The whole file into the sort, once per pass. */
static void load(struct gw_reader *r, struct kineto *k)
{
    if (k->parsed)
        return;
    k->parsed = 1;
    k->failed = 0;
    k->events = 0;
    gw_map_clear(&k->call_seq);
    gw_map_clear(&k->joins);
    gw_map_clear(&k->stream_alias);
    k->njoin = 0;
    kin_py_reset(k);
    gw_map_clear(&k->mem_devices);
    k->mem_blocks = 0;
    kin_sort_free(&k->sort);
    if (parse(r, k, 0) != 0 || k->failed)
        gw_reader_report(r, GW_DAMAGE_RECORD, k->bytes_in, 0, r->file_size, 0, "%s",
                         k->error + strlen(k->path) + 2);
    if (kin_sort_finish(&k->sort) != 0)
        gw_reader_report(r, GW_DAMAGE_IO, 0, 0, r->file_size, 0,
                         "offset 0: cannot merge the sorted events (temporary space)");
    k->def_at = 0;
}

/* Definitions first (strings, shapes, streams, devices: all known once the file is read),
 * then the records in time order. */
static int next_def(struct gw_reader *r, struct kineto *k, struct gw_event *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->family = -1;
    for (;;) {
        size_t i = k->def_at++;
        if (i < r->nstrings) {
            ev->kind = GW_EV_STRING;
            ev->u.string.id = i + 1;
            ev->u.string.text = r->strings[i].text;
            ev->u.string.len = r->strings[i].len;
            return 1;
        }
        i -= r->nstrings;
        if (i < r->nshapes) {
            ev->kind = GW_EV_SHAPE;
            ev->u.shape = r->shapes[i];
            return 1;
        }
        i -= r->nshapes;
        if (i < r->ndevices) {
            ev->kind = GW_EV_DEVICE;
            ev->u.device = r->devices[i];
            return 1;
        }
        i -= r->ndevices;
        if (i == 0 && k->py_frames) {
            /* the process ran Python and its stacks are known (python_function events):
             * a call outside every frame was made without Python frames. The profiler
             * follows calls made with the GIL released: its frames are still open. */
            ev->kind = GW_EV_PYTHON;
            ev->u.python.follows_releases = 1;
            return 1;
        }
        i -= k->py_frames ? 1 : 0;
        if (i < k->streams.cap) {
            if (!k->streams.used || !k->streams.used[i])
                continue;
            uint64_t s = k->streams.keys[i];
            ev->kind = GW_EV_STREAM;
            ev->u.stream.id = ev->u.stream.handle = ev->u.stream.cupti_stream_id = s;
            return 1;
        }
        k->def_at = SIZE_MAX;
        return 0;
    }
}

static void count(struct gw_reader *r, const struct gw_event *ev)
{
    struct gw_reader_stats *s = &r->stats;
    switch (ev->kind) {
    case GW_EV_CALL: s->calls++; break;
    case GW_EV_GPU_KERNEL: s->gpu_kernels++; break;
    case GW_EV_GPU_MEMCPY: s->gpu_memcpys++; break;
    case GW_EV_GPU_MEMSET: s->gpu_memsets++; break;
    case GW_EV_CORRELATION: s->correlations++; return;
    case GW_EV_PYSITE: return;
    case GW_EV_MEM_BLOCK: break;
    case GW_EV_RANGE_PUSH: case GW_EV_RANGE_POP: case GW_EV_RANGE_START:
    case GW_EV_RANGE_END: s->nvtx_records++; break;
    default: s->definitions++; return;
    }
    if (!s->first_ts_ns || ev->ts_ns < s->first_ts_ns)
        s->first_ts_ns = ev->ts_ns;
    if (ev->ts_ns + ev->dur_ns > s->last_ts_ns)
        s->last_ts_ns = ev->ts_ns + ev->dur_ns;
}

int gw_kineto_next(struct gw_reader *r, struct gw_event *ev)
{
    struct kineto *k = r->kineto;
    load(r, k);
    if (k->def_at != SIZE_MAX && next_def(r, k, ev)) {
        count(r, ev);
        return 1;
    }
    if (r->defs_only)
        return 0;
    if (kin_py_pending(k, ev)) {  /* a call after its stack's definition, its PYSITE */
        count(r, ev);
        return 1;
    }
    struct kin_rec rec;
    do {
        if (!kin_sort_next(&k->sort, &rec))
            return 0;
    } while (kin_py_record(r, k, &rec));
    kin_fill_event(r, k, &rec, ev);
    if (ev->kind == GW_EV_CALL)
        kin_py_call(r, k, ev);
    else if (ev->kind == GW_EV_MEM_BLOCK)
        kin_memory_block(k, ev);
    count(r, ev);
    return 1;
}

void gw_kineto_rewind(struct gw_reader *r)
{
    if (r->kineto)
        r->kineto->parsed = 0;  /* read again on the next event: the sort is spent */
}

void gw_kineto_load_defs(struct gw_reader *r)
{
    load(r, r->kineto);  /* (kept: the next event comes from this parse) */
}

void gw_kineto_close(struct gw_reader *r)
{
    struct kineto *k = r->kineto;
    if (!k)
        return;
    if (k->gz)
        gzclose(k->gz);
    kin_sort_free(&k->sort);
    gw_map_free(&k->string_ids);
    gw_map_free(&k->streams);
    gw_map_free(&k->devices);
    gw_map_free(&k->call_seq);
    gw_map_free(&k->joins);
    gw_map_free(&k->stream_alias);
    gw_map_free(&k->mem_devices);
    kin_py_free(k);
    free(k->join);
    free(k->ev.name);
    free(k->path);
    free(k);
    r->kineto = NULL;
}
