/*
 * The reader's event loop (gw_reader_next) and record decoding: one record of an intact
 * chunk's payload into struct gw_event, with the delta time and call number it carries,
 * and a damage report for a record shorter than its type requires.
 */
#include "trace_reader_internal.h"
#include "kineto/kineto.h"

#include <inttypes.h>
#include <string.h>

#include "gpuwatch/record_walk.h"
#include "gpuwatch/varint.h"

/* ---- record decoding ---- */

/* memset(p, 0, n) for a constant n, as 16-byte stores written out: GCC expands a memset of
 * more than 64 bytes into a `rep stos` (slow to start, and ~20 instructions where the
 * pieces take one store per 16 bytes), and merges adjacent memsets (ev->words and ev->u)
 * into one such. */
typedef uint64_t zero_pair __attribute__((vector_size(16), aligned(8), may_alias));

static inline __attribute__((always_inline)) void clear_bytes(void *p, size_t n)
{
    char *b = p;
    zero_pair z = {0, 0};
    /* keeps it stores: z is not known to be 0 after this, so the stores are not a memset
     * for GCC to make, and each is at a constant offset from p (an empty asm on the
     * pointer instead cost an add per store) */
    __asm__("" : "+x"(z));
#pragma GCC unroll 16
    for (size_t i = 0; i < n / 16; i++)
        *(zero_pair *)(b + 16 * i) = z;
    b += n / 16 * 16;
    if (n % 16 >= 8) {
        memset(b, 0, 8);
        b += 8;
    }
    memset(b, 0, n % 8);
}

/* An event of the given kind with every other field 0 (family -1): field by field, as a
 * memset of the whole event would be a `rep stos` (see clear_bytes). */
static inline void start_event(struct gw_event *ev, enum gw_event_kind kind, uint32_t tid,
                               uint64_t ts, uint64_t off)
{
    ev->kind = kind;
    ev->tid = tid;
    ev->ts_ns = ts;
    ev->dur_ns = 0;
    ev->api_id = 0;
    ev->result = 0;
    ev->family = -1;
    ev->offset = off;
    ev->nwords = 0;
    memset(ev->words, 0, sizeof ev->words);
    clear_bytes(&ev->u, sizeof ev->u);
    ev->call_id = 0;
    ev->call_id_unsure = 0;
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
    case GW_REC_GPU_WINDOW: return "GPU_WINDOW";
    case GW_REC_RANGE_PUSH: return "RANGE_PUSH";
    case GW_REC_RANGE_POP: return "RANGE_POP";
    case GW_REC_MARK: return "MARK";
    case GW_REC_RANGE_START: return "RANGE_START";
    case GW_REC_RANGE_END: return "RANGE_END";
    case GW_REC_CPU_THREAD: return "CPU_THREAD";
    case GW_REC_CPU_PROC: return "CPU_PROC";
    case GW_REC_CORRELATION: return "CORRELATION";
    case GW_REC_STRING: return "STRING";
    case GW_REC_SHAPE: return "SHAPE";
    case GW_REC_STREAM: return "STREAM";
    case GW_REC_DEVICE: return "DEVICE";
    case GW_REC_CLOCK: return "CLOCK";
    case GW_REC_THREAD: return "THREAD";
    case GW_REC_STACK: return "STACK";
    case GW_REC_PYSTACK: return "PYSTACK";
    case GW_REC_PYSITE: return "PYSITE";
    case GW_REC_PYTHON: return "PYTHON";
    case GW_REC_STACKSITE: return "STACKSITE";
    case GW_REC_HOST_COPY: return "HOST_COPY";
    case GW_REC_SHIM_STATS: return "SHIM_STATS";
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
 * launches), as a constant expression for call_specs. */
#define LAUNCH_WORDS(id)                                                                  \
    ((id) == GW_API_cuGraphLaunch || (id) == GW_API_cuGraphLaunch_ptsz ||                 \
     (id) == GW_API_cuLaunchHostFunc || (id) == GW_API_cuLaunchHostFunc_ptsz ? 3 : 2)
#define FAMILY_WORDS(family, id)                                                          \
    ((family) == GW_FAM_PROC ? 4 : (family) == GW_FAM_CTX ? 2 :                           \
     (family) == GW_FAM_MEMINFO ? 2 : (family) == GW_FAM_ALLOC ? 4 :                      \
     (family) == GW_FAM_FREE ? 2 : (family) == GW_FAM_VMM ? 3 :                           \
     (family) == GW_FAM_HOSTMEM ? 3 : (family) == GW_FAM_LAUNCH ? LAUNCH_WORDS(id) :      \
     (family) == GW_FAM_COPY ? 5 : (family) == GW_FAM_SET ? 3 :                           \
     (family) == GW_FAM_SYNC ? 2 : (family) == GW_FAM_NAME ? 2 : 0)

