/*
 * Test helper: builds trace files from real encoded records (the shim's encoder,
 * libintercept/record_encode.h) with a file header and chunk headers whose CRCs are right.
 * Used by test_reader.c and make_sample_trace.c. Not a writer for production use: it
 * aborts on allocation failure.
 */
#ifndef GPUWATCH_TEST_READER_TRACEWRITER_H
#define GPUWATCH_TEST_READER_TRACEWRITER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuwatch/chunk_crc.h"
#include "gpuwatch/trace_format.h"
#include "record_encode.h"

struct tw_chunk {
    uint8_t *data;
    size_t len, cap;
    uint64_t base_ts;
    uint64_t last_ts;   /* time of the last timed record: the next dt is relative to it */
};

static inline void tw_reserve(struct tw_chunk *c, size_t more)
{
    if (c->len + more <= c->cap)
        return;
    size_t cap = c->cap ? c->cap : 4096;
    while (cap < c->len + more)
        cap *= 2;
    c->data = realloc(c->data, cap);
    if (!c->data)
        abort();
    c->cap = cap;
}

static inline void tw_begin(struct tw_chunk *c, uint64_t base_ts)
{
    c->len = 0;
    c->base_ts = c->last_ts = base_ts;
}

static inline void tw_free(struct tw_chunk *c)
{
    free(c->data);
    memset(c, 0, sizeof *c);
}

/* A CALL (result 0) or CALL_ERR record at absolute time ts. */
static inline void tw_call(struct tw_chunk *c, uint64_t ts, unsigned api, uint64_t dur,
                           int result, const uint64_t *words, unsigned nwords)
{
    tw_reserve(c, GW_MAX_CALL_RECORD);
    c->len += gw_encode_call(c->data + c->len, (int64_t)(ts - c->last_ts), api, dur, result,
                             words, nwords);
    c->last_ts = ts;
}

/* Any record: varint words then raw tail bytes. */
static inline void tw_record(struct tw_chunk *c, uint8_t type, const uint64_t *words,
                             unsigned nwords, const void *tail, size_t tail_len)
{
    tw_reserve(c, gw_record_bound(nwords, tail_len));
    c->len += gw_encode_record(c->data + c->len, type, words, nwords, tail, tail_len);
}

/* A timed record of any type (dt first). */
static inline void tw_timed(struct tw_chunk *c, uint8_t type, uint64_t ts,
                            const uint64_t *words, unsigned nwords)
{
    uint64_t w[16];
    w[0] = gw_zigzag((int64_t)(ts - c->last_ts));
    for (unsigned i = 0; i < nwords && i < 15; i++)
        w[i + 1] = words[i];
    tw_record(c, type, w, nwords + 1, NULL, 0);
    c->last_ts = ts;
}

static inline void tw_lost(struct tw_chunk *c, uint64_t ts, uint64_t count)
{
    tw_timed(c, GW_REC_LOST, ts, &count, 1);
}

static inline void tw_string(struct tw_chunk *c, uint64_t id, const char *text)
{
    tw_record(c, GW_REC_STRING, &id, 1, text, strlen(text));
}

static inline void tw_raw(struct tw_chunk *c, const void *bytes, size_t len)
{
    tw_reserve(c, len);
    memcpy(c->data + c->len, bytes, len);
    c->len += len;
}

/* A valid v1 header with recognisable values. */
static inline struct gw_file_header tw_header(void)
{
    struct gw_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, GW_FILE_MAGIC, 8);
    h.version = GW_FORMAT_VERSION;
    h.min_reader_version = GW_MIN_READER_VERSION;
    h.header_size = GW_FILE_HEADER_SIZE;
    h.endian_mark = GW_ENDIAN_MARK;
    h.feature_flags = GW_FEAT_HOST_CALLS;
    h.clock_source = GW_CLOCK_MONOTONIC;
    h.pid = 4242;
    h.ppid = 1;
    h.rank = h.local_rank = h.world_size = -1;
    h.device_ordinal = 0;
    h.cupti_status = GW_CUPTI_NOT_TRIED;
    h.realtime_minus_trace_ns = 1700000000000000000ll;
    h.start_ns = 1000000000ull;
    h.device_total_mem = 85899345920ull;
    h.device_free_at_start = 84000000000ull;
    snprintf(h.hostname, sizeof h.hostname, "samplehost");
    snprintf(h.device_name, sizeof h.device_name, "NVIDIA Simulated GPU");
    snprintf(h.cupti_reason, sizeof h.cupti_reason, "host-side tracing only");
    snprintf(h.cmdline, sizeof h.cmdline, "python train.py --epochs 1");
    return h;
}

static inline void tw_write_header(FILE *f, const struct gw_file_header *h)
{
    if (fwrite(h, sizeof *h, 1, f) != 1)
        abort();
}

/* Writes the chunk at the file's current position, its CRC as a file of format `version`
 * has it; returns that offset. */
static inline long tw_write_chunk_v(FILE *f, const struct tw_chunk *c, uint32_t tid,
                                    uint16_t kind, uint32_t seq, unsigned version)
{
    struct gw_chunk_header h;
    memset(&h, 0, sizeof h);
    h.magic = GW_CHUNK_MAGIC;
    h.payload_len = (uint32_t)c->len;
    h.tid = tid;
    h.kind = kind;
    h.base_ts_ns = c->base_ts;
    h.seq = seq;
    h.crc32 = gw_chunk_crc(&h, c->data, c->len, version);
    long at = ftell(f);
    if (fwrite(&h, sizeof h, 1, f) != 1 || (c->len && fwrite(c->data, c->len, 1, f) != 1))
        abort();
    return at;
}

/* tw_write_chunk_v for a file of this writer's format (tw_header). */
static inline long tw_write_chunk(FILE *f, const struct tw_chunk *c, uint32_t tid,
                                  uint16_t kind, uint32_t seq)
{
    return tw_write_chunk_v(f, c, tid, kind, seq, GW_FORMAT_VERSION);
}

#endif
