/*
 * The reader's fast paths, shared by gw_reader_next (trace_decode.c) and
 * gw_reader_next_briefs (trace_briefs.c): a CALL/CALL_ERR or GPU_KERNEL record parsed with
 * 8-byte varint loads and no per-byte length checks, or refused (0) for anything out of
 * the ordinary, which the general decoder then reads and reports as always.
 */
#ifndef GPUWATCH_TRACE_FAST_H
#define GPUWATCH_TRACE_FAST_H

#include "trace_reader_internal.h"

#include "gpuwatch/varint.h"

/* call_spec.fill of the families whose union fields are not their payload words in order
 * (VMM and COPY): more than any count of words. */
#define GW_FILL_SWITCH 0xFF

/* What a call record of each api id carries: its family (as gw_api_family, + 1 so that the
 * ids missing from api_list.h read as 0: unknown), its family's payload words and how many
 * union words its fields take when they are those words in order (GW_FILL_SWITCH: set
 * field by field). One table, read inline, because every call needs them. */
struct gw_call_spec {
    uint8_t family_1;
    uint8_t words;
    uint8_t fill;
};
extern const struct gw_call_spec gw_call_specs[GW_API_ID_LIMIT];

/* api_list.h never assigns id 0, so its empty row stands for every unknown id */
static inline const struct gw_call_spec *gw_call_spec_of(uint64_t api)
{
    return &gw_call_specs[api < GW_API_ID_LIMIT ? api : 0];
}

/* A call record parsed by gw_fast_call_parse. */
struct gw_fast_call {
    size_t next;                    /* offset of the record after it */
    uint64_t dt, api, dur, result;  /* dt still zigzagged */
    unsigned nwords;
    const struct gw_call_spec *spec;
};

/* The framing and fixed fields of the CALL or CALL_ERR record at buf[at] (call->next, dt,
 * api, dur, result), each varint decoded without a length and the ends compared with the
 * record's after (a varint cut by the end runs past it, within the padding: one that
 * starts before the payload's end stops at its first zero pad byte at the latest, and one
 * that starts in the padding takes one byte). 1 with *q at its payload words and *end
 * after them; 0 for a cut framing or an over-long or cut varint. */
static inline __attribute__((always_inline)) int gw_fast_call_head(
    const uint8_t *buf, size_t len, size_t at, struct gw_fast_call *call, const uint8_t **q_out,
    const uint8_t **end_out)
{
    const uint8_t *p = buf + at;
    uint64_t body_len;
    size_t room = len - at - 1;  /* bytes after the type byte */
    size_t k = gw_get_uvarint_padded(p + 1, &body_len);
    if (k - 1 >= room || body_len > room - k)  /* k == 0 wraps: over-long */
        return 0;
    const uint8_t *q = p + 1 + k, *end = q + body_len;
    call->next = at + 1 + k + (size_t)body_len;
    k = gw_get_uvarint_padded(q, &call->dt);
    if (k == 0)
        return 0;
    q += k;
    k = gw_get_uvarint_padded(q, &call->api);
    if (k == 0)
        return 0;
    q += k;
    k = gw_get_uvarint_padded(q, &call->dur);
    if (k == 0)
        return 0;
    q += k;
    if (q > end)
        return 0;
    call->result = 0;
    if (p[0] == GW_REC_CALL_ERR) {
        k = gw_get_uvarint_padded(q, &call->result);
        if (k == 0)
            return 0;
        q += k;
        if (q > end)
            return 0;
    }
    *q_out = q;
    *end_out = end;
    return 1;
}

/* The CALL or CALL_ERR record at buf[at], whole: gw_fast_call_head, then its payload words
 * into words[0..] (and into union_words[0..] too when that is not NULL). 1 with *call
 * filled; 0 for what the head refuses, fewer payload words than the family's, more than
 * GW_EVENT_MAX_WORDS or more than its union takes. Nothing of the reader is read or
 * changed. */