/* Union words a family's fields take when they are its payload words in order (see
 * fill_union); FILL_SWITCH for the families that fill_family sets field by field. */
#define FILL_SWITCH 0xFF
#define FAMILY_FILL(family)                                                               \
    ((family) == GW_FAM_PROC ? 4 : (family) == GW_FAM_CTX ? 2 :                           \
     (family) == GW_FAM_MEMINFO ? 2 : (family) == GW_FAM_ALLOC ? 5 :                      \
     (family) == GW_FAM_FREE ? 2 : (family) == GW_FAM_HOSTMEM ? 4 :                       \
     (family) == GW_FAM_LAUNCH ? 3 : (family) == GW_FAM_SET ? 3 :                         \
     (family) == GW_FAM_SYNC ? 2 : (family) == GW_FAM_NAME ? 2 :                          \
     (family) == GW_FAM_VMM || (family) == GW_FAM_COPY ? FILL_SWITCH : 0)

/* What a call record of each api id carries: its family (as gw_api_family, + 1 so that the
 * ids missing from api_list.h read as 0: unknown), its family's payload words and how its
 * union is filled. One table, read inline, because every call needs them. */
static const struct call_spec {
    uint8_t family_1;
    uint8_t words;
    uint8_t fill;
} call_specs[GW_API_ID_LIMIT] = {
#define GW_API(id, name, family, base, version, per_thread, async)                            \
    [id] = {(family) + 1, FAMILY_WORDS(family, id), FAMILY_FILL(family)},
#include "gpuwatch/api_list.h"
#undef GW_API
};

/* The two families whose union fields are not their payload words in order (FILL_SWITCH):
 * VMM, field by field per entry point, and COPY, whose kind word packs the direction and
 * the host memory. The others are filled in order (fill_union and the fast path). */
static void fill_family(struct gw_event *ev)
{
    const uint64_t *w = ev->words;
    if (ev->family == GW_FAM_COPY) {
        ev->u.copy.bytes = w[0];
        ev->u.copy.dir = gw_copy_kind_dir(w[1]);
        ev->u.copy.host_kind = gw_copy_kind_host(w[1]);
        ev->u.copy.stream_id = w[2];
        if (ev->api_id >= GW_API_cuMemcpyBatchAsync &&
            ev->api_id <= GW_API_cuMemcpyBatchAsync_v2_ptsz) {
            ev->u.copy.batch = 1;
            ev->u.copy.count = w[3];
        } else {
            ev->u.copy.count = 1;
            ev->u.copy.dst = w[3], ev->u.copy.src = w[4];
        }
        return;
    }
    switch (ev->api_id) {  /* GW_FAM_VMM */
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
}

/* fill_union's VMM and COPY case, out of line: the fast path calls it last, with
 * nothing of its own to keep across the call. */
static __attribute__((noinline)) void fill_switch(struct gw_event *ev)
{
    clear_bytes(&ev->u, sizeof ev->u);
    fill_family(ev);
}

/* ev->u of a call, ev->words set: a family whose fields are its first payload words in
 * order (all but VMM and COPY; unknown ids and PLAIN take none) gets them copied, without
 * the family switch; VMM and COPY go through fill_family. */
static inline __attribute__((always_inline)) void fill_union(struct gw_event *ev,
                                                             const struct call_spec *spec)
{
    clear_bytes(&ev->u, sizeof ev->u);
    if (__builtin_expect(spec->fill == FILL_SWITCH, 0)) {
        fill_family(ev);
        return;
    }
    uint64_t *u = (uint64_t *)&ev->u;  /* the in-order families' fields are all uint64_t */
    for (unsigned i = 0; i < spec->fill; i++)
        u[i] = ev->words[i];
}

/* Widens the time span of the records read (stats.first_ts_ns, last_ts_ns). */
static inline void note_time(struct gw_reader *r, uint64_t ts, uint64_t dur)
{
    uint64_t end = ts + dur;
    if (end < ts)
        end = UINT64_MAX;  /* a duration that wraps: the record's own problem */
    if (r->stats.first_ts_ns == 0 || ts < r->stats.first_ts_ns)
        r->stats.first_ts_ns = ts;
    if (end > r->stats.last_ts_ns)
        r->stats.last_ts_ns = end;
}

/* A call's payload words after its fixed fields: the first GW_EVENT_MAX_WORDS into
 * ev->words (which must be 0), the others (a newer writer's) only counted. Returns how
 * many there were; a word cut by the body's end is reported and ends them. */
static inline unsigned get_payload(struct gw_reader *r, uint8_t type, struct cursor *c,
                                   uint64_t off, struct gw_event *ev)
{
    unsigned n = 0;
    while (c->p < c->end && n < GW_EVENT_MAX_WORDS) {
        if (get(c, &ev->words[n]) != 0)
            goto cut;
        n++;
    }
    while (c->p < c->end) {
        uint64_t ignored;
        if (get(c, &ignored) != 0)
            goto cut;
        n++;
    }
    return n;
cut:
    gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                     "offset %" PRIu64 ": expected a varint for payload word %u of a %s "
                     "record, found %zu cut bytes",
                     off, n + 1, record_name(type), left(c));
    return n;
}

