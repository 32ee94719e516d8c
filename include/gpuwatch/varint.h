/* LEB128 varints and zigzag, the integer encoding of every record body. */
#ifndef GPUWATCH_VARINT_H
#define GPUWATCH_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define GW_VARINT_MAX 10

static inline size_t gw_put_uvarint(uint8_t *out, uint64_t value)
{
    /* Most fields (ids, small deltas) take one or two bytes: spell those out. */
    if (value < 0x80) {
        out[0] = (uint8_t)value;
        return 1;
    }
    if (value < 0x4000) {
        out[0] = (uint8_t)(value | 0x80);
        out[1] = (uint8_t)(value >> 7);
        return 2;
    }
    size_t n = 0;
    while (value >= 0x80) {
        out[n++] = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    out[n++] = (uint8_t)value;
    return n;
}

static inline uint64_t gw_zigzag(int64_t value)
{
    return ((uint64_t)value << 1) ^ (uint64_t)(value >> 63);
}

static inline int64_t gw_unzigzag(uint64_t value)
{
    return (int64_t)(value >> 1) ^ -(int64_t)(value & 1);
}

/* Returns bytes consumed, or 0 when the input ends early or the varint is over-long. */
static inline size_t gw_get_uvarint(const uint8_t *in, size_t avail, uint64_t *value)
{
    if (avail && in[0] < 0x80) {
        *value = in[0];
        return 1;
    }
    /* Durations and time deltas take two or three bytes: spelled out too (the reader's
     * hottest path). */
    if (avail >= 2 && in[1] < 0x80) {
        *value = (uint64_t)(in[0] & 0x7F) | (uint64_t)in[1] << 7;
        return 2;
    }
    if (avail >= 3 && in[2] < 0x80) {
        *value = (uint64_t)(in[0] & 0x7F) | (uint64_t)(in[1] & 0x7F) << 7 |
                 (uint64_t)in[2] << 14;
        return 3;
    }
    uint64_t result = 0;
    for (size_t i = 0; i < avail && i < GW_VARINT_MAX; i++) {
        result |= (uint64_t)(in[i] & 0x7F) << (7 * i);
        if (!(in[i] & 0x80)) {
            *value = result;
            return i + 1;
        }
    }
    return 0;
}

/* GW_VARINT_PAD readable bytes after the end of a buffer let gw_get_uvarint_padded read
 * any varint that starts inside it without a length check per byte. */
#define GW_VARINT_PAD (GW_VARINT_MAX + 8)

/* gw_get_uvarint without a length: in must have GW_VARINT_PAD readable bytes. Returns
 * the bytes the varint takes (1 to GW_VARINT_MAX), or 0 when it is over-long; the same
 * value as gw_get_uvarint(in, avail, value) whenever the result is <= avail (a caller
 * that finds it larger has a varint cut by its end, and checks that once, after). */
static inline size_t gw_get_uvarint_padded(const uint8_t *in, uint64_t *value)
{
    if (in[0] < 0x80) {
        *value = in[0];
        return 1;
    }
    if (in[1] < 0x80) {
        *value = (uint64_t)(in[0] & 0x7F) | (uint64_t)in[1] << 7;
        return 2;
    }
    if (in[2] < 0x80) {
        *value = (uint64_t)(in[0] & 0x7F) | (uint64_t)(in[1] & 0x7F) << 7 |
                 (uint64_t)in[2] << 14;
        return 3;
    }
    return gw_get_uvarint(in, GW_VARINT_MAX, value);
}

#endif
