/* The CRC a chunk header carries (trace_format.h, gw_chunk_header.crc32), for the writer
 * that sets it and the reader that checks it. */
#ifndef GPUWATCH_CHUNK_CRC_H
#define GPUWATCH_CHUNK_CRC_H

#include <stddef.h>

#include "gpuwatch/crc32.h"
#include "gpuwatch/trace_format.h"

/* Bytes of the chunk header before crc32: what a v2 CRC covers ahead of the payload. */
#define GW_CHUNK_CHECKED_HEADER 28u
_Static_assert(offsetof(struct gw_chunk_header, crc32) == GW_CHUNK_CHECKED_HEADER,
               "crc32 is the header's last field");

/* A file of format `version`: v1 covers the payload alone, so a damaged tid, kind, base
 * time or sequence number went unseen (a base time off by a flipped bit moves every event
 * of the chunk); from v2 on the header's fields before crc32 come first. */
static inline uint32_t gw_chunk_crc(const struct gw_chunk_header *h, const void *payload,
                                    size_t len, unsigned version)
{
    uint32_t crc = GW_CRC32_INIT;
    if (version >= 2)
        crc = gw_crc32_update(crc, h, GW_CHUNK_CHECKED_HEADER);
    return gw_crc32_final(gw_crc32_update(crc, payload, len));
}

#endif