/* A call's fixed words after its dt: api id, duration and, for CALL_ERR, the result.
 * Returns how many varints the record has up to them, its dt included. */
static inline unsigned get_fixed(struct cursor *c, uint8_t type, uint64_t *api,
                                 uint64_t *dur, uint64_t *result)
{
    if (get(c, api) != 0)
        return 1;
    if (get(c, dur) != 0)
        return 2;
    if (type != GW_REC_CALL_ERR)
        return 3;
    return get(c, result) == 0 ? 4 : 3;
}

/* CALL and CALL_ERR after their dt: the hottest path of every tool, so each field is set
 * once (no clearing of the whole event, a `rep stos` that was a third of the reader's
 * time) and the family comes from call_specs inline. */
static inline int decode_call(struct gw_reader *r, uint8_t type, struct cursor *c,
                              uint64_t off, size_t body_len, uint64_t number,
                              struct gw_event *ev)
{
    uint64_t api, dur, result = 0;
    unsigned have = get_fixed(c, type, &api, &dur, &result);
    unsigned want = type == GW_REC_CALL_ERR ? 4 : 3;
    if (have < want) {
        report_short(r, off, record_name(type), have, want, body_len);
        return 0;
    }
    memset(ev->words, 0, sizeof ev->words);  /* missing words read as 0 */
    ev->kind = GW_EV_CALL;
    ev->tid = r->ch.tid;
    ev->ts_ns = r->ts;
    ev->dur_ns = dur;
    ev->api_id = api > UINT32_MAX ? UINT32_MAX : (uint32_t)api;
    ev->result = (uint32_t)result;
    /* api_list.h never assigns id 0, so its empty row stands for every unknown id */
    const struct call_spec *spec = &call_specs[api < GW_API_ID_LIMIT ? api : 0];
    ev->family = (int)spec->family_1 - 1;
    ev->offset = off;
    ev->call_id = r->call_id_high | (number & 0xFFFFFFFFu);
    ev->call_id_unsure = r->call_unsure;
    r->stats.calls_unsure += r->call_unsure;
    unsigned nwords = get_payload(r, type, c, off, ev);
    ev->nwords = nwords < GW_EVENT_MAX_WORDS ? nwords : GW_EVENT_MAX_WORDS;
    r->stats.calls++;
    r->stats.call_errors += type == GW_REC_CALL_ERR;
    note_time(r, ev->ts_ns, dur);
    if (ev->family >= 0) {
        if (ev->nwords < spec->words)
            gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                             "offset %" PRIu64 ": expected %u payload words in a %s record, "
                             "found %u (the missing ones read as 0)",
                             off, (unsigned)spec->words, gw_api_name(ev->api_id),
                             ev->nwords);
    }
    fill_union(ev, spec);  /* family fields a call lacks are 0 */
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
    clear_bytes(ev, sizeof *ev);
    ev->tid = r->ch.tid;
    ev->offset = off;
    ev->family = -1;
    r->stats.definitions++;
    switch (type) {
    case GW_REC_STRING:
        ev->kind = GW_EV_STRING;
        ev->u.string.id = w[0];
        ev->u.string.text = gw_tables_add_string(r, w[0], c->p, left(c));
        ev->u.string.len = ev->u.string.text ? left(c) : 0;
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

/* Words after dt of the GPU, NVTX and CPU records: `full` in a v1 body, `need` without
 * which the record is dropped. Between the two, the missing words read as 0 and the record
 * is reported (a v1 writer writes them all); up to `most`, optional words added later read
 * as 0 when absent, unreported; words after those are a newer writer's and are ignored. */
struct timed_spec {
    enum gw_event_kind kind;
    unsigned need, full, most;  /* most: 0 when there are no optional words */
};

static const struct timed_spec *timed_spec(uint8_t type)
{
    static const struct timed_spec specs[] = {
        [GW_REC_GPU_KERNEL - GW_REC_GPU_KERNEL] = {GW_EV_GPU_KERNEL, 1, 6, 7},
        [GW_REC_GPU_MEMCPY - GW_REC_GPU_KERNEL] = {GW_EV_GPU_MEMCPY, 1, 9, 10},
        [GW_REC_GPU_MEMSET - GW_REC_GPU_KERNEL] = {GW_EV_GPU_MEMSET, 1, 7, 8},
        [GW_REC_GPU_LOST - GW_REC_GPU_KERNEL] = {GW_EV_GPU_LOST, 1, 1},
        [GW_REC_GPU_WINDOW - GW_REC_GPU_KERNEL] = {GW_EV_GPU_WINDOW, 1, 1, 2},
        [GW_REC_RANGE_PUSH - GW_REC_GPU_KERNEL] = {GW_EV_RANGE_PUSH, 0, 2},
        [GW_REC_RANGE_POP - GW_REC_GPU_KERNEL] = {GW_EV_RANGE_POP, 0, 1},
        [GW_REC_MARK - GW_REC_GPU_KERNEL] = {GW_EV_MARK, 0, 2},
        [GW_REC_RANGE_START - GW_REC_GPU_KERNEL] = {GW_EV_RANGE_START, 3, 3},
        [GW_REC_RANGE_END - GW_REC_GPU_KERNEL] = {GW_EV_RANGE_END, 1, 1},
        [GW_REC_CPU_THREAD - GW_REC_GPU_KERNEL] = {GW_EV_CPU_THREAD, 2, 2, 5},
        [GW_REC_CPU_PROC - GW_REC_GPU_KERNEL] = {GW_EV_CPU_PROC, 4, 4, 5},
    };
    if (type < GW_REC_GPU_KERNEL || type > GW_REC_CPU_PROC)
        return NULL;
    const struct timed_spec *spec = &specs[type - GW_REC_GPU_KERNEL];
    return spec->kind ? spec : NULL;
}

static unsigned small(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
}

/* A GPU record's correlation id from its word: the word itself, or in a trace that
 * writes deltas (GW_FEAT_CORR_DELTA) the previous record's id moved by it. */
static inline uint64_t correlation_of(struct gw_reader *r, uint64_t word)
{
    if (!(r->hdr.feature_flags & GW_FEAT_CORR_DELTA))
        return word;
    r->corr_base += (uint64_t)gw_unzigzag(word);
    return r->corr_base;
}

/* A GPU record (ev, filled) with its `call` word: the call it names reads first, as the
 * CORRELATION event a separate record would have made, and the GPU event next
 * (r->pending). Without a link_base in the chunk the word cannot be read: the record is
 * left unlinked. Returns what decode_timed returns. */
static int gpu_link(struct gw_reader *r, struct gw_event *ev, uint64_t correlation,
                    uint64_t word)
{
    note_time(r, ev->ts_ns, ev->dur_ns);
    if (r->defs_only)
        return 0;
    if (!word)
        return 1;
    if (!r->link_known) {
        r->stats.links_unreadable++;
        return 1;
    }
    r->link_base += (uint64_t)gw_unzigzag(word - 1);
    r->pending = *ev;
    r->has_pending = 1;
    r->in_chunk = 0;  /* (so the next gw_reader_next takes reader_next_slow, which hands the
                         pending event over: the common path checks nothing more) */
    uint64_t off = ev->offset;
    start_event(ev, GW_EV_CORRELATION, r->ch.tid, 0, off);
    ev->u.correlation.correlation_id = correlation;
    ev->u.correlation.call_id = r->link_base;
    r->stats.correlations++;
    return 1;
}

/* GPU and NVTX records, after their dt. */
static int decode_timed(struct gw_reader *r, uint8_t type, const struct timed_spec *spec,
                        struct cursor *c, uint64_t off, size_t body_len, struct gw_event *ev)
{
    uint64_t w[10];
    unsigned want = spec->most > spec->full ? spec->most : spec->full;
    unsigned have = get_words(c, w, want);
    if (have < spec->need) {
        report_short(r, off, record_name(type), 1 + have, 1 + spec->need, body_len);
        return 0;
    }
    if (have < spec->full)
        gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                         "offset %" PRIu64 ": expected %u varints in the %zu-byte body of a "
                         "%s record, found %u (the missing ones read as 0)",
                         off, 1 + spec->full, body_len, record_name(type), 1 + have);
    else if (have < want && c->p < c->end)  /* an optional word (a `call`) that does not read */
        gw_reader_report(r, GW_DAMAGE_RECORD, off, 0, off, r->ch.tid,
                         "offset %" PRIu64 ": expected a varint for word %u of a %s record, "
                         "found %zu bytes that do not read as one (read without it)",
                         off, 2 + have, record_name(type), (size_t)(c->end - c->p));
    start_event(ev, spec->kind, r->ch.tid, r->ts, off);
    if (type == GW_REC_GPU_KERNEL || type == GW_REC_GPU_MEMCPY || type == GW_REC_GPU_MEMSET)
        w[1] = correlation_of(r, w[1]);
    switch (type) {
    case GW_REC_GPU_KERNEL:
        ev->dur_ns = w[0];
        ev->u.gpu_kernel.correlation_id = w[1], ev->u.gpu_kernel.device = w[2];
        ev->u.gpu_kernel.stream_id = w[3], ev->u.gpu_kernel.shape_id = w[4];
        ev->u.gpu_kernel.graph_id = w[5];
        r->stats.gpu_kernels++;
        if (have > spec->full)
            return gpu_link(r, ev, w[1], w[spec->full]);
        break;
    case GW_REC_GPU_MEMCPY:
        ev->dur_ns = w[0];
        ev->u.gpu_memcpy.correlation_id = w[1], ev->u.gpu_memcpy.device = w[2];
        ev->u.gpu_memcpy.stream_id = w[3], ev->u.gpu_memcpy.bytes = w[4];
        ev->u.gpu_memcpy.copy_kind = small(w[5]), ev->u.gpu_memcpy.src_kind = small(w[6]);
        ev->u.gpu_memcpy.dst_kind = small(w[7]), ev->u.gpu_memcpy.graph_id = w[8];
        r->stats.gpu_memcpys++;
        if (have > spec->full)
            return gpu_link(r, ev, w[1], w[spec->full]);
        break;
    case GW_REC_GPU_MEMSET:
        ev->dur_ns = w[0];
        ev->u.gpu_memset.correlation_id = w[1], ev->u.gpu_memset.device = w[2];
        ev->u.gpu_memset.stream_id = w[3], ev->u.gpu_memset.bytes = w[4];
        ev->u.gpu_memset.memory_kind = small(w[5]), ev->u.gpu_memset.graph_id = w[6];
        r->stats.gpu_memsets++;
        if (have > spec->full)
            return gpu_link(r, ev, w[1], w[spec->full]);
        break;
    case GW_REC_GPU_LOST:
        ev->u.gpu_lost.count = w[0];
        r->stats.gpu_lost_records++;
        r->stats.gpu_lost_events += w[0];
        break;
    case GW_REC_GPU_WINDOW:
        ev->u.gpu_window.open = w[0] != 0;
        ev->u.gpu_window.settle_ns = w[1];
        r->stats.gpu_windows += w[0] != 0;
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
    case GW_REC_CPU_THREAD:
        ev->u.cpu_thread.tid = w[0], ev->u.cpu_thread.cpu_ns = w[1];
        ev->u.cpu_thread.wait_ns = w[2], ev->u.cpu_thread.wait_cpu_ns = w[3];
        ev->u.cpu_thread.runq_ns = have >= 5 ? w[4] : UINT64_MAX;
        r->stats.cpu_samples++;
        break;
    case GW_REC_CPU_PROC:
        ev->u.cpu_proc.process_cpu_ns = w[0], ev->u.cpu_proc.descendants = w[1];
        ev->u.cpu_proc.descendants_cpu_ns = w[2], ev->u.cpu_proc.active = w[3];
        ev->u.cpu_proc.machine_busy_ns = have >= 5 ? w[4] : UINT64_MAX;
        r->stats.cpu_samples++;
        break;
    }
    note_time(r, ev->ts_ns, ev->dur_ns);
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
    start_event(ev, GW_EV_CORRELATION, r->ch.tid, 0, off);
    ev->u.correlation.correlation_id = w[0];
    ev->u.correlation.call_id = w[1];
    r->stats.correlations++;
    return !r->defs_only;
}

