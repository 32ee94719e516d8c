/* Encoding of one record into a caller's buffer. Used by the recorder on the hot path and
 * by tests that need real encoded bytes; the layouts are those of gpuwatch/trace_format.h. */
#ifndef GPUWATCH_RECORD_ENCODE_H
#define GPUWATCH_RECORD_ENCODE_H

#include <string.h>

#include "gpuwatch/trace_format.h"
#include "gpuwatch/varint.h"

/* The largest CALL record: type, 1-byte length, dt, api, dur, result, 5 payload words. */
#define GW_MAX_CALL_RECORD (2 + 9 * GW_VARINT_MAX)
#define GW_CALL_MAX_WORDS 5

/* Writes a CALL or CALL_ERR record; returns its size. Bodies stay under 128 bytes, so the
 * length always fits in one varint byte. */
static inline size_t gw_encode_call(uint8_t *out, int64_t dt, unsigned api_id, uint64_t dur,
                                    int result, const uint64_t *words, unsigned nwords)
{
    uint8_t *body = out + 2;
    size_t n = gw_put_uvarint(body, gw_zigzag(dt));
    n += gw_put_uvarint(body + n, api_id);
    n += gw_put_uvarint(body + n, dur);
    if (result != 0)
        n += gw_put_uvarint(body + n, (uint64_t)(uint32_t)result);
    for (unsigned i = 0; i < nwords; i++)
        n += gw_put_uvarint(body + n, words[i]);
    out[0] = result != 0 ? GW_REC_CALL_ERR : GW_REC_CALL;
    out[1] = (uint8_t)n;
    return n + 2;
}

/* Writes a record of any type whose body is a list of varints followed by raw bytes. */
static inline size_t gw_encode_record(uint8_t *out, uint8_t type, const uint64_t *words,
                                      unsigned nwords, const void *tail, size_t tail_len)
{
    uint8_t body_head[16 * GW_VARINT_MAX];
    size_t n = 0;
    for (unsigned i = 0; i < nwords && i < 16; i++)
        n += gw_put_uvarint(body_head + n, words[i]);
    if (n > sizeof body_head) /* cannot happen; tells the compiler what the loop bounds */
        n = sizeof body_head;
    size_t at = 0;
    out[at++] = type;
    at += gw_put_uvarint(out + at, n + tail_len);
    memcpy(out + at, body_head, n);
    at += n;
    if (tail_len)
        memcpy(out + at, tail, tail_len);
    return at + tail_len;
}

/* Upper bound of gw_encode_record's output size. */
static inline size_t gw_record_bound(unsigned nwords, size_t tail_len)
{
    return 1 + GW_VARINT_MAX + (size_t)nwords * GW_VARINT_MAX + tail_len;
}

#endif
