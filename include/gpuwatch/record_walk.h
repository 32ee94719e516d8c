/* Walking record framing without knowing record bodies: used by the shim's writer (to
 * learn the time a chunk ends at) and by the reader (to skip unknown record types). */
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

/* The timestamp of the last timed record in buf, given the time its dt chain starts
 * from. Returns start_ts when there is none. */
static inline uint64_t gw_last_record_time(const uint8_t *buf, size_t len, uint64_t start_ts)
{
    uint64_t ts = start_ts;
    size_t offset = 0;
    struct gw_record_view rec;
    while (gw_next_record(buf, len, &offset, &rec) == 0) {
        uint64_t dt;
        if (rec.type >= 1 && rec.type <= GW_REC_TIMED_MAX &&
            gw_get_uvarint(rec.body, rec.body_len, &dt))
            ts += (uint64_t)gw_unzigzag(dt);
    }
    return ts;
}

#endif
