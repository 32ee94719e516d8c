/*
 * The reader's file access and chunk framing: reading at an offset, damage reports, chunk
 * validation (magic, length, CRC) and resynchronisation on the next good chunk, per-thread
 * chunk sequences, and the host call numbering that carries from one chunk of a thread to
 * its next.
 */
#include "trace_reader_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuwatch/chunk_crc.h"
#include "gpuwatch/varint.h"

#define SCAN_WINDOW 65536u

static const uint8_t chunk_magic_bytes[4] = {0x47, 0x57, 0x43, 0x4B}; /* "GWCK" */

/* ---- file access ---- */

/* Reads len bytes at off; 0 on success, -1 on error or a short read (reported as I/O
 * damage, after which the reader stops). */
int gw_reader_read_at(struct gw_reader *r, uint64_t off, void *dst, size_t len)
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

int gw_reader_buf_reserve(struct gw_reader *r, uint64_t at, size_t len)
{
    if (r->buf && len <= r->buf_cap)
        return 0;
    size_t cap = r->buf_cap ? r->buf_cap : 4096;
    while (cap < len)
        cap *= 2;
    uint8_t *buf = realloc(r->buf, cap + GW_VARINT_PAD);
    if (!buf) {
        gw_reader_report(r, GW_DAMAGE_IO, at, 0, r->file_size, 0,
                         "offset %" PRIu64 ": out of memory for a %zu-byte chunk", at, len);
        r->stopped = 1;
        return -1;
    }
    r->buf = buf;
    r->buf_cap = cap;
    return 0;
}

/* Loads the payload of the chunk at chunk_off into r->buf. */
static int load_payload(struct gw_reader *r, uint64_t chunk_off, uint32_t len)
{
    if (r->buf_offset == chunk_off && r->buf_len == len)
        return 0;
    if (gw_reader_buf_reserve(r, chunk_off, len) != 0)
        return -1;
    r->buf_offset = GW_NO_OFFSET;
    if (gw_reader_read_at(r, chunk_off + GW_CHUNK_HEADER_SIZE, r->buf, len) != 0)
        return -1;
    /* zeros after the payload: the decoder reads varints with 8-byte loads
     * (gw_get_uvarint_padded) and checks their ends against the record's after */
    memset(r->buf + len, 0, GW_VARINT_PAD);
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
    if (kind == GW_DAMAGE_TRUNCATED) {  /* a killed run is expected, not damage */
        r->stats.ended_abruptly = 1;
        r->stats.ended_at = offset;
    } else {
        r->stats.damage_reports++;
    }
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
    if (h->payload_len > r->file_size - at - GW_CHUNK_HEADER_SIZE)
        return CHUNK_PAST_EOF;
    if (load_payload(r, at, h->payload_len) != 0)
        return CHUNK_IO;
    *crc = gw_chunk_crc(h, r->buf, h->payload_len, r->hdr.version);
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
        if (gw_reader_read_at(r, p, window, n) != 0)
            break;
        for (size_t i = 0; i + 4 <= n; i++) {
            if (window[i] == (uint8_t)GW_FILE_MAGIC[0] && i + 8 <= n &&
                memcmp(window + i, GW_FILE_MAGIC, 8) == 0)
                return p + i;  /* another trace's header: the caller stops there */
            if (window[i] != chunk_magic_bytes[0] ||
                memcmp(window + i, chunk_magic_bytes, 4) != 0)
                continue;
            uint64_t q = p + i;
            struct gw_chunk_header h;
            if (r->file_size - q < GW_CHUNK_HEADER_SIZE)
                return q;  /* a header cut by the end of the file */
            if (gw_reader_read_at(r, q, &h, sizeof h) != 0)
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
        if (n < 8)
            break;
        p += n - 7;  /* (a magic across the window's end is found in the next one) */
    }
    return r->file_size;
}