/* LOST, GPU and NVTX records after their dt. Out of line, like decode_untimed, and given
 * the cursor by value, so that the loop of gw_decode_next around the call path stays
 * small and keeps its cursor in registers. */
static __attribute__((noinline)) int decode_timed_other(struct gw_reader *r,
                                                        const struct gw_record_view *rec,
                                                        struct cursor body, uint64_t off,
                                                        struct gw_event *ev)
{
    struct cursor *c = &body;
    if (rec->type == GW_REC_LOST) {
        uint64_t count, calls;
        if (get(c, &count) != 0) {
            report_short(r, off, "LOST", 1, 2, rec->body_len);
            r->call_unsure = 1;  /* calls were dropped, how many is not known */
            return 0;
        }
        if (get(c, &calls) != 0)  /* optional: all of them were calls */
            calls = count;
        r->call_next += calls;
        start_event(ev, GW_EV_LOST, r->ch.tid, r->ts, off);
        ev->u.lost.count = count;
        ev->u.lost.calls = calls;
        r->stats.lost_records++;
        r->stats.lost_events += count;
        r->stats.lost_calls += calls;
        note_time(r, ev->ts_ns, 0);
        return !r->defs_only;
    }
    const struct timed_spec *spec = timed_spec(rec->type);
    if (spec)
        return decode_timed(r, rec->type, spec, c, off, rec->body_len, ev);
    r->stats.unknown_records++;
    return 0;
}

