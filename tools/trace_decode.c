/*
 * The reader's record decoding: one record of an intact chunk's payload into struct
 * gw_event, with the delta time and call number it carries, and a damage report for a
 * record shorter than its type requires.
 */
#include "trace_reader_internal.h"

#include <inttypes.h>
#include <string.h>

#include "gpuwatch/record_walk.h"
#include "gpuwatch/varint.h"

/* ---- record decoding ---- */

struct cursor {
    const uint8_t *p;
    size_t n;
};

static inline __attribute__((always_inline)) int get(struct cursor *c, uint64_t *value)
{
    if (c->n && c->p[0] < 0x80) {  /* most words are one byte */
        *value = c->p[0];
        c->p++;
        c->n--;
        return 0;
    }
    size_t k = gw_get_uvarint(c->p, c->n, value);
    if (k == 0)
        return -1;
    c->p += k;
    c->n -= k;
    return 0;
}

/* Reads up to n varints; returns how many were read before the body ended. */
static unsigned get_words(struct cursor *c, uint64_t *w, unsigned n)
{
    unsigned i = 0;
    while (i < n && get(c, &w[i]) == 0)
        i++;
    for (unsigned j = i; j < n; j++)
        w[j] = 0;
    return i;
}

static const char *record_name(uint8_t type)
{
    switch (type) {
    case GW_REC_CALL: return "CALL";
    case GW_REC_CALL_ERR: return "CALL_ERR";
    case GW_REC_LOST: return "LOST";
    case GW_REC_GPU_KERNEL: return "GPU_KERNEL";
    case GW_REC_GPU_MEMCPY: return "GPU_MEMCPY";
    case GW_REC_GPU_MEMSET: return "GPU_MEMSET";
    case GW_REC_GPU_LOST: return "GPU_LOST";
    case GW_REC_RANGE_PUSH: return "RANGE_PUSH";
    case GW_REC_RANGE_POP: return "RANGE_POP";
    case GW_REC_MARK: return "MARK";
    case GW_REC_RANGE_START: return "RANGE_START";
    case GW_REC_RANGE_END: return "RANGE_END";
    case GW_REC_CORRELATION: return "CORRELATION";
    case GW_REC_STRING: return "STRING";
    case GW_REC_SHAPE: return "SHAPE";
    case GW_REC_STREAM: return "STREAM";
    case GW_REC_DEVICE: return "DEVICE";
    case GW_REC_CLOCK: return "CLOCK";
    case GW_REC_THREAD: return "THREAD";
    case GW_REC_STACK: return "STACK";
    }
    return "unknown";
}

static void report_short(struct gw_reader *r, uint64_t off, const char *what, unsigned have,
                         unsigned want, size_t body_len)
{
    gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                     "offset %" PRIu64 ": expected %u varints in the %zu-byte body of a %s "
                     "record, found %u",
                     off, want, body_len, what, have);
}

/* Payload words each family carries (LAUNCH: one more for graph and host-function
 * launches). */
static unsigned family_words(int family, unsigned api_id)
{
    switch (family) {
    case GW_FAM_PLAIN: return 0;
    case GW_FAM_PROC: return 4;
    case GW_FAM_CTX: return 2;
    case GW_FAM_MEMINFO: return 2;
    case GW_FAM_ALLOC: return 4;
    case GW_FAM_FREE: return 2;
    case GW_FAM_VMM: return 3;
    case GW_FAM_HOSTMEM: return 3;
    case GW_FAM_LAUNCH:
        switch (api_id) {
        case GW_API_cuGraphLaunch: case GW_API_cuGraphLaunch_ptsz:
        case GW_API_cuLaunchHostFunc: case GW_API_cuLaunchHostFunc_ptsz:
            return 3;
        }
        return 2;
    case GW_FAM_COPY: return 5;
    case GW_FAM_SET: return 3;
    case GW_FAM_SYNC: return 2;
    case GW_FAM_NAME: return 2;
    }
    return 0;
}

