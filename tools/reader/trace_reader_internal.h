/* The reader's state, shared by the trace_*.c files of the reader library only. */
#ifndef GPUWATCH_TRACE_READER_INTERNAL_H
#define GPUWATCH_TRACE_READER_INTERNAL_H

#include "gpuwatch/varint.h"
#include "gw_map.h"
#include "trace_reader.h"

struct gw_string_entry {
    char *text;   /* NUL-terminated copy, len bytes before the NUL */
    size_t len;
};

/* Call stacks by id (trace_stacks.c); each entry's frames are their own allocation. */
struct gw_stack_table {
    union gw_any_stack {
        struct gw_stack native;
        struct gw_pystack py;
    } *entries;
    size_t count, cap;
    struct gw_map ids;          /* id -> index in entries */
};

struct kineto;

struct gw_reader {
    int fd;
    struct kineto *kineto;      /* a PyTorch profiler trace (kineto/kineto.h), else NULL */
    char *name;                 /* used in every message */
    uint64_t file_size;         /* at open */
    struct gw_file_header hdr;
    uint64_t data_start;        /* header_size: the first chunk */
    uint64_t pos;               /* next chunk offset */

    uint8_t *buf;               /* payload of the chunk at buf_offset */
    size_t buf_cap, buf_len;
    uint64_t buf_offset;

    int in_chunk;               /* records of ch are being returned */
    struct gw_chunk_header ch;
    uint64_t ch_off;
    size_t rec_off;             /* next record in buf */
    uint64_t ts;                /* time of the last timed record */

    int defs_only;              /* gw_reader_load_defs pass */
    uint64_t host_copy_bps;     /* the best HOST_COPY rate read so far (0: none) */
    uint64_t wake_ns;           /* HOST_COPY's wake-up latency (0: none) */
    int second_header;          /* reading stopped at another trace's header */
    /* trace_salvage.c: the rings file beside the trace, once looked for */
    int salvage_tried, salvage_fd;
    uint64_t salvage_size, salvage_pos;
    int quiet;                  /* no damage reports */
    int stopped;                /* after an I/O error */

    gw_damage_fn on_damage;
    void *on_damage_user;
    struct gw_damage damage[GW_READER_KEEP_DAMAGE];
    size_t ndamage;
    struct gw_reader_stats stats;
    struct gw_map seq;          /* tid | kind << 32 -> next expected seq */

    /* host call numbering (trace_format.h: call ids), per tid | kind << 32: the next
     * number, with CALLS_UNSURE set once records of the thread were lost uncounted. The
     * current chunk's thread is kept in the fields below and written back at its end. */
    struct gw_map calls;
    uint64_t call_key;          /* key of the current chunk's thread */
    uint64_t call_next;         /* its next call number */
    unsigned call_unsure;       /* and whether numbers may be short */
    uint64_t call_id_high;      /* the high half of its call ids: the thread serial from
                                 * CALL_BASE, or the tid without one, << 32 */
    /* GPU records' `call` words (trace_format.h): the current chunk's link_base, known
     * once its CALL_BASE gave one; a linked record reads as a CORRELATION event, then
     * the GPU event, kept here until the next gw_reader_next */
    uint64_t link_base;
    unsigned link_known;
    /* GPU records' correlation ids in a trace with GW_FEAT_CORR_DELTA: the previous one's
     * (the chunk's CALL_BASE's fourth word at its start, else 0) */
    uint64_t corr_base;
    int has_pending;
    struct gw_event pending;

    /* definition tables (trace_tables.c) */
    struct gw_string_entry *strings;
    size_t nstrings, strings_cap;
    struct gw_map string_ids;   /* id -> index in strings */
    struct gw_shape *shapes;
    size_t nshapes, shapes_cap;
    struct gw_map shape_ids;
    struct gw_device_def *devices;
    size_t ndevices, devices_cap;
    struct gw_map device_ids;
    struct gw_clock_point *clocks;
    size_t nclocks, clocks_cap;
    struct gw_map clock_ids;    /* trace_ns -> index, so a second pass adds nothing */
    struct gw_map streams;      /* id -> handle */
    struct gw_map stream_cupti; /* id -> CUPTI stream id (nonzero ones only) */
    struct gw_map cupti_streams; /* CUPTI stream id -> id */
    /* the latest of its lookups (gw_reader_stream_by_cupti: nearly every GPU record is on
     * the stream of the one before; a definition clears it) */
    struct { int valid; uint64_t cupti, id; } cupti_memo;
    struct gw_map threads;      /* tid -> name string id */
    struct gw_stack_table stacks, pystacks;  /* trace_stacks.c: STACK, PYSTACK */
};

#define GW_CHUNK_HEADER_SIZE ((uint64_t)sizeof(struct gw_chunk_header))
#define GW_NO_OFFSET UINT64_MAX  /* buf_offset: no payload loaded */