/* Definitions, CORRELATION, CALL_BASE and unknown untimed records. */
static __attribute__((noinline)) int decode_untimed(struct gw_reader *r,
                                                    const struct gw_record_view *rec,
                                                    struct cursor body, uint64_t off,
                                                    struct gw_event *ev)
{
    struct cursor *c = &body;
    if (rec->type >= GW_REC_STRING && rec->type <= GW_REC_THREAD)
        return decode_def(r, rec->type, c, off, rec->body_len, ev);
    if (rec->type == GW_REC_CORRELATION)
        return decode_correlation(r, c, off, rec->body_len, ev);
    if (rec->type == GW_REC_STACK)
        return gw_stacks_decode(r, rec->body, rec->body_len, off, ev);
    if (rec->type == GW_REC_PYSTACK)
        return gw_pystacks_decode(r, rec->body, rec->body_len, off, ev);
    if (rec->type == GW_REC_PYSITE || rec->type == GW_REC_STACKSITE)
        return gw_site_decode(r, rec->type, rec->body, rec->body_len, off, ev);
    if (rec->type == GW_REC_PYTHON) {
        uint64_t w[2];
        if (get_words(c, w, 2) < 2) {
            report_short(r, off, "PYTHON", 0, 2, rec->body_len);
            return 0;
        }
        start_event(ev, GW_EV_PYTHON, r->ch.tid, 0, off);
        ev->u.python.version_id = w[0];
        ev->u.python.follows_releases = w[1];
        r->stats.definitions++;
        return !r->defs_only;
    }
    if (rec->type == GW_REC_HOST_COPY) {
        uint64_t w[2] = {0, 0};
        if (get_words(c, w, 2) < 1) {
            report_short(r, off, "HOST_COPY", 0, 1, rec->body_len);
            return 0;
        }
        start_event(ev, GW_EV_HOST_COPY, r->ch.tid, 0, off);
        ev->u.host_copy.bytes_per_s = w[0];
        ev->u.host_copy.wake_ns = w[1];
        if (w[0] > r->host_copy_bps)
            r->host_copy_bps = w[0];
        if (w[1])
            r->wake_ns = w[1];
        r->stats.definitions++;
        return !r->defs_only;
    }
    if (rec->type == GW_REC_SHIM_STATS) {
        /* The shim's own cost: kept in the stats, not an event (gpuwatch stats prints it). */
        uint64_t w[4];
        if (get_words(c, w, 4) < 4) {
            report_short(r, off, "SHIM_STATS", 0, 4, rec->body_len);
            return 0;
        }
        struct gw_shim_stats *shim = &r->stats.shim;
        memset(shim, 0, sizeof *shim);
        shim->rounds = w[0];
        shim->cpu_ns = w[1];
        shim->late_max_ns = w[2];
        shim->flush_ns = w[3];
        uint64_t pair[2];
        while (get_words(c, pair, 2) == 2)
            if (pair[0] < GW_LATE_BUCKETS)
                shim->late_rounds[pair[0]] += pair[1];
        r->stats.definitions++;
        return 0;
    }
    if (rec->type == GW_REC_CALL_BASE) {
        /* The writer's own numbering: whatever was lost before, numbers are sure again. */
        uint64_t w[4];
        unsigned have = get_words(c, w, 4);
        if (have < 2) {
            report_short(r, off, "CALL_BASE", 0, 2, rec->body_len);
            return 0;
        }
        /* call ids are serial << 32 | number; a serial of 0 leaves the tid's */
        r->call_id_high = (w[0] ? w[0] : (uint64_t)r->ch.tid) << 32;
        r->call_next = w[1];
        r->call_unsure = 0;
        r->link_known = have >= 3;
        r->link_base = have >= 3 ? w[2] : 0;
        r->corr_base = have >= 4 ? w[3] : 0;
        return 0;
    }
    r->stats.unknown_records++;
    return 0;
}