static void fill_family(struct gw_event *ev)
{
    const uint64_t *w = ev->words;
    switch (ev->family) {
    case GW_FAM_PROC:
        ev->u.proc.symbol_id = w[0], ev->u.proc.cuda_version = w[1];
        ev->u.proc.flags = w[2], ev->u.proc.outcome = w[3];
        break;
    case GW_FAM_CTX:
        ev->u.ctx.device = w[0], ev->u.ctx.ctx = w[1];
        break;
    case GW_FAM_MEMINFO:
        ev->u.meminfo.free_bytes = w[0], ev->u.meminfo.total_bytes = w[1];
        break;
    case GW_FAM_ALLOC:
        ev->u.alloc.ptr = w[0], ev->u.alloc.bytes = w[1];
        ev->u.alloc.stream_id = w[2], ev->u.alloc.aux = w[3];
        ev->u.alloc.stack_id = w[4];  /* optional (trace_format.h) */
        break;
    case GW_FAM_FREE:
        ev->u.memfree.ptr = w[0], ev->u.memfree.stream_id = w[1];
        break;
    case GW_FAM_VMM:
        switch (ev->api_id) {
        case GW_API_cuMemAddressReserve:
            ev->u.vmm.ptr = w[0], ev->u.vmm.size = w[1], ev->u.vmm.alignment = w[2];
            break;
        case GW_API_cuMemCreate:
            ev->u.vmm.handle = w[0], ev->u.vmm.size = w[1], ev->u.vmm.device = w[2];
            ev->u.vmm.stack_id = w[3];  /* optional */
            break;
        case GW_API_cuMemRelease:
            ev->u.vmm.handle = w[0];
            break;
        case GW_API_cuMemMap:
            ev->u.vmm.ptr = w[0], ev->u.vmm.size = w[1], ev->u.vmm.handle = w[2];
            break;
        default: /* cuMemAddressFree, cuMemUnmap */
            ev->u.vmm.ptr = w[0], ev->u.vmm.size = w[1];
            break;
        }
        break;
    case GW_FAM_HOSTMEM:
        ev->u.hostmem.ptr = w[0], ev->u.hostmem.bytes = w[1], ev->u.hostmem.flags = w[2];
        ev->u.hostmem.stack_id = w[3];  /* optional: the allocating calls only */
        break;
    case GW_FAM_LAUNCH:
        ev->u.launch.shape_id = w[0], ev->u.launch.stream_id = w[1];
        ev->u.launch.handle = w[2];
        break;
    case GW_FAM_COPY:
        ev->u.copy.bytes = w[0];
        ev->u.copy.dir = (unsigned)(w[1] & 0xF);
        ev->u.copy.host_kind = (unsigned)((w[1] >> 4) & 0xF);
        ev->u.copy.stream_id = w[2];
        if (ev->api_id >= GW_API_cuMemcpyBatchAsync &&
            ev->api_id <= GW_API_cuMemcpyBatchAsync_v2_ptsz) {
            ev->u.copy.batch = 1;
            ev->u.copy.count = w[3];
        } else {
            ev->u.copy.count = 1;
            ev->u.copy.dst = w[3], ev->u.copy.src = w[4];
        }
        break;
    case GW_FAM_SET:
        ev->u.set.ptr = w[0], ev->u.set.bytes = w[1], ev->u.set.stream_id = w[2];
        break;
    case GW_FAM_SYNC:
        ev->u.sync.stream_id = w[0], ev->u.sync.event = w[1];
        break;
    case GW_FAM_NAME:
        ev->u.name.handle = w[0], ev->u.name.string_id = w[1];
        break;
    }
}

static void note_time(struct gw_reader *r, uint64_t ts, uint64_t end)
{
    if (end < ts)
        end = UINT64_MAX;  /* a duration that wraps: the record's own problem */
    if (r->stats.first_ts_ns == 0 || ts < r->stats.first_ts_ns)
        r->stats.first_ts_ns = ts;
    if (end > r->stats.last_ts_ns)
        r->stats.last_ts_ns = end;
}

