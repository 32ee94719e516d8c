/*
 * The trace reader: file header validation, chunk framing with damage reports and
 * resynchronisation, and record decoding into struct gw_event. Definition tables live in
 * trace_tables.c.
 */
#include "trace_reader.h"
#include "trace_reader_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuwatch/crc32.h"
#include "gpuwatch/record_walk.h"
#include "gpuwatch/varint.h"

#define CHUNK_HEADER_SIZE ((uint64_t)sizeof(struct gw_chunk_header))
#define SCAN_WINDOW 65536u
#define NO_OFFSET UINT64_MAX

static const uint8_t chunk_magic_bytes[4] = {0x47, 0x57, 0x43, 0x4B}; /* "GWCK" */

/* ---- file access ---- */

/* Reads len bytes at off; 0 on success, -1 on error or a short read (reported as I/O
 * damage, after which the reader stops). */
static int read_at(struct gw_reader *r, uint64_t off, void *dst, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(r->fd, (uint8_t *)dst + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            gw_reader_report(r, GW_DAMAGE_IO, off, r->file_size - off, r->file_size, 0,
                             "offset %" PRIu64 ": %s", off + done,
                             n < 0 ? strerror(errno)
                                   : "the file ended early (it changed while being read)");
            r->stopped = 1;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

/* Loads the payload of the chunk at chunk_off into r->buf. */
static int load_payload(struct gw_reader *r, uint64_t chunk_off, uint32_t len)
{
    if (r->buf_offset == chunk_off && r->buf_len == len)
        return 0;
    if (len > r->buf_cap) {
        size_t cap = r->buf_cap ? r->buf_cap : 4096;
        while (cap < len)
            cap *= 2;
        uint8_t *buf = realloc(r->buf, cap);
        if (!buf) {
            gw_reader_report(r, GW_DAMAGE_IO, chunk_off, 0, r->file_size, 0,
                             "offset %" PRIu64 ": out of memory for a %" PRIu32
                             "-byte chunk",
                             chunk_off, len);
            r->stopped = 1;
            return -1;
        }
        r->buf = buf;
        r->buf_cap = cap;
    }
    r->buf_offset = NO_OFFSET;
    if (read_at(r, chunk_off + CHUNK_HEADER_SIZE, r->buf, len) != 0)
        return -1;
    r->buf_offset = chunk_off;
    r->buf_len = len;
    return 0;
}

/* ---- damage ---- */

void gw_reader_report(struct gw_reader *r, enum gw_damage_kind kind, uint64_t offset,
                      uint64_t lost_bytes, uint64_t resume, uint32_t tid, const char *fmt,
                      ...)
{
    if (r->quiet)
        return;
    struct gw_damage d = {
        .kind = kind, .offset = offset, .lost_bytes = lost_bytes, .resume_offset = resume,
        .tid = tid,
    };
    int n = snprintf(d.message, sizeof d.message, "%s: ", r->name);
    if (n < 0 || (size_t)n >= sizeof d.message)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d.message + n, sizeof d.message - (size_t)n, fmt, ap);
    va_end(ap);
    if (kind == GW_DAMAGE_LOST_CHUNKS)
        d.lost_chunks = (uint32_t)lost_bytes, d.lost_bytes = 0;
    r->stats.damage_reports++;
    r->stats.damaged_bytes += d.lost_bytes;
    if (r->ndamage < GW_READER_KEEP_DAMAGE)
        r->damage[r->ndamage++] = d;
    if (r->on_damage)
        r->on_damage(&d, r->on_damage_user);
}

/* ---- chunk framing ---- */

enum chunk_check {
    CHUNK_OK,
    CHUNK_BAD_MAGIC,
    CHUNK_TOO_LONG,
    CHUNK_PAST_EOF,
    CHUNK_BAD_CRC,
    CHUNK_IO,
};

static enum chunk_check check_chunk(struct gw_reader *r, uint64_t at,
                                    const struct gw_chunk_header *h, uint32_t *crc)
{
    if (h->magic != GW_CHUNK_MAGIC)
        return CHUNK_BAD_MAGIC;
    if (h->payload_len > GW_MAX_CHUNK_PAYLOAD)
        return CHUNK_TOO_LONG;
    if (h->payload_len > r->file_size - at - CHUNK_HEADER_SIZE)
        return CHUNK_PAST_EOF;
    if (load_payload(r, at, h->payload_len) != 0)
        return CHUNK_IO;
    *crc = gw_crc32(r->buf, h->payload_len);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    *crc = h->crc32;  /* let mutated payloads reach the decoder (tests/fuzz) */
#endif
    return *crc == h->crc32 ? CHUNK_OK : CHUNK_BAD_CRC;
}

/* The first offset >= from where a chunk checks out, or where a chunk header with a
 * plausible length runs past the end of the file (so that it is reported as truncation),
 * or the file size when there is none. */
static uint64_t find_next_chunk(struct gw_reader *r, uint64_t from)
{
    uint8_t window[SCAN_WINDOW];
    uint64_t p = from;
    while (!r->stopped && p + 4 <= r->file_size) {
        uint64_t left = r->file_size - p;
        size_t n = left < SCAN_WINDOW ? (size_t)left : SCAN_WINDOW;
        if (read_at(r, p, window, n) != 0)
            break;
        for (size_t i = 0; i + 4 <= n; i++) {
            if (window[i] != chunk_magic_bytes[0] ||
                memcmp(window + i, chunk_magic_bytes, 4) != 0)
                continue;
            uint64_t q = p + i;
            struct gw_chunk_header h;
            if (r->file_size - q < CHUNK_HEADER_SIZE)
                return q;  /* a header cut by the end of the file */
            if (read_at(r, q, &h, sizeof h) != 0)
                return r->file_size;
            /* A stray "GWCK" in a payload rarely has a kind we know: skip it without
             * reading and checksumming the payload it claims. */
            if (r->hdr.version <= GW_READER_VERSION && h.kind != GW_CHUNK_EVENTS &&
                h.kind != GW_CHUNK_DEFS)
                continue;
            uint32_t crc;
            enum chunk_check c = check_chunk(r, q, &h, &crc);
            if (c == CHUNK_OK || c == CHUNK_PAST_EOF)
                return q;
            if (c == CHUNK_IO)
                return r->file_size;
        }
        if (n < 4)
            break;
        p += n - 3;
    }
    return r->file_size;
}

/* 1 when [from, to) holds only zero bytes. */
static int all_zero(struct gw_reader *r, uint64_t from, uint64_t to)
{
    uint8_t window[SCAN_WINDOW];
    while (from < to) {
        size_t n = to - from < SCAN_WINDOW ? (size_t)(to - from) : SCAN_WINDOW;
        if (read_at(r, from, window, n) != 0)
            return 0;
        for (size_t i = 0; i < n; i++)
            if (window[i])
                return 0;
        from += n;
    }
    return 1;
}

static void report_bad_chunk(struct gw_reader *r, enum chunk_check problem, uint64_t at,
                             const struct gw_chunk_header *h, uint32_t crc, uint64_t next)
{
    uint64_t lost = next - at;
    char tail[160];
    if (next < r->file_size)
        snprintf(tail, sizeof tail, "skipped %" PRIu64 " bytes to the next chunk at %" PRIu64,
                 lost, next);
    else
        snprintf(tail, sizeof tail,
                 "no intact chunk follows: %" PRIu64 " bytes to the end of the file lost",
                 lost);
    int at_end = next >= r->file_size;
    switch (problem) {
    case CHUNK_BAD_MAGIC:
        if (at_end && all_zero(r, at, r->file_size))
            gw_reader_report(r, GW_DAMAGE_TRUNCATED, at, lost, next, 0,
                             "offset %" PRIu64 ": truncated: expected chunk magic 0x%08X, "
                             "found zeros to the end of the file (%" PRIu64
                             " bytes; the writer stopped before filling its space)",
                             at, GW_CHUNK_MAGIC, lost);
        else
            gw_reader_report(r, GW_DAMAGE_CHUNK_MAGIC, at, lost, next, 0,
                             "offset %" PRIu64 ": expected chunk magic 0x%08X, found 0x%08X; %s",
                             at, GW_CHUNK_MAGIC, h->magic, tail);
        break;
    case CHUNK_TOO_LONG:
        gw_reader_report(r, GW_DAMAGE_CHUNK_LENGTH, at, lost, next, h->tid,
                         "offset %" PRIu64 ": expected a chunk payload_len of at most %u, "
                         "found %" PRIu32 "; %s",
                         at, GW_MAX_CHUNK_PAYLOAD, h->payload_len, tail);
        break;
    case CHUNK_PAST_EOF:
        if (at_end)
            gw_reader_report(r, GW_DAMAGE_TRUNCATED, at, lost, next, h->tid,
                             "offset %" PRIu64 ": truncated chunk (tid %" PRIu32
                             ", seq %" PRIu32 "): expected %" PRIu32
                             " payload bytes, the file ends after %" PRIu64 "; %" PRIu64
                             " bytes lost",
                             at, h->tid, h->seq, h->payload_len,
                             r->file_size - at - CHUNK_HEADER_SIZE, lost);
        else
            gw_reader_report(r, GW_DAMAGE_CHUNK_LENGTH, at, lost, next, h->tid,
                             "offset %" PRIu64 ": chunk payload_len %" PRIu32
                             " runs past the end of the file (%" PRIu64 " bytes); %s",
                             at, h->payload_len, r->file_size, tail);
        break;
    case CHUNK_BAD_CRC: {
        uint64_t end = at + CHUNK_HEADER_SIZE + h->payload_len;
        if (at_end && all_zero(r, end, r->file_size))
            gw_reader_report(r, GW_DAMAGE_TRUNCATED, at, lost, next, h->tid,
                             "offset %" PRIu64 ": truncated: the last chunk (tid %" PRIu32
                             ", seq %" PRIu32 ", %" PRIu32 " payload bytes) expected crc32 "
                             "0x%08X, computed 0x%08X (the writer stopped mid-chunk); %"
                             PRIu64 " bytes lost",
                             at, h->tid, h->seq, h->payload_len, h->crc32, crc, lost);
        else
            gw_reader_report(r, GW_DAMAGE_CHUNK_CRC, at, lost, next, h->tid,
                             "offset %" PRIu64 ": chunk (tid %" PRIu32 ", seq %" PRIu32
                             ", %" PRIu32 " payload bytes) expected crc32 0x%08X, "
                             "computed 0x%08X; %s",
                             at, h->tid, h->seq, h->payload_len, h->crc32, crc, tail);
        break;
    }
    case CHUNK_OK:
    case CHUNK_IO:
        break;
    }
}

enum seq_state { SEQ_NEXT, SEQ_GAP, SEQ_RESTART };

static enum seq_state track_seq(struct gw_reader *r, uint64_t at,
                                const struct gw_chunk_header *h)
{
    uint64_t key = (uint64_t)h->tid | (uint64_t)h->kind << 32;
    uint64_t *expected = gw_map_get(&r->seq, key);
    uint64_t want = expected ? *expected : 0;
    enum seq_state state = SEQ_NEXT;
    /* A lower number is a new thread that reuses the tid (or a restarted counter). */
    if (h->seq > want) {
        uint64_t missing = h->seq - want;
        r->stats.lost_chunks += missing;
        gw_reader_report(r, GW_DAMAGE_LOST_CHUNKS, at, missing, at, h->tid,
                         "offset %" PRIu64 ": tid %" PRIu32 ": expected %s chunk seq %" PRIu64
                         ", found %" PRIu32 ": %" PRIu64 " chunk%s of this thread lost",
                         at, h->tid, h->kind == GW_CHUNK_DEFS ? "definitions" : "event",
                         want, h->seq, missing, missing == 1 ? "" : "s");
        state = SEQ_GAP;
    } else if (expected && h->seq < want) {
        state = SEQ_RESTART;
    }
    gw_map_put(&r->seq, key, (uint64_t)h->seq + 1);
    return state;
}

/* ---- host call numbering (trace_format.h: call ids) ---- */

#define CALLS_UNSURE (1ull << 63)

/* Takes up the numbering of the thread of the chunk just accepted. */
static void calls_begin(struct gw_reader *r, const struct gw_chunk_header *h,
                        enum seq_state seq)
{
    r->call_key = (uint64_t)h->tid | (uint64_t)h->kind << 32;
    r->call_serial = 0; /* until the chunk's CALL_BASE says */
    uint64_t *slot = gw_map_get(&r->calls, r->call_key);
    uint64_t state = slot ? *slot : 0;
    r->call_next = state & ~CALLS_UNSURE;
    r->call_unsure = (state & CALLS_UNSURE) != 0;
    if (seq == SEQ_RESTART) {  /* a new thread with the same tid numbers from 0 */
        r->call_next = 0;
        r->call_unsure = 0;
    } else if (seq == SEQ_GAP) {
        r->call_unsure = 1;
    }
}

/* Keeps the numbering of the current chunk's thread for its next chunk. */
static void calls_end(struct gw_reader *r)
{
    gw_map_put(&r->calls, r->call_key,
               (r->call_next & ~CALLS_UNSURE) | (r->call_unsure ? CALLS_UNSURE : 0));
}

/* Advances to the next intact chunk of a kind we read; its payload is in r->buf.
 * Returns 1, or 0 at the end of the file. */
static int next_chunk(struct gw_reader *r)
{
    while (!r->stopped && r->pos < r->file_size) {
        uint64_t at = r->pos;
        uint64_t left = r->file_size - at;
        struct gw_chunk_header h;
        if (left < CHUNK_HEADER_SIZE) {
            r->pos = r->file_size;
            uint8_t tail[sizeof h];
            if (read_at(r, at, tail, (size_t)left) != 0)
                return 0;
            int zeros = 1;
            for (uint64_t i = 0; i < left; i++)
                zeros &= tail[i] == 0;
            gw_reader_report(r, GW_DAMAGE_TRUNCATED, at, left, r->file_size, 0,
                             "offset %" PRIu64 ": truncated: expected a %u-byte chunk "
                             "header, the file ends after %" PRIu64 " %sbytes",
                             at, (unsigned)CHUNK_HEADER_SIZE, left, zeros ? "zero " : "");
            return 0;
        }
        if (read_at(r, at, &h, sizeof h) != 0)
            return 0;
        /* The definitions pass skips event chunks whose framing is evidently intact
         * without reading their payload. */
        if (r->defs_only && h.magic == GW_CHUNK_MAGIC && h.kind != GW_CHUNK_DEFS &&
            h.payload_len <= GW_MAX_CHUNK_PAYLOAD &&
            h.payload_len <= left - CHUNK_HEADER_SIZE) {
            uint64_t end = at + CHUNK_HEADER_SIZE + h.payload_len;
            uint32_t next_magic = 0;
            if (end == r->file_size ||
                (r->file_size - end >= 4 && read_at(r, end, &next_magic, 4) == 0 &&
                 next_magic == GW_CHUNK_MAGIC)) {
                r->pos = end;
                continue;
            }
        }
        uint32_t crc = 0;
        enum chunk_check problem = check_chunk(r, at, &h, &crc);
        if (problem == CHUNK_IO)
            return 0;
        if (problem != CHUNK_OK) {
            uint64_t next = find_next_chunk(r, at + 1);
            if (r->stopped)
                return 0;
            report_bad_chunk(r, problem, at, &h, crc, next);
            r->pos = next;
            continue;
        }
        r->pos = at + CHUNK_HEADER_SIZE + h.payload_len;
        if (h.kind != GW_CHUNK_EVENTS && h.kind != GW_CHUNK_DEFS) {
            if (r->hdr.version <= GW_READER_VERSION)
                gw_reader_report(r, GW_DAMAGE_CHUNK_KIND, at,
                                 CHUNK_HEADER_SIZE + h.payload_len, r->pos, h.tid,
                                 "offset %" PRIu64 ": expected chunk kind 1 (events) or 2 "
                                 "(definitions) in a v%u file, found %u; chunk skipped",
                                 at, (unsigned)r->hdr.version, (unsigned)h.kind);
            continue;  /* newer writers may add kinds: skip them quietly */
        }
        if (r->defs_only && h.kind != GW_CHUNK_DEFS)
            continue;
        enum seq_state seq = track_seq(r, at, &h);
        if (!r->defs_only)
            calls_begin(r, &h, seq);
        r->stats.chunks++;
        r->ch = h;
        r->ch_off = at;
        return 1;
    }
    return 0;
}

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
static int decode_record(struct gw_reader *r, const struct gw_record_view *rec, uint64_t off,
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

int gw_reader_next(struct gw_reader *r, struct gw_event *ev)
{
    for (;;) {
        if (!r->in_chunk) {
            if (!next_chunk(r))
                return 0;
            r->in_chunk = 1;
            r->rec_off = 0;
            r->ts = r->ch.base_ts_ns;
        }
        while (r->rec_off < r->ch.payload_len) {
            size_t start = r->rec_off;
            uint64_t off = r->ch_off + CHUNK_HEADER_SIZE + start;
            struct gw_record_view rec;
            if (gw_next_record(r->buf, r->ch.payload_len, &r->rec_off, &rec) != 0) {
                uint64_t lost = r->ch.payload_len - start;
                gw_reader_report(r, GW_DAMAGE_RECORD, off, lost, r->pos, r->ch.tid,
                                 "offset %" PRIu64 ": expected a record (type, body length, "
                                 "body) within the chunk at %" PRIu64 " (tid %" PRIu32
                                 "), found a record cut by the chunk's end; %" PRIu64
                                 " bytes of the chunk skipped",
                                 off, r->ch_off, r->ch.tid, lost);
                r->call_unsure = 1;  /* the skipped bytes may have held calls */
                break;
            }
            if (decode_record(r, &rec, off, ev))
                return 1;
        }
        if (!r->defs_only)
            calls_end(r);
        r->in_chunk = 0;
    }
}

/* ---- open, close, rewind ---- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void printable(char *out, size_t outlen, const uint8_t *in, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < outlen; i++) {
        if (in[i] >= 0x20 && in[i] < 0x7F && in[i] != '"' && in[i] != '\\')
            out[o++] = (char)in[i];
        else
            o += (size_t)snprintf(out + o, outlen - o, "\\x%02X", in[i]);
    }
    out[o] = 0;
}

static int validate_header(struct gw_reader *r, char *err, size_t errlen)
{
    const struct gw_file_header *h = &r->hdr;
    const char *name = r->name;
    if (memcmp(h->magic, GW_FILE_MAGIC, sizeof h->magic) != 0) {
        char found[48];
        printable(found, sizeof found, (const uint8_t *)h->magic, sizeof h->magic);
        return fail(err, errlen,
                    "%s: offset 0: expected magic \"%s\", found \"%s\": not a gpuwatch trace",
                    name, GW_FILE_MAGIC, found);
    }
    if (h->endian_mark != GW_ENDIAN_MARK) {
        if (h->endian_mark == 0x04030201u)
            return fail(err, errlen,
                        "%s: offset 16: expected endian mark 0x%08X, found 0x%08X: written "
                        "on a big-endian host; this reader reads little-endian traces",
                        name, GW_ENDIAN_MARK, h->endian_mark);
        return fail(err, errlen, "%s: offset 16: expected endian mark 0x%08X, found 0x%08X",
                    name, GW_ENDIAN_MARK, h->endian_mark);
    }
    if (h->min_reader_version > GW_READER_VERSION)
        return fail(err, errlen,
                    "%s: written by format v%u, needs a reader of v%u or newer; this reader "
                    "reads v%u",
                    name, (unsigned)h->version, (unsigned)h->min_reader_version,
                    (unsigned)GW_READER_VERSION);
    if (h->version == 0)
        return fail(err, errlen, "%s: offset 8: expected a format version of 1 or more, "
                    "found 0", name);
    if (h->header_size < GW_FILE_HEADER_SIZE)
        return fail(err, errlen,
                    "%s: offset 12: expected a header_size of at least %u, found %" PRIu32,
                    name, GW_FILE_HEADER_SIZE, h->header_size);
    if (h->header_size > r->file_size)
        return fail(err, errlen,
                    "%s: offset 12: header_size %" PRIu32 " runs past the end of the file "
                    "(%" PRIu64 " bytes)",
                    name, h->header_size, r->file_size);
    return 0;
}

int gw_reader_open_fd(int fd, const char *name, struct gw_reader **out, char *err,
                      size_t errlen)
{
    *out = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fail(err, errlen, "%s: %s", name, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return fail(err, errlen, "%s: is a directory, expected a trace file", name);
    struct gw_reader *r = calloc(1, sizeof *r);
    if (!r)
        return fail(err, errlen, "%s: out of memory", name);
    r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    r->name = strdup(name);
    r->file_size = (uint64_t)st.st_size;
    r->buf_offset = NO_OFFSET;
    if (r->fd < 0 || !r->name) {
        fail(err, errlen, "%s: %s", name, r->fd < 0 ? strerror(errno) : "out of memory");
        gw_reader_close(r);
        return -1;
    }
    if (r->file_size < sizeof r->hdr) {
        fail(err, errlen, "%s: offset 0: expected a %u-byte header, file has %" PRIu64 " bytes",
             name, GW_FILE_HEADER_SIZE, r->file_size);
        gw_reader_close(r);
        return -1;
    }
    r->quiet = 1;  /* a read error here is returned, not reported */
    if (read_at(r, 0, &r->hdr, sizeof r->hdr) != 0) {
        fail(err, errlen, "%s: offset 0: cannot read the header: %s", name,
             errno ? strerror(errno) : "short read");
        gw_reader_close(r);
        return -1;
    }
    r->quiet = 0;
    if (validate_header(r, err, errlen) != 0) {
        gw_reader_close(r);
        return -1;
    }
    r->data_start = r->hdr.header_size;
    gw_reader_rewind(r);
    *out = r;
    return 0;
}

int gw_reader_open(const char *path, struct gw_reader **out, char *err, size_t errlen)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errlen, "%s: %s", path, strerror(errno));
    int rc = gw_reader_open_fd(fd, path, out, err, errlen);
    close(fd);
    return rc;
}