/* Decodes one record; returns 1 when it produced an event for the caller. */
static inline __attribute__((always_inline)) int decode_record(
    struct gw_reader *r, const struct gw_record_view *rec, uint64_t off, struct gw_event *ev)
{
    struct cursor c = {rec->body, rec->body + rec->body_len};
    if (rec->type < 1 || rec->type > GW_REC_TIMED_MAX)
        return decode_untimed(r, rec, c, off, ev);
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
    return decode_timed_other(r, rec, c, off, ev);
}

/* The CALL or CALL_ERR record at buf[at] (the common case of decode_record's call path),
 * read with 8-byte varint loads: each varint is decoded without a length and the ends
 * are compared with the record's after (a varint cut by the end runs past it). 1 with ev
 * filled and the reader past the record, as decode_record would leave them; 0, with
 * nothing of the reader changed, for anything out of the ordinary (framing cut, an
 * over-long or cut varint, fewer payload words than the family's, more than
 * GW_EVENT_MAX_WORDS), which decode_record then reads and reports as always. Reads stay
 * within the padding: a varint that starts before the payload's end stops at its first
 * zero pad byte at the latest, and one that starts in the padding takes one byte. */
static inline __attribute__((always_inline)) int fast_call(struct gw_reader *r,
                                                           const uint8_t *buf, size_t len,
                                                           size_t at, uint64_t off,
                                                           struct gw_event *ev)
{
    const uint8_t *p = buf + at;
    uint8_t type = p[0];
    uint64_t body_len, dt, api, dur, result = 0;
    size_t room = len - at - 1;  /* bytes after the type byte */
    size_t k = gw_get_uvarint_padded(p + 1, &body_len);
    if (k - 1 >= room || body_len > room - k)  /* k == 0 wraps: over-long */
        return 0;
    const uint8_t *q = p + 1 + k, *end = q + body_len;
    size_t next = at + 1 + k + (size_t)body_len;
    k = gw_get_uvarint_padded(q, &dt);
    if (k == 0)
        return 0;
    q += k;
    k = gw_get_uvarint_padded(q, &api);
    if (k == 0)
        return 0;
    q += k;
    k = gw_get_uvarint_padded(q, &dur);
    if (k == 0)
        return 0;
    q += k;
    if (q > end)
        return 0;
    if (type == GW_REC_CALL_ERR) {
        k = gw_get_uvarint_padded(q, &result);
        if (k == 0)
            return 0;
        q += k;
        if (q > end)
            return 0;
    }
    const struct call_spec *spec = &call_specs[api < GW_API_ID_LIMIT ? api : 0];
    /* Each word goes to ev->words and to the union's word of the same place: the union
     * of an in-order family (fill_union) unless there are more words than its fields;
     * VMM and COPY (FILL_SWITCH, more than any count of words) get theirs from
     * fill_switch at the end. */
    clear_bytes(ev->words, sizeof ev->words);  /* missing words read as 0 */
    clear_bytes(&ev->u, sizeof ev->u);
    uint64_t *u = (uint64_t *)&ev->u;
    _Static_assert(sizeof ev->u >= GW_EVENT_MAX_WORDS * sizeof(uint64_t), "union size");
    unsigned n = 0;
    while (q < end) {
        if (n == GW_EVENT_MAX_WORDS)
            return 0;
        uint64_t v;
        k = gw_get_uvarint_padded(q, &v);
        if (k == 0)
            return 0;
        ev->words[n] = v;
        u[n] = v;
        q += k;
        n++;
    }
    if (q > end)
        return 0;
    if (spec->family_1 && n < spec->words)
        return 0;
    if (n > spec->fill)  /* a newer writer's words: not in the union */
        return 0;
    /* as decode_call */
    r->rec_off = next;
    uint64_t number = r->call_next++;
    uint64_t ts = r->ts + (uint64_t)gw_unzigzag(dt);
    r->ts = ts;
    ev->kind = GW_EV_CALL;
    ev->tid = r->ch.tid;
    ev->ts_ns = ts;
    ev->dur_ns = dur;
    ev->api_id = api > UINT32_MAX ? UINT32_MAX : (uint32_t)api;
    ev->result = (uint32_t)result;
    ev->family = (int)spec->family_1 - 1;
    ev->offset = off;
    ev->nwords = n;
    ev->call_id = r->call_id_high | (number & 0xFFFFFFFFu);
    ev->call_id_unsure = r->call_unsure;
    r->stats.calls_unsure += r->call_unsure;
    r->stats.calls++;
    r->stats.call_errors += type == GW_REC_CALL_ERR;
    note_time(r, ts, dur);
    if (__builtin_expect(spec->fill == FILL_SWITCH, 0))
        fill_switch(ev);
    return 1;
}

