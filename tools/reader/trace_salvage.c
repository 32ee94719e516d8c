/*
 * After a trace's last chunk: the records a killed process left in its rings file
 * (TRACE.gwt.rings, trace_format.h), those the trace does not hold, as one EVENTS chunk per
 * thread made as the writer would have made it (GW_REC_CALL_BASE first), and the
 * definitions not yet written as one DEFS chunk (read in the definitions pass). A clean exit
 * removes the file; one left behind is read whatever the reason (SIGKILL, the out-of-memory
 * killer, a crash the flush could not outrun).
 *
 * Which records the trace holds: those before the slot's committed tail; and, when the
 * writer was writing the chunk of seq pending_seq as the process died, those before
 * pending_tail too if that chunk was read whole (the thread's next expected seq is past it).
 * A chunk the kill cut short was not read, so its records come from the ring.
 */
#include "trace_reader_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuwatch/varint.h"

#define MAX_RING_CAPACITY (1ull << 31)

static void open_rings(struct gw_reader *r)
{
    r->salvage_tried = 1;
    size_t len = strlen(r->name) + sizeof GW_RINGS_SUFFIX;
    char *path = malloc(len);
    if (!path)
        return;
    memcpy(path, r->name, len - sizeof GW_RINGS_SUFFIX);
    memcpy(path + len - sizeof GW_RINGS_SUFFIX, GW_RINGS_SUFFIX, sizeof GW_RINGS_SUFFIX);
    r->salvage_fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    struct stat st;
    if (r->salvage_fd >= 0 && fstat(r->salvage_fd, &st) == 0)
        r->salvage_size = (uint64_t)st.st_size;
}

static int read_exact(int fd, void *dst, size_t len, uint64_t at)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, (uint8_t *)dst + done, len - done, (off_t)(at + done));
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

/* The next chunk seq of a thread (or of the definitions) as read so far (0: none). */
static uint64_t next_seq_read(struct gw_reader *r, uint32_t tid, uint16_t kind)
{
    uint64_t *next = gw_map_get(&r->seq, (uint64_t)tid | (uint64_t)kind << 32);
    return next ? *next : 0;
}

/* Makes the chunk of slot s (at offset at of the rings file) in r->buf; 1, or 0 when the
 * trace holds all its records or the slot is not consistent. */
static int make_chunk(struct gw_reader *r, const struct gw_ring_slot *s, uint64_t at,
                      struct gw_chunk_header *h)
{
    uint16_t kind = s->kind == GW_RING_DEFS ? GW_CHUNK_DEFS : GW_CHUNK_EVENTS;
    uint64_t tail = s->tail, last_ts = s->last_ts, calls = s->calls;
    uint32_t seq = s->seq;
    if (s->pending && next_seq_read(r, s->tid, kind) > s->pending_seq) {
        tail = s->pending_tail;
        last_ts = s->pending_last_ts;
        calls = s->pending_calls;
        seq = s->pending_seq + 1;
    }
    uint64_t len = s->head - tail;
    if (s->head <= tail || len > s->capacity)
        return 0;
    uint8_t call_base[2 + 2 * GW_VARINT_MAX];
    size_t base_len = 0;
    if (kind == GW_CHUNK_EVENTS) {  /* (definitions number no calls) */
        size_t body = gw_put_uvarint(call_base + 2, s->serial);
        body += gw_put_uvarint(call_base + 2 + body, calls);
        call_base[0] = GW_REC_CALL_BASE;
        call_base[1] = (uint8_t)body;  /* (two varints: under 128 bytes, one length byte) */
        base_len = 2 + body;
    }
    if (gw_reader_buf_reserve(r, r->file_size, base_len + len) != 0)
        return 0;
    memcpy(r->buf, call_base, base_len);
    uint64_t data = at + GW_RING_SLOT_HEADER, offset = tail & (s->capacity - 1);
    uint64_t first = s->capacity - offset < len ? s->capacity - offset : len;
    if (read_exact(r->salvage_fd, r->buf + base_len, first, data + offset) != 0 ||
        read_exact(r->salvage_fd, r->buf + base_len + first, len - first, data) != 0)
        return 0;
    memset(r->buf + base_len + len, 0, GW_VARINT_PAD);
    r->buf_offset = GW_NO_OFFSET;
    r->buf_len = base_len + len;
    *h = (struct gw_chunk_header){
        .magic = GW_CHUNK_MAGIC, .payload_len = (uint32_t)(base_len + len), .tid = s->tid,
        .kind = kind, .base_ts_ns = kind == GW_CHUNK_EVENTS ? last_ts : 0, .seq = seq,
    };
    r->stats.salvaged_chunks++;
    r->stats.salvaged_bytes += len;
    return 1;
}

int gw_salvage_next(struct gw_reader *r)
{
    if (r->stopped)
        return 0;
    if (!r->salvage_tried)
        open_rings(r);
    while (r->salvage_fd >= 0 && r->salvage_pos + GW_RING_SLOT_HEADER <= r->salvage_size) {
        struct gw_ring_slot s;
        uint64_t at = r->salvage_pos;
        if (read_exact(r->salvage_fd, &s, sizeof s, at) != 0 ||
            memcmp(s.magic, GW_RING_MAGIC, sizeof s.magic) != 0 || s.capacity < 64 ||
            s.capacity > MAX_RING_CAPACITY || (s.capacity & (s.capacity - 1)))
            break;  /* not a slot: nothing after it can be found either */
        r->salvage_pos = at + GW_RING_SLOT_HEADER + s.capacity;
        struct gw_chunk_header h;
        /* the definitions in the definitions pass, the threads' records after it */
        int wanted = r->defs_only ? s.kind == GW_RING_DEFS : s.kind == GW_RING_EVENTS;
        if (wanted && s.pid == r->hdr.pid && make_chunk(r, &s, at, &h)) {
            gw_chunk_accept(r, &h, r->file_size);
            return 1;
        }
    }
    r->salvage_pos = r->salvage_size;
    return 0;
}

void gw_salvage_close(struct gw_reader *r)
{
    if (r->salvage_fd >= 0)
        close(r->salvage_fd);
    r->salvage_fd = -1;
}