static inline __attribute__((always_inline)) int gw_fast_call_parse(
    const uint8_t *buf, size_t len, size_t at, uint64_t *words, uint64_t *union_words,
    struct gw_fast_call *call)
{
    const uint8_t *q, *end;
    if (!gw_fast_call_head(buf, len, at, call, &q, &end))
        return 0;
    const struct gw_call_spec *spec = gw_call_spec_of(call->api);
    unsigned n = 0;
    while (q < end) {
        if (n == GW_EVENT_MAX_WORDS)
            return 0;
        uint64_t v;
        size_t k = gw_get_uvarint_padded(q, &v);
        if (k == 0)
            return 0;
        words[n] = v;
        if (union_words)
            union_words[n] = v;
        q += k;
        n++;
    }
    if (q > end)
        return 0;
    if (spec->family_1 && n < spec->words)
        return 0;
    if (n > spec->fill)  /* a newer writer's words: not in the union */
        return 0;
    call->nwords = n;
    call->spec = spec;
    return 1;
}

/* gw_fast_call_parse for a launch (family GW_FAM_LAUNCH, whose union takes 3 words: shape,
 * stream, handle), its words read one by one rather than in a loop: 1 with *call and
 * w[0..2] filled (w[2] 0 when absent); 0 for any other call, or what gw_fast_call_parse
 * would refuse. */
static inline __attribute__((always_inline)) int gw_fast_launch_parse(
    const uint8_t *buf, size_t len, size_t at, uint64_t w[3], struct gw_fast_call *call)
{
    const uint8_t *q, *end;
    if (!gw_fast_call_head(buf, len, at, call, &q, &end))
        return 0;
    const struct gw_call_spec *spec = gw_call_spec_of(call->api);
    if (spec->family_1 != GW_FAM_LAUNCH + 1)
        return 0;
    size_t k = gw_get_uvarint_padded(q, &w[0]);
    if (k == 0)
        return 0;
    q += k;
    k = gw_get_uvarint_padded(q, &w[1]);
    if (k == 0)
        return 0;
    q += k;
    unsigned n = 2;
    w[2] = 0;
    if (q < end) {
        k = gw_get_uvarint_padded(q, &w[2]);
        if (k == 0)
            return 0;
        q += k;
        n = 3;
    }
    /* past the end: cut; before it: a fourth word, more than the union takes; and fewer
     * than the api's words (3 for graph and host-function launches) */
    if (q != end || n < spec->words)
        return 0;
    call->nwords = n;
    call->spec = spec;
    return 1;
}

/* The GPU_KERNEL record at buf[at], parsed as gw_fast_call_parse parses a call: 1 with
 * *next, *dt and the six words of a v1 kernel record (words after them are ignored, as
 * decode_timed ignores them); 0 for anything else. */
static inline __attribute__((always_inline)) int gw_fast_kernel_parse(const uint8_t *buf,
                                                                      size_t len, size_t at,
                                                                      size_t *next,
                                                                      uint64_t *dt,
                                                                      uint64_t w[6])
{
    const uint8_t *p = buf + at;
    uint64_t body_len;
    size_t room = len - at - 1;
    size_t k = gw_get_uvarint_padded(p + 1, &body_len);
    if (k - 1 >= room || body_len > room - k)
        return 0;
    const uint8_t *q = p + 1 + k, *end = q + body_len;
    *next = at + 1 + k + (size_t)body_len;
    k = gw_get_uvarint_padded(q, dt);
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
    return 1;
}

/* The span of the records read (stats.first_ts_ns, last_ts_ns) widened by [ts, ts + dur). */
static inline void gw_widen_span(uint64_t *first, uint64_t *last, uint64_t ts, uint64_t dur)
{
    uint64_t end = ts + dur;
    if (end < ts)
        end = UINT64_MAX;  /* a duration that wraps: the record's own problem */
    if (*first == 0 || ts < *first)
        *first = ts;
    if (end > *last)
        *last = end;
}

#endif
