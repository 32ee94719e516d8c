/* The varint codec every record body uses: each length's boundaries round-trip, through the
 * spelled-out one-, two- and three-byte paths and the loop; a cut or over-long varint is
 * refused (returns 0), whichever path sees it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpuwatch/varint.h"

static void test_boundaries_round_trip(void **state)
{
    (void)state;
    /* the largest value of each encoded length and the smallest of the next */
    for (unsigned bytes = 1; bytes <= 10; bytes++) {
        uint64_t top = bytes >= 10 ? UINT64_MAX : (1ull << (7 * bytes)) - 1;
        uint64_t values[] = {top, top + 1, top / 2 + 1};
        for (unsigned i = 0; i < 3; i++) {
            if (bytes == 10 && i == 1)
                continue;  /* UINT64_MAX + 1 wraps */
            uint8_t buf[GW_VARINT_MAX + 4] = {0};
            size_t n = gw_put_uvarint(buf, values[i]);
            uint64_t back = 0;
            assert_int_equal(gw_get_uvarint(buf, n, &back), n);
            assert_true(back == values[i]);
            /* bytes after the varint are not read */
            buf[n] = 0xFF;
            assert_int_equal(gw_get_uvarint(buf, n + 1, &back), n);
            assert_true(back == values[i]);
            /* every cut prefix is refused */
            for (size_t cut = 0; cut < n; cut++)
                assert_int_equal(gw_get_uvarint(buf, cut, &back), 0);
        }
    }
    uint8_t two[] = {0x80 | 0x05, 0x01};  /* 5 + 1 * 128 */
    uint64_t v = 0;
    assert_int_equal(gw_get_uvarint(two, 2, &v), 2);
    assert_int_equal(v, 133);
    uint8_t three[] = {0xFF, 0xFF, 0x7F};
    assert_int_equal(gw_get_uvarint(three, 3, &v), 3);
    assert_int_equal(v, (1u << 21) - 1);
}

static void test_over_long_refused(void **state)
{
    (void)state;
    uint8_t buf[12];
    for (unsigned i = 0; i < 11; i++)
        buf[i] = 0x80;
    buf[11] = 0x00;
    uint64_t v = 7;
    assert_int_equal(gw_get_uvarint(buf, sizeof buf, &v), 0);
    assert_int_equal(v, 7);
}

static void test_zigzag(void **state)
{
    (void)state;
    int64_t values[] = {0, -1, 1, -64, 63, INT64_MIN, INT64_MAX};
    for (unsigned i = 0; i < sizeof values / sizeof values[0]; i++)
        assert_true(gw_unzigzag(gw_zigzag(values[i])) == values[i]);
    assert_int_equal(gw_zigzag(-1), 1);
    assert_int_equal(gw_zigzag(1), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boundaries_round_trip),
        cmocka_unit_test(test_over_long_refused),
        cmocka_unit_test(test_zigzag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