void gw_reader_rewind(struct gw_reader *r)
{
    r->pos = r->data_start;
    r->in_chunk = 0;
    r->stopped = 0;
    r->ndamage = 0;
    memset(&r->stats, 0, sizeof r->stats);
    gw_map_clear(&r->seq);
    gw_map_clear(&r->calls);
    r->call_key = r->call_next = 0;
    r->call_unsure = 0;
}

void gw_reader_load_defs(struct gw_reader *r)
{
    struct gw_event ev;
    r->defs_only = 1;
    r->quiet = 1;
    gw_reader_rewind(r);
    while (gw_reader_next(r, &ev) > 0)
        ;
    r->defs_only = 0;
    r->quiet = 0;
    gw_reader_rewind(r);
}

void gw_reader_close(struct gw_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->name);
    free(r->buf);
    gw_map_free(&r->seq);
    gw_map_free(&r->calls);
    gw_tables_free(r);
    free(r);
}

void gw_reader_on_damage(struct gw_reader *r, gw_damage_fn fn, void *user)
{
    r->on_damage = fn;
    r->on_damage_user = user;
}

const struct gw_file_header *gw_reader_header(const struct gw_reader *r)
{
    return &r->hdr;
}

const char *gw_reader_name(const struct gw_reader *r)
{
    return r->name;
}

uint64_t gw_reader_file_size(const struct gw_reader *r)
{
    return r->file_size;
}

const struct gw_reader_stats *gw_reader_stats(const struct gw_reader *r)
{
    return &r->stats;
}

size_t gw_reader_damage(const struct gw_reader *r, const struct gw_damage **list)
{
    *list = r->damage;
    return r->ndamage;
}