/* The GPU_KERNEL record at buf[at], read as fast_call reads a call: 1 with ev filled and
 * the reader past it, as decode_record and decode_timed would leave them, when the body
 * holds dt and the six words of a v1 kernel record (words after them are ignored, as
 * there); 0, with nothing of the reader changed, for anything else. */
static inline __attribute__((always_inline)) int fast_kernel(struct gw_reader *r,
                                                             const uint8_t *buf, size_t len,
                                                             size_t at, uint64_t off,
                                                             struct gw_event *ev)
{
    const uint8_t *p = buf + at;
    uint64_t body_len, dt, w[6];
    size_t room = len - at - 1;
    size_t k = gw_get_uvarint_padded(p + 1, &body_len);
    if (k - 1 >= room || body_len > room - k)
        return 0;
    const uint8_t *q = p + 1 + k, *end = q + body_len;
    size_t next = at + 1 + k + (size_t)body_len;
    k = gw_get_uvarint_padded(q, &dt);
    if (k == 0)
        return 0;
    q += k;
    for (int i = 0; i < 6; i++) {
        k = gw_get_uvarint_padded(q, &w[i]);
        if (k == 0)
            return 0;
        q += k;
        if (q > end)  /* here too: a read past the end stays within the padding */
            return 0;
    }
    uint64_t call = 0;  /* the optional `call` word */
    int linked = q < end && (k = gw_get_uvarint_padded(q, &call)) != 0 && q + k <= end;
    if (q < end && !linked)
        return 0;  /* a `call` word that does not read: the general path says so */
    r->rec_off = next;
    uint64_t ts = r->ts + (uint64_t)gw_unzigzag(dt);
    r->ts = ts;
    start_event(ev, GW_EV_GPU_KERNEL, r->ch.tid, ts, off);
    ev->dur_ns = w[0];
    w[1] = correlation_of(r, w[1]);
    ev->u.gpu_kernel.correlation_id = w[1], ev->u.gpu_kernel.device = w[2];
    ev->u.gpu_kernel.stream_id = w[3], ev->u.gpu_kernel.shape_id = w[4];
    ev->u.gpu_kernel.graph_id = w[5];
    r->stats.gpu_kernels++;
    if (linked)
        return gpu_link(r, ev, w[1], call);
    note_time(r, ts, w[0]);
    return 1;
}