/* 1 when [from, to) holds only zero bytes. */
static int all_zero(struct gw_reader *r, uint64_t from, uint64_t to)
{
    uint8_t window[SCAN_WINDOW];
    while (from < to) {
        size_t n = to - from < SCAN_WINDOW ? (size_t)(to - from) : SCAN_WINDOW;
        if (gw_reader_read_at(r, from, window, n) != 0)
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
                             "offset %" PRIu64 ": ended abruptly (truncated): expected chunk magic 0x%08X, "
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
                             "offset %" PRIu64 ": ended abruptly (truncated chunk, tid %" PRIu32
                             ", seq %" PRIu32 "): expected %" PRIu32
                             " payload bytes, the file ends after %" PRIu64 "; %" PRIu64
                             " bytes lost",
                             at, h->tid, h->seq, h->payload_len,
                             r->file_size - at - GW_CHUNK_HEADER_SIZE, lost);
        else
            gw_reader_report(r, GW_DAMAGE_CHUNK_LENGTH, at, lost, next, h->tid,
                             "offset %" PRIu64 ": chunk payload_len %" PRIu32
                             " runs past the end of the file (%" PRIu64 " bytes); %s",
                             at, h->payload_len, r->file_size, tail);
        break;
    case CHUNK_BAD_CRC: {
        uint64_t end = at + GW_CHUNK_HEADER_SIZE + h->payload_len;
        /* (from v2 on, any of the fields printed may be the damaged one) */
        const char *covers = r->hdr.version >= 2 ? "header and payload" : "payload";
        /* zeros after it: space the writer had claimed and not filled (a full-length chunk
         * with nothing after it was written whole and then damaged) */
        if (at_end && end < r->file_size && all_zero(r, end, r->file_size))
            gw_reader_report(r, GW_DAMAGE_TRUNCATED, at, lost, next, h->tid,
                             "offset %" PRIu64 ": ended abruptly (truncated): the last chunk (tid %" PRIu32
                             ", seq %" PRIu32 ", %" PRIu32 " payload bytes) expected crc32 "
                             "0x%08X of its %s, computed 0x%08X (the writer stopped "
                             "mid-chunk); %" PRIu64 " bytes lost",
                             at, h->tid, h->seq, h->payload_len, h->crc32, covers, crc, lost);
        else
            gw_reader_report(r, GW_DAMAGE_CHUNK_CRC, at, lost, next, h->tid,
                             "offset %" PRIu64 ": chunk (tid %" PRIu32 ", seq %" PRIu32
                             ", %" PRIu32 " payload bytes) expected crc32 0x%08X of its "
                             "%s, computed 0x%08X; %s",
                             at, h->tid, h->seq, h->payload_len, h->crc32, covers, crc, tail);
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
    r->call_id_high = (uint64_t)h->tid << 32; /* until the chunk's CALL_BASE gives a serial */
    r->link_known = 0;  /* until the chunk's CALL_BASE gives a link_base */
    r->corr_base = 0;   /* (and a corr_base) */
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
void gw_calls_end(struct gw_reader *r)
{
    gw_map_put(&r->calls, r->call_key,
               (r->call_next & ~CALLS_UNSURE) | (r->call_unsure ? CALLS_UNSURE : 0));
}

/* Two traces joined into one file (cat a.gwt b.gwt): the second one's events are another
 * process's and are never read as this one's. */
static void second_header(struct gw_reader *r, uint64_t at)
{
    struct gw_file_header other;
    memset(&other, 0, sizeof other);
    uint64_t left = r->file_size - at;
    size_t n = left < sizeof other ? (size_t)left : sizeof other;
    if (gw_reader_read_at(r, at, &other, n) != 0)
        n = 0;
    r->pos = r->file_size;
    r->second_header = 1;  /* (nor are the rings beside this file read) */
    gw_reader_report(r, GW_DAMAGE_SECOND_HEADER, at, left, r->file_size, 0,
                     "offset %" PRIu64 ": expected a chunk, found another trace's file "
                     "header (pid %" PRIu32 "): a second trace was appended to this one; "
                     "reading stops there (%" PRIu64 " bytes of the other process not read: "
                     "split the file at this offset to read them)",
                     at, n >= sizeof other ? other.pid : 0, left);
}

/* Advances to the next intact chunk of a kind we read; its payload is in r->buf.
 * Returns 1, or 0 at the end of the file. */
int gw_chunks_next(struct gw_reader *r)
{
    while (!r->stopped && r->pos < r->file_size) {
        uint64_t at = r->pos;
        uint64_t left = r->file_size - at;
        struct gw_chunk_header h;
        if (left < GW_CHUNK_HEADER_SIZE) {
            r->pos = r->file_size;
            uint8_t tail[sizeof h];
            if (gw_reader_read_at(r, at, tail, (size_t)left) != 0)
                return 0;
            int zeros = 1;
            for (uint64_t i = 0; i < left; i++)
                zeros &= tail[i] == 0;
            gw_reader_report(r, GW_DAMAGE_TRUNCATED, at, left, r->file_size, 0,
                             "offset %" PRIu64 ": ended abruptly (truncated): expected a %u-byte chunk "
                             "header, the file ends after %" PRIu64 " %sbytes",
                             at, (unsigned)GW_CHUNK_HEADER_SIZE, left, zeros ? "zero " : "");
            continue;
        }
        if (gw_reader_read_at(r, at, &h, sizeof h) != 0)
            return 0;
        if (memcmp(&h, GW_FILE_MAGIC, 8) == 0) {
            second_header(r, at);
            return 0;
        }
        /* The definitions pass skips event chunks whose framing is evidently intact
         * without reading their payload. */
        if (r->defs_only && h.magic == GW_CHUNK_MAGIC && h.kind != GW_CHUNK_DEFS &&
            h.payload_len <= GW_MAX_CHUNK_PAYLOAD &&
            h.payload_len <= left - GW_CHUNK_HEADER_SIZE) {
            uint64_t end = at + GW_CHUNK_HEADER_SIZE + h.payload_len;
            uint32_t next_magic = 0;
            if (end == r->file_size ||
                (r->file_size - end >= 4 && gw_reader_read_at(r, end, &next_magic, 4) == 0 &&
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
        r->pos = at + GW_CHUNK_HEADER_SIZE + h.payload_len;
        if (h.kind != GW_CHUNK_EVENTS && h.kind != GW_CHUNK_DEFS) {
            if (r->hdr.version <= GW_READER_VERSION)
                gw_reader_report(r, GW_DAMAGE_CHUNK_KIND, at,
                                 GW_CHUNK_HEADER_SIZE + h.payload_len, r->pos, h.tid,
                                 "offset %" PRIu64 ": expected chunk kind 1 (events) or 2 "
                                 "(definitions) in a v%u file, found %u; chunk skipped",
                                 at, (unsigned)r->hdr.version, (unsigned)h.kind);
            continue;  /* newer writers may add kinds: skip them quietly */
        }
        if (r->defs_only && h.kind != GW_CHUNK_DEFS)
            continue;
        gw_chunk_accept(r, &h, at);
        return 1;
    }
    return 0;
}

void gw_chunk_accept(struct gw_reader *r, const struct gw_chunk_header *h, uint64_t at)
{
    enum seq_state seq = track_seq(r, at, h);
    if (!r->defs_only)
        calls_begin(r, h, seq);
    r->stats.chunks++;
    r->ch = *h;
    r->ch_off = at;
}