static int decode_call(struct gw_reader *r, uint8_t type, struct cursor *c, uint64_t off,
                       size_t body_len, uint64_t number, struct gw_event *ev)
{
    uint64_t api, dur, result = 0;
    unsigned have = 1 + (get(c, &api) == 0);
    have += have == 2 && get(c, &dur) == 0;
    have += have == 3 && type == GW_REC_CALL_ERR && get(c, &result) == 0;
    unsigned want = type == GW_REC_CALL_ERR ? 4 : 3;
    if (have < want) {
        report_short(r, off, record_name(type), have, want, body_len);
        return 0;
    }
    /* The hottest path of every tool: set each field rather than clearing ~240 bytes (a
     * `rep stos` that was a third of the reader's time). */
    static const __typeof__(ev->u) no_payload;
    static const uint64_t no_words[GW_EVENT_MAX_WORDS]; /* missing words read as 0 */
    ev->u = no_payload;
    memcpy(ev->words, no_words, sizeof no_words);
    ev->nwords = 0;
    ev->kind = GW_EV_CALL;
    ev->tid = r->ch.tid;
    ev->ts_ns = r->ts;
    ev->dur_ns = dur;
    ev->api_id = api > UINT32_MAX ? UINT32_MAX : (uint32_t)api;
    ev->result = (uint32_t)result;
    ev->family = gw_api_family(ev->api_id);
    ev->offset = off;
    ev->call_id = (r->call_serial ? r->call_serial : (uint64_t)r->ch.tid) << 32 |
                  (number & 0xFFFFFFFFu);
    ev->call_id_unsure = r->call_unsure;
    r->stats.calls_unsure += r->call_unsure;
    uint64_t word;
    while (c->n > 0) {
        if (get(c, &word) != 0) {
            gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                             "offset %" PRIu64 ": expected a varint for payload word %u of a "
                             "%s record, found %zu cut bytes",
                             off, ev->nwords + 1, record_name(type), c->n);
            break;
        }
        if (ev->nwords < GW_EVENT_MAX_WORDS)
            ev->words[ev->nwords] = word;
        ev->nwords++;
    }
    if (ev->nwords > GW_EVENT_MAX_WORDS)
        ev->nwords = GW_EVENT_MAX_WORDS;
    r->stats.calls++;
    if (type == GW_REC_CALL_ERR)
        r->stats.call_errors++;
    note_time(r, ev->ts_ns, ev->ts_ns + dur);
    if (ev->family >= 0) {
        unsigned words = family_words(ev->family, ev->api_id);
        if (ev->nwords < words)
            gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                             "offset %" PRIu64 ": expected %u payload words in a %s record, "
                             "found %u (the missing ones read as 0)",
                             off, words, gw_api_name(ev->api_id), ev->nwords);
        fill_family(ev);
    }
    return !r->defs_only;
}

