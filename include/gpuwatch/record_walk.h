/* Walking record framing without knowing record bodies: used by the shim's writer (to
 * learn where a chunk ends, in time and in calls) and by the reader (to skip unknown
 * record types). */
#ifndef GPUWATCH_RECORD_WALK_H
#define GPUWATCH_RECORD_WALK_H

#include "gpuwatch/trace_format.h"
#include "gpuwatch/varint.h"

struct gw_record_view {
    uint8_t type;
    const uint8_t *body;
    size_t body_len;
};

/* Parses the record at buf[*offset]; advances *offset. Returns 0 on success, -1 when the
 * framing is cut or inconsistent (then *offset is unchanged). */
static inline int gw_next_record(const uint8_t *buf, size_t len, size_t *offset,
                                 struct gw_record_view *out)
{
    size_t at = *offset;
    if (at >= len)
        return -1;
    uint64_t body_len;
    size_t n = gw_get_uvarint(buf + at + 1, len - at - 1, &body_len);
    if (n == 0 || body_len > len - at - 1 - n)
        return -1;
    out->type = buf[at];
    out->body = buf + at + 1 + n;
    out->body_len = (size_t)body_len;
    *offset = at + 1 + n + (size_t)body_len;
    return 0;
}

#endif
