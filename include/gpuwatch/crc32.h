/* CRC-32 (IEEE 802.3, reflected 0xEDB88320) over chunk payloads. */
#ifndef GPUWATCH_CRC32_H
#define GPUWATCH_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Table-driven; only the writer thread and the reader call it, never a hook. */
static inline uint32_t gw_crc32(const void *data, size_t len)
{
    static uint32_t table[256];
    static int table_ready;
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int bit = 0; bit < 8; bit++)
                c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
            table[i] = c;
        }
        __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
    }
    const uint8_t *bytes = data;
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        crc = table[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

#endif
