/* CRC-32C (include/gpuwatch/crc32.h) and the chunk CRC (chunk_crc.h): the standard check
 * value; the SSE4.2 paths (8-byte loop, three interleaved runs joined through the zeros
 * tables) equal the table; pieces equal the whole; the v1 and v2 chunk rules; and threads
 * that all start cold (racing to build the lazy tables) get the right values. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gpuwatch/chunk_crc.h"

static uint8_t bytes[8192];

static void fill(void)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof bytes; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        bytes[i] = (uint8_t)(x >> 56);
    }
}

/* Bit by bit, straight from the definition: the reference. */
static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return crc ^ 0xFFFFFFFFu;
}

static void test_check_value(void **state)
{
    (void)state;
    assert_int_equal(gw_crc32("123456789", 9), 0xE3069283u);  /* CRC-32C's check value */
    assert_int_equal(gw_crc32("", 0), 0);
}

static void test_paths_agree(void **state)
{
    (void)state;
    fill();
    /* around the 8-byte words and the 3 x 256-byte blocks */
    for (size_t n = 0; n <= 3 * GW_CRC_BLOCK * 3 + 17; n += (n < 64 ? 1 : 37)) {
        uint32_t want = crc_bitwise(bytes + 3, n);
        assert_int_equal(gw_crc32(bytes + 3, n), want);
        assert_int_equal(gw_crc32c_table(0xFFFFFFFFu, bytes + 3, n) ^ 0xFFFFFFFFu, want);
#if defined(__x86_64__)
        if (__builtin_cpu_supports("sse4.2"))
            assert_int_equal(gw_crc32c_sse42(0xFFFFFFFFu, bytes + 3, n) ^ 0xFFFFFFFFu, want);
#endif
    }
}

static void test_pieces(void **state)
{
    (void)state;
    fill();
    uint32_t whole = gw_crc32(bytes, 5000);
    for (size_t cut = 0; cut <= 5000; cut += 499) {
        uint32_t crc = gw_crc32_update(GW_CRC32_INIT, bytes, cut);
        crc = gw_crc32_update(crc, bytes + cut, 5000 - cut);
        assert_int_equal(gw_crc32_final(crc), whole);
    }
}

static void test_chunk_rules(void **state)
{
    (void)state;
    fill();
    struct gw_chunk_header h = {.magic = GW_CHUNK_MAGIC, .payload_len = 1000, .tid = 7,
                                .kind = GW_CHUNK_EVENTS, .base_ts_ns = 123456789, .seq = 3};
    assert_int_equal(gw_chunk_crc(&h, bytes, 1000, 1), gw_crc32(bytes, 1000));
    uint8_t joined[GW_CHUNK_CHECKED_HEADER + 1000];
    memcpy(joined, &h, GW_CHUNK_CHECKED_HEADER);
    memcpy(joined + GW_CHUNK_CHECKED_HEADER, bytes, 1000);
    uint32_t v2 = gw_chunk_crc(&h, bytes, 1000, 2);
    assert_int_equal(v2, gw_crc32(joined, sizeof joined));
    h.crc32 = 0xDEADBEEF;  /* not covered: it holds the result */
    assert_int_equal(gw_chunk_crc(&h, bytes, 1000, 2), v2);
    h.base_ts_ns ^= 1;
    assert_true(gw_chunk_crc(&h, bytes, 1000, 2) != v2);
    assert_int_equal(gw_chunk_crc(&h, bytes, 1000, 1), gw_crc32(bytes, 1000));
}

#define THREADS 8

static pthread_barrier_t start;

static void *crc_cold(void *arg)
{
    uint32_t *out = arg;
    pthread_barrier_wait(&start);
    out[0] = gw_crc32(bytes, sizeof bytes);
    out[1] = gw_crc32c_table(0xFFFFFFFFu, bytes, 4096) ^ 0xFFFFFFFFu;
    return NULL;
}

/* (its own process: ctest runs each test program once, so the tables start unbuilt; this
 * test runs first) */
static void test_cold_threads(void **state)
{
    (void)state;
    fill();
    pthread_t t[THREADS];
    uint32_t got[THREADS][2];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, crc_cold, got[i]), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    uint32_t want = crc_bitwise(bytes, sizeof bytes), want4k = crc_bitwise(bytes, 4096);
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(got[i][0], want);
        assert_int_equal(got[i][1], want4k);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cold_threads),
        cmocka_unit_test(test_check_value),
        cmocka_unit_test(test_paths_agree),
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_chunk_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
