/* CRC-32C (Castagnoli, reflected 0x82F63B78) over chunk payloads: the SSE4.2 instruction
 * where the CPU has it (the writer thread checksums every byte of the trace), a table
 * otherwise. Both give the same value. */
#ifndef GPUWATCH_CRC32_H
#define GPUWATCH_CRC32_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t gw_crc32c_table(uint32_t crc, const uint8_t *bytes, size_t len)
{
    static uint32_t table[256];
    static int table_ready;
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int bit = 0; bit < 8; bit++)
                c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
            table[i] = c;
        }
        __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
    }
    for (size_t i = 0; i < len; i++)
        crc = table[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static inline uint32_t
gw_crc32c_sse42(uint32_t crc, const uint8_t *bytes, size_t len)
{
    uint64_t wide = crc;
    for (; len >= 8; bytes += 8, len -= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        wide = __builtin_ia32_crc32di(wide, word);
    }
    crc = (uint32_t)wide;
    for (; len; bytes++, len--)
        crc = __builtin_ia32_crc32qi(crc, *bytes);
    return crc;
}
#endif

static inline uint32_t gw_crc32(const void *data, size_t len)
{
    uint32_t crc = 0xFFFFFFFFu;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        return gw_crc32c_sse42(crc, data, len) ^ 0xFFFFFFFFu;
#endif
    return gw_crc32c_table(crc, data, len) ^ 0xFFFFFFFFu;
}

#endif
