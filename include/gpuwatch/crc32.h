/* CRC-32C (Castagnoli, reflected 0x82F63B78) over chunk payloads: the SSE4.2 instruction
 * where the CPU has it (the writer thread checksums every byte of the trace), a table
 * otherwise. Both give the same value. */
#ifndef GPUWATCH_CRC32_H
#define GPUWATCH_CRC32_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Tables built on first use, by whichever thread gets there first: state goes 0 (none) ->
 * 1 (one thread building) -> 2 (ready, published with release). Returns 1 when `shared`
 * is ready (built now by this thread, or before); 0 when another thread is building it:
 * the caller does not wait, it does without (a private copy, a slower path). */
static inline int gw_crc32c_shared(int *state, void (*build)(void *), void *shared)
{
    int none = 0;
    if (__atomic_load_n(state, __ATOMIC_ACQUIRE) == 2)
        return 1;
    if (!__atomic_compare_exchange_n(state, &none, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 0;
    build(shared);
    __atomic_store_n(state, 2, __ATOMIC_RELEASE);
    return 1;
}

static inline void gw_crc32c_build_table(void *out)
{
    uint32_t *table = out;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int bit = 0; bit < 8; bit++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
        table[i] = c;
    }
}

static inline uint32_t gw_crc32c_table(uint32_t crc, const uint8_t *bytes, size_t len)
{
    static uint32_t shared[256];
    static int state;
    uint32_t private_table[256];
    const uint32_t *table = shared;
    if (!gw_crc32c_shared(&state, gw_crc32c_build_table, shared)) {
        gw_crc32c_build_table(private_table);
        table = private_table;
    }
    for (size_t i = 0; i < len; i++)
        crc = table[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
/* The instruction has a latency of three cycles and a throughput of one per cycle: three
 * independent runs over the thirds of each block keep it busy, and the three CRCs are then
 * combined by appending zeros to the first two (a linear operator on the CRC register,
 * applied through four 256-entry tables made once per block length; zlib's crc32_combine,
 * Mark Adler's crc32c.c). */
#define GW_CRC_BLOCK 256  /* bytes per third */

static inline uint32_t gw_crc32c_gf2_times(const uint32_t *mat, uint32_t vec)
{
    uint32_t sum = 0;
    for (; vec; vec >>= 1, mat++)
        if (vec & 1)
            sum ^= *mat;
    return sum;
}

static inline void gw_crc32c_gf2_square(uint32_t *square, const uint32_t *mat)
{
    for (int n = 0; n < 32; n++)
        square[n] = gw_crc32c_gf2_times(mat, mat[n]);
}

/* Fills the tables that append GW_CRC_BLOCK zero bytes to a CRC register. */
static inline void gw_crc32c_build_zeros(void *out)
{
    uint32_t (*zeros)[256] = out;
    uint32_t odd[32], even[32];
    odd[0] = 0x82F63B78u;  /* one zero bit */
    for (int n = 1; n < 32; n++)
        odd[n] = 1u << (n - 1);
    gw_crc32c_gf2_square(even, odd);  /* two */
    gw_crc32c_gf2_square(odd, even);  /* four */
    const uint32_t *op = NULL;
    for (size_t len = GW_CRC_BLOCK;;) {  /* a power of two */
        gw_crc32c_gf2_square(even, odd);  /* one byte, four, ... */
        len >>= 1;
        if (len == 0) {
            op = even;
            break;
        }
        gw_crc32c_gf2_square(odd, even);  /* two bytes, eight, ... */
        len >>= 1;
        if (len == 0) {
            op = odd;
            break;
        }
    }
    for (uint32_t n = 0; n < 256; n++)
        for (int b = 0; b < 4; b++)
            zeros[b][n] = gw_crc32c_gf2_times(op, n << (8 * b));
}

/* The shared tables (gw_crc32c_shared), or NULL while another thread builds them. */
static inline const uint32_t (*gw_crc32c_block_zeros(void))[256]
{
    static uint32_t zeros[4][256];
    static int state;
    if (!gw_crc32c_shared(&state, gw_crc32c_build_zeros, zeros))
        return NULL;
    return (const uint32_t (*)[256])zeros;
}

static inline uint32_t gw_crc32c_shift(const uint32_t (*zeros)[256], uint32_t crc)
{
    return zeros[0][crc & 0xFF] ^ zeros[1][(crc >> 8) & 0xFF] ^ zeros[2][(crc >> 16) & 0xFF] ^
           zeros[3][crc >> 24];
}

__attribute__((target("sse4.2"))) static inline uint32_t
gw_crc32c_sse42(uint32_t crc, const uint8_t *bytes, size_t len)
{
    uint64_t wide = crc;
    const uint32_t (*zeros)[256] = len >= 3 * GW_CRC_BLOCK ? gw_crc32c_block_zeros() : NULL;
    if (zeros) {  /* (NULL: another thread is building them; one run does as well) */
        do {
            uint64_t c1 = 0, c2 = 0;
            for (size_t i = 0; i < GW_CRC_BLOCK; i += 8) {
                uint64_t w0, w1, w2;
                memcpy(&w0, bytes + i, 8);
                memcpy(&w1, bytes + GW_CRC_BLOCK + i, 8);
                memcpy(&w2, bytes + 2 * GW_CRC_BLOCK + i, 8);
                wide = __builtin_ia32_crc32di(wide, w0);
                c1 = __builtin_ia32_crc32di(c1, w1);
                c2 = __builtin_ia32_crc32di(c2, w2);
            }
            wide = gw_crc32c_shift(zeros, (uint32_t)wide) ^ (uint32_t)c1;
            wide = gw_crc32c_shift(zeros, (uint32_t)wide) ^ (uint32_t)c2;
            bytes += 3 * GW_CRC_BLOCK;
            len -= 3 * GW_CRC_BLOCK;
        } while (len >= 3 * GW_CRC_BLOCK);
    }
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

/* The CRC register after len more bytes: start from GW_CRC32_INIT, end with
 * gw_crc32_final; a CRC over several pieces is the CRC of them joined. */
#define GW_CRC32_INIT 0xFFFFFFFFu

static inline uint32_t gw_crc32_update(uint32_t crc, const void *data, size_t len)
{
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        return gw_crc32c_sse42(crc, data, len);
#endif
    return gw_crc32c_table(crc, data, len);
}

static inline uint32_t gw_crc32_final(uint32_t crc)
{
    return crc ^ 0xFFFFFFFFu;
}

static inline uint32_t gw_crc32(const void *data, size_t len)
{
    return gw_crc32_final(gw_crc32_update(GW_CRC32_INIT, data, len));
}

#endif