/* Decodes the current chunk's records from rec_off on until one gives an event: 1 with ev
 * filled, or 0 when the chunk has no more (its end, or framing damage, reported). */
static inline __attribute__((always_inline)) int decode_chunk_next(struct gw_reader *r,
                                                                   struct gw_event *ev)
{
    const uint8_t *buf = r->buf;
    size_t len = r->ch.payload_len;
    uint64_t base = r->ch_off + GW_CHUNK_HEADER_SIZE;  /* file offset of buf[0] */
    while (r->rec_off < len) {
        size_t start = r->rec_off;
        uint64_t off = base + start;
        if ((uint8_t)(buf[start] - GW_REC_CALL) <= GW_REC_CALL_ERR - GW_REC_CALL &&
            !r->defs_only && fast_call(r, buf, len, start, off, ev))
            return 1;
        struct gw_record_view rec;
        if (gw_next_record(buf, len, &r->rec_off, &rec) != 0) {
            uint64_t lost = len - start;
            gw_reader_report(r, GW_DAMAGE_RECORD, off, lost, r->pos, r->ch.tid,
                             "offset %" PRIu64 ": expected a record (type, body length, "
                             "body) within the chunk at %" PRIu64 " (tid %" PRIu32
                             "), found a record cut by the chunk's end; %" PRIu64
                             " bytes of the chunk skipped",
                             off, r->ch_off, r->ch.tid, lost);
            r->call_unsure = 1;  /* the skipped bytes may have held calls */
            return 0;
        }
        if (decode_record(r, &rec, off, ev))
            return 1;
    }
    return 0;
}

/* The event loop, past its common case: records of the current chunk, then of the next
 * intact one (trace_chunks.c). */
static __attribute__((noinline)) int reader_next_slow(struct gw_reader *r,
                                                      struct gw_event *ev)
{
    if (r->has_pending) {  /* a linked GPU record's own event, after its CORRELATION */
        *ev = r->pending;
        r->has_pending = 0;
        r->in_chunk = 1;
        return 1;
    }
    for (;;) {
        if (r->in_chunk) {
            if (decode_chunk_next(r, ev))
                return 1;
            if (!r->defs_only)
                gw_calls_end(r);
            r->in_chunk = 0;
        }
        /* the file's chunks, then what a killed process left in its rings */
        if (!gw_chunks_next(r) && (r->second_header || !gw_salvage_next(r)))
            return 0;
        r->in_chunk = 1;
        r->rec_off = 0;
        r->ts = r->ch.base_ts_ns;
    }
}

/* gw_reader_next at a GPU_KERNEL record: a function of its own (reached by a jump) so
 * that the call path keeps its registers. */
static __attribute__((noinline)) int next_kernel(struct gw_reader *r, size_t at, uint64_t off,
                                                 struct gw_event *ev)
{
    if (fast_kernel(r, r->buf, r->ch.payload_len, at, off, ev))
        return 1;
    return reader_next_slow(r, ev);
}

/* The event loop. Here rather than in trace_reader.c so that the call path is inlined into
 * it: one call per event. Its common case, a call record next in the current chunk, comes
 * first and calls nothing, so that it saves no registers; the rest is reader_next_slow. */
int gw_reader_next(struct gw_reader *r, struct gw_event *ev)
{
    if (__builtin_expect(r->kineto != NULL, 0))
        return gw_kineto_next(r, ev);
    if (r->in_chunk) {
        size_t at = r->rec_off;
        size_t len = r->ch.payload_len;
        if (at < len && !r->defs_only) {
            uint8_t type = r->buf[at];
            uint64_t off = r->ch_off + GW_CHUNK_HEADER_SIZE + at;
            if ((uint8_t)(type - GW_REC_CALL) <= GW_REC_CALL_ERR - GW_REC_CALL) {
                if (fast_call(r, r->buf, len, at, off, ev))
                    return 1;
            } else if (type == GW_REC_GPU_KERNEL) {
                return next_kernel(r, at, off, ev);
            }
        }
    }
    return reader_next_slow(r, ev);
}