static int decode_def(struct gw_reader *r, uint8_t type, struct cursor *c, uint64_t off,
                      size_t body_len, struct gw_event *ev)
{
    /* words required, and words read (the optional ones after them are 0 when absent:
     * SHAPE's registers and static shared memory, STREAM's CUPTI stream id) */
    static const unsigned want[] = {
        [GW_REC_STRING - GW_REC_STRING] = 1, [GW_REC_SHAPE - GW_REC_STRING] = 10,
        [GW_REC_STREAM - GW_REC_STRING] = 2, [GW_REC_DEVICE - GW_REC_STRING] = 4,
        [GW_REC_CLOCK - GW_REC_STRING] = 3,  [GW_REC_THREAD - GW_REC_STRING] = 2,
    };
    static const unsigned most[] = {
        [GW_REC_STRING - GW_REC_STRING] = 1, [GW_REC_SHAPE - GW_REC_STRING] = 12,
        [GW_REC_STREAM - GW_REC_STRING] = 3, [GW_REC_DEVICE - GW_REC_STRING] = 4,
        [GW_REC_CLOCK - GW_REC_STRING] = 3,  [GW_REC_THREAD - GW_REC_STRING] = 2,
    };
    uint64_t w[12];
    unsigned n = want[type - GW_REC_STRING];
    unsigned have = get_words(c, w, most[type - GW_REC_STRING]);
    if (have < n) {
        report_short(r, off, record_name(type), have, n, body_len);
        return 0;
    }
    memset(ev, 0, sizeof *ev);
    ev->tid = r->ch.tid;
    ev->offset = off;
    ev->family = -1;
    r->stats.definitions++;
    switch (type) {
    case GW_REC_STRING:
        ev->kind = GW_EV_STRING;
        ev->u.string.id = w[0];
        ev->u.string.text = gw_tables_add_string(r, w[0], c->p, c->n);
        ev->u.string.len = ev->u.string.text ? c->n : 0;
        if (!ev->u.string.text)
            ev->u.string.text = "";
        break;
    case GW_REC_SHAPE:
        ev->kind = GW_EV_SHAPE;
        ev->u.shape = (struct gw_shape){
            .id = w[0], .name_id = w[1], .func = w[2],
            .grid = {w[3], w[4], w[5]}, .block = {w[6], w[7], w[8]}, .shared_mem = w[9],
            .registers = w[10], .static_shared_mem = w[11],
        };
        gw_tables_add_shape(r, &ev->u.shape);
        break;
    case GW_REC_STREAM:
        ev->kind = GW_EV_STREAM;
        ev->u.stream.id = w[0], ev->u.stream.handle = w[1];
        ev->u.stream.cupti_stream_id = w[2];
        gw_tables_add_stream(r, w[0], w[1], w[2]);
        break;
    case GW_REC_DEVICE:
        ev->kind = GW_EV_DEVICE;
        ev->u.device = (struct gw_device_def){w[0], w[1], w[2], w[3]};
        gw_tables_add_device(r, &ev->u.device);
        break;
    case GW_REC_CLOCK:
        ev->kind = GW_EV_CLOCK;
        ev->u.clock = (struct gw_clock_point){w[0], w[1], w[2]};
        gw_tables_add_clock(r, &ev->u.clock);
        break;
    case GW_REC_THREAD:
        ev->kind = GW_EV_THREAD;
        ev->u.thread.tid = w[0], ev->u.thread.name_id = w[1];
        gw_map_put(&r->threads, w[0], w[1]);
        break;
    }
    return !r->defs_only;
}

/* Words after dt of the GPU and NVTX records: `full` in a v1 body, `need` without which
 * the record is dropped. Between the two, the missing words read as 0 and the record is
 * reported (a v1 writer writes them all); words after `full` are a newer writer's and are
 * ignored. */
struct timed_spec {
    enum gw_event_kind kind;
    unsigned need, full;
};

static const struct timed_spec *timed_spec(uint8_t type)
{
    static const struct timed_spec specs[] = {
        [GW_REC_GPU_KERNEL - GW_REC_GPU_KERNEL] = {GW_EV_GPU_KERNEL, 1, 6},
        [GW_REC_GPU_MEMCPY - GW_REC_GPU_KERNEL] = {GW_EV_GPU_MEMCPY, 1, 9},
        [GW_REC_GPU_MEMSET - GW_REC_GPU_KERNEL] = {GW_EV_GPU_MEMSET, 1, 7},
        [GW_REC_GPU_LOST - GW_REC_GPU_KERNEL] = {GW_EV_GPU_LOST, 1, 1},
        [GW_REC_RANGE_PUSH - GW_REC_GPU_KERNEL] = {GW_EV_RANGE_PUSH, 0, 2},
        [GW_REC_RANGE_POP - GW_REC_GPU_KERNEL] = {GW_EV_RANGE_POP, 0, 1},
        [GW_REC_MARK - GW_REC_GPU_KERNEL] = {GW_EV_MARK, 0, 2},
        [GW_REC_RANGE_START - GW_REC_GPU_KERNEL] = {GW_EV_RANGE_START, 3, 3},
        [GW_REC_RANGE_END - GW_REC_GPU_KERNEL] = {GW_EV_RANGE_END, 1, 1},
    };
    if (type < GW_REC_GPU_KERNEL || type > GW_REC_RANGE_END)
        return NULL;
    const struct timed_spec *spec = &specs[type - GW_REC_GPU_KERNEL];
    return spec->kind ? spec : NULL;
}