/* trace_chunks.c: reads len bytes at off; 0 on success, -1 on error or a short read
 * (reported as I/O damage, after which the reader stops). */
int gw_reader_read_at(struct gw_reader *r, uint64_t off, void *dst, size_t len);
/* trace_chunks.c: advances to the next intact chunk of a kind being read; its payload is
 * in r->buf and its header in r->ch. 1, or 0 at the end of the file (then the caller asks
 * gw_salvage_next for what the rings file holds: salvage frames its chunks with
 * trace_chunks.c, so trace_chunks.c does not call it back). */
int gw_chunks_next(struct gw_reader *r);
/* trace_chunks.c: takes h (read at offset at, its payload in r->buf) as the current chunk:
 * its thread's chunk sequence and call numbering go on from it. */
void gw_chunk_accept(struct gw_reader *r, const struct gw_chunk_header *h, uint64_t at);
/* trace_chunks.c: r->buf holds at least len bytes (and the decoder's padding after them);
 * -1 when memory runs out (reported at offset at; the reader stops). */
int gw_reader_buf_reserve(struct gw_reader *r, uint64_t at, size_t len);
/* trace_salvage.c: after the file's last chunk, the next chunk of records a killed process
 * left in its rings file, made as the writer would have made it: 1, or 0 when none is left.
 * gw_salvage_close when the reader closes. */
int gw_salvage_next(struct gw_reader *r);
void gw_salvage_close(struct gw_reader *r);
/* trace_chunks.c: keeps the numbering of the current chunk's thread for its next chunk. */
void gw_calls_end(struct gw_reader *r);

/* Records a damage report (unless the reader is quiet) and calls the callback. For
 * GW_DAMAGE_LOST_CHUNKS, lost_bytes carries the number of lost chunks instead. */
void gw_reader_report(struct gw_reader *r, enum gw_damage_kind kind, uint64_t offset,
                      uint64_t lost_bytes, uint64_t resume, uint32_t tid, const char *fmt,
                      ...) __attribute__((format(printf, 7, 8)));

/* Table updates; each keeps the reader usable when memory runs out (the definition is
 * then dropped). */
const char *gw_tables_add_string(struct gw_reader *r, uint64_t id, const uint8_t *bytes,
                                 size_t len);
void gw_tables_add_shape(struct gw_reader *r, const struct gw_shape *shape);
void gw_tables_add_device(struct gw_reader *r, const struct gw_device_def *device);
void gw_tables_add_clock(struct gw_reader *r, const struct gw_clock_point *point);
void gw_tables_add_stream(struct gw_reader *r, uint64_t id, uint64_t handle,
                          uint64_t cupti_stream_id);
void gw_tables_free(struct gw_reader *r);

/* trace_stacks.c: decodes the body of a STACK definition (after its type and length) into
 * ev and the stack table; 1 when ev holds a GW_EV_STACK event. */
/* The same for PYSTACK (GW_EV_PYSTACK) records, and PYSITE or STACKSITE (type) records. */
int gw_pystacks_decode(struct gw_reader *r, const uint8_t *body, size_t len, uint64_t off,
                       struct gw_event *ev);
int gw_site_decode(struct gw_reader *r, unsigned type, const uint8_t *body, size_t len,
                   uint64_t off, struct gw_event *ev);
int gw_stacks_decode(struct gw_reader *r, const uint8_t *body, size_t len, uint64_t off,
                     struct gw_event *ev);
void gw_stacks_free(struct gw_reader *r);
/* A PYSTACK made by a reader of another format (the Kineto reader's python_function
 * events): kept as a decoded one is; NULL when memory runs out. */
const struct gw_pystack *gw_tables_add_pystack(struct gw_reader *r, uint64_t id,
                                              const struct gw_pyframe *frames, unsigned n);

/* ---- reading a record's body (trace_decode.c, trace_stacks.c) ---- */

/* A record body being read: p moves towards end. */
struct cursor {
    const uint8_t *p, *end;
};

static inline size_t left(const struct cursor *c)
{
    return (size_t)(c->end - c->p);
}

static inline __attribute__((always_inline)) int get(struct cursor *c, uint64_t *value)
{
    if (c->p < c->end && c->p[0] < 0x80) {  /* most words are one byte */
        *value = *c->p++;
        return 0;
    }
    size_t k = gw_get_uvarint(c->p, left(c), value);
    if (k == 0)
        return -1;
    c->p += k;
    return 0;
}

/* Reads up to n varints; returns how many were read before the body ended. */
static inline unsigned get_words(struct cursor *c, uint64_t *w, unsigned n)
{
    unsigned i = 0;
    while (i < n && get(c, &w[i]) == 0)
        i++;
    for (unsigned j = i; j < n; j++)
        w[j] = 0;
    return i;
}

#endif