static unsigned small(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
}

/* GPU and NVTX records, after their dt. */
static int decode_timed(struct gw_reader *r, uint8_t type, const struct timed_spec *spec,
                        struct cursor *c, uint64_t off, size_t body_len, struct gw_event *ev)
{
    uint64_t w[9];
    unsigned have = get_words(c, w, spec->full);
    if (have < spec->need) {
        report_short(r, off, record_name(type), 1 + have, 1 + spec->need, body_len);
        return 0;
    }
    if (have < spec->full)
        gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                         "offset %" PRIu64 ": expected %u varints in the %zu-byte body of a "
                         "%s record, found %u (the missing ones read as 0)",
                         off, 1 + spec->full, body_len, record_name(type), 1 + have);
    memset(ev, 0, sizeof *ev);
    ev->kind = spec->kind;
    ev->tid = r->ch.tid;
    ev->ts_ns = r->ts;
    ev->family = -1;
    ev->offset = off;
    switch (type) {
    case GW_REC_GPU_KERNEL:
        ev->dur_ns = w[0];
        ev->u.gpu_kernel.correlation_id = w[1], ev->u.gpu_kernel.device = w[2];
        ev->u.gpu_kernel.stream_id = w[3], ev->u.gpu_kernel.shape_id = w[4];
        ev->u.gpu_kernel.graph_id = w[5];
        r->stats.gpu_kernels++;
        break;
    case GW_REC_GPU_MEMCPY:
        ev->dur_ns = w[0];
        ev->u.gpu_memcpy.correlation_id = w[1], ev->u.gpu_memcpy.device = w[2];
        ev->u.gpu_memcpy.stream_id = w[3], ev->u.gpu_memcpy.bytes = w[4];
        ev->u.gpu_memcpy.copy_kind = small(w[5]), ev->u.gpu_memcpy.src_kind = small(w[6]);
        ev->u.gpu_memcpy.dst_kind = small(w[7]), ev->u.gpu_memcpy.graph_id = w[8];
        r->stats.gpu_memcpys++;
        break;
    case GW_REC_GPU_MEMSET:
        ev->dur_ns = w[0];
        ev->u.gpu_memset.correlation_id = w[1], ev->u.gpu_memset.device = w[2];
        ev->u.gpu_memset.stream_id = w[3], ev->u.gpu_memset.bytes = w[4];
        ev->u.gpu_memset.memory_kind = small(w[5]), ev->u.gpu_memset.graph_id = w[6];
        r->stats.gpu_memsets++;
        break;
    case GW_REC_GPU_LOST:
        ev->u.gpu_lost.count = w[0];
        r->stats.gpu_lost_records++;
        r->stats.gpu_lost_events += w[0];
        break;
    case GW_REC_RANGE_PUSH:
    case GW_REC_MARK:
        ev->u.nvtx.domain_id = w[0], ev->u.nvtx.name_id = w[1];
        r->stats.nvtx_records++;
        break;
    case GW_REC_RANGE_POP:
        ev->u.nvtx.domain_id = w[0];
        r->stats.nvtx_records++;
        break;
    case GW_REC_RANGE_START:
        ev->u.nvtx.domain_id = w[0], ev->u.nvtx.name_id = w[1], ev->u.nvtx.range_id = w[2];
        r->stats.nvtx_records++;
        break;
    case GW_REC_RANGE_END:
        ev->u.nvtx.range_id = w[0];
        r->stats.nvtx_records++;
        break;
    }
    note_time(r, ev->ts_ns, ev->ts_ns + ev->dur_ns);
    return !r->defs_only;
}

static int decode_correlation(struct gw_reader *r, struct cursor *c, uint64_t off,
                              size_t body_len, struct gw_event *ev)
{
    uint64_t w[2];
    unsigned have = get_words(c, w, 2);
    if (have < 2) {
        report_short(r, off, "CORRELATION", have, 2, body_len);
        return 0;
    }
    memset(ev, 0, sizeof *ev);
    ev->kind = GW_EV_CORRELATION;
    ev->tid = r->ch.tid;
    ev->family = -1;
    ev->offset = off;
    ev->u.correlation.correlation_id = w[0];
    ev->u.correlation.call_id = w[1];
    r->stats.correlations++;
    return !r->defs_only;
}

/* Decodes one record; returns 1 when it produced an event for the caller. */
int gw_decode_record(struct gw_reader *r, const struct gw_record_view *rec, uint64_t off,
                         struct gw_event *ev)
{
    struct cursor c = {rec->body, rec->body_len};
    if (rec->type >= 1 && rec->type <= GW_REC_TIMED_MAX) {
        int is_call = rec->type == GW_REC_CALL || rec->type == GW_REC_CALL_ERR;
        /* every CALL record has its number, even one that cannot be decoded */
        uint64_t number = is_call ? r->call_next++ : 0;
        uint64_t dt;
        if (get(&c, &dt) != 0) {
            report_short(r, off, record_name(rec->type), 0, 1, rec->body_len);
            if (rec->type == GW_REC_LOST)
                r->call_unsure = 1;
            return 0;
        }
        r->ts += (uint64_t)gw_unzigzag(dt);
        if (is_call)
            return decode_call(r, rec->type, &c, off, rec->body_len, number, ev);
        if (rec->type == GW_REC_LOST) {
            uint64_t count, calls;
            if (get(&c, &count) != 0) {
                report_short(r, off, "LOST", 1, 2, rec->body_len);
                r->call_unsure = 1;  /* calls were dropped, how many is not known */
                return 0;
            }
            if (get(&c, &calls) != 0)  /* optional: all of them were calls */
                calls = count;
            r->call_next += calls;
            memset(ev, 0, sizeof *ev);
            ev->kind = GW_EV_LOST;
            ev->tid = r->ch.tid;
            ev->ts_ns = r->ts;
            ev->family = -1;
            ev->offset = off;
            ev->u.lost.count = count;
            ev->u.lost.calls = calls;
            r->stats.lost_records++;
            r->stats.lost_events += count;
            r->stats.lost_calls += calls;
            note_time(r, ev->ts_ns, ev->ts_ns);
            return !r->defs_only;
        }
        const struct timed_spec *spec = timed_spec(rec->type);
        if (spec)
            return decode_timed(r, rec->type, spec, &c, off, rec->body_len, ev);
        r->stats.unknown_records++;
        return 0;
    }
    if (rec->type >= GW_REC_STRING && rec->type <= GW_REC_THREAD)
        return decode_def(r, rec->type, &c, off, rec->body_len, ev);
    if (rec->type == GW_REC_CORRELATION)
        return decode_correlation(r, &c, off, rec->body_len, ev);
    if (rec->type == GW_REC_STACK)
        return gw_stacks_decode(r, rec->body, rec->body_len, off, ev);
    if (rec->type == GW_REC_CALL_BASE) {
        /* The writer's own numbering: whatever was lost before, numbers are sure again. */
        uint64_t w[2];
        if (get_words(&c, w, 2) < 2) {
            report_short(r, off, "CALL_BASE", 0, 2, rec->body_len);
            return 0;
        }
        r->call_serial = w[0];
        r->call_next = w[1];
        r->call_unsure = 0;
        return 0;
    }
    r->stats.unknown_records++;
    return 0;
}
