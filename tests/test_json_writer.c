/* The streaming JSON writer of gpuwatch export (tools/export/json_writer.c): commas and
 * nesting, escaping, numbers, and what is not a number. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_writer.h"

static char buf[4096];

static FILE *open_buf(void)
{
    memset(buf, 0, sizeof buf);
    FILE *f = fmemopen(buf, sizeof buf, "w");
    assert_non_null(f);
    return f;
}

static void test_nesting_and_commas(void **state)
{
    (void)state;
    FILE *f = open_buf();
    static struct gw_json j;
    gw_json_init(&j, f);
    gw_json_object(&j);
    gw_json_key(&j, "a");
    gw_json_u64(&j, 1);
    gw_json_key(&j, "list");
    gw_json_array(&j);
    gw_json_i64(&j, -2);
    gw_json_object(&j);
    gw_json_object_end(&j);
    gw_json_array(&j);
    gw_json_array_end(&j);
    gw_json_bool(&j, 1);
    gw_json_null(&j);
    gw_json_array_end(&j);
    gw_json_key(&j, "b");
    gw_json_str(&j, "x");
    gw_json_object_end(&j);
    assert_int_equal(gw_json_flush(&j), 0);
    fclose(f);
    assert_string_equal(buf, "{\"a\":1,\"list\":[-2,{},[],true,null],\"b\":\"x\"}");
    assert_int_equal(j.depth, 0);
    assert_int_equal(j.overflow, 0);
}

static void test_strings_are_escaped(void **state)
{
    (void)state;
    FILE *f = open_buf();
    static struct gw_json j;
    gw_json_init(&j, f);
    gw_json_array(&j);
    gw_json_str(&j, "q\"b\\n\n\t");
    gw_json_str_n(&j, "ab\0c", 4);
    gw_json_str(&j, "\xE2\x86\x92");  /* valid UTF-8 stays */
    gw_json_str(&j, "\xFF");          /* invalid UTF-8 is escaped */
    gw_json_str(&j, NULL);
    gw_json_array_end(&j);
    assert_int_equal(gw_json_flush(&j), 0);
    fclose(f);
    assert_string_equal(buf, "[\"q\\\"b\\\\n\\n\\t\",\"ab\\u0000c\",\"\xE2\x86\x92\",\"\\u00FF\",\"\"]");
}

static void test_numbers(void **state)
{
    (void)state;
    FILE *f = open_buf();
    static struct gw_json j;
    gw_json_init(&j, f);
    gw_json_array(&j);
    gw_json_ns_as_us(&j, 1234567);
    gw_json_ns_as_us(&j, -5);
    gw_json_ns_as_us(&j, 0);
    gw_json_double(&j, INFINITY);
    gw_json_double(&j, 0.5);
    gw_json_u64(&j, UINT64_MAX);
    gw_json_array_end(&j);
    assert_int_equal(gw_json_flush(&j), 0);
    fclose(f);
    assert_string_equal(buf, "[1234.567,-0.005,0.000,null,0.5,18446744073709551615]");
}

/* Every digit count, and the edges of the eight-digit chunks, against printf. */
static void test_digits_at_every_length(void **state)
{
    (void)state;
    static const uint64_t edges[] = {0, 1, 9, 10, 99, 100, 999, 99999999, 100000000,
                                     100000001, 1000000000000000ull, 10000000000000000000ull};
    char want[8192] = "[", num[32];
    FILE *f = open_buf();
    static struct gw_json j;
    gw_json_init(&j, f);
    gw_json_array(&j);
    for (uint64_t v = 1; v != 0 && v <= UINT64_MAX / 10; v *= 10) {
        uint64_t around[3] = {v - 1, v, v + 1};
        for (int k = 0; k < 3; k++) {
            gw_json_u64(&j, around[k]);
            snprintf(num, sizeof num, "%" PRIu64 ",", around[k]);
            strcat(want, num);
        }
    }
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        gw_json_u64(&j, edges[i]);
        gw_json_ns_as_us(&j, (int64_t)(edges[i] / 2));
        gw_json_i64(&j, -(int64_t)(edges[i] / 2));
        snprintf(num, sizeof num, "%" PRIu64 ",", edges[i]);
        strcat(want, num);
        uint64_t half = edges[i] / 2;
        snprintf(num, sizeof num, "%" PRIu64 ".%03" PRIu64 ",", half / 1000, half % 1000);
        strcat(want, num);
        snprintf(num, sizeof num, "%" PRId64 ",", -(int64_t)half);
        strcat(want, num);
    }
    want[strlen(want) - 1] = ']';
    gw_json_array_end(&j);
    assert_int_equal(gw_json_flush(&j), 0);
    fclose(f);
    assert_string_equal(buf, want);
}

/* A writer with no FILE keeps its text; members made so go into another writer's objects
 * as they were written. */
static void test_members_made_once(void **state)
{
    (void)state;
    static struct gw_json scratch, j;
    gw_json_init(&scratch, NULL);
    gw_json_object(&scratch);
    GW_JSON_KEY(&scratch, "ph");
    gw_json_str(&scratch, "X");
    GW_JSON_KEY(&scratch, "tid");
    gw_json_u64(&scratch, 7);
    size_t n;
    const char *text = gw_json_text(&scratch, &n);
    assert_int_equal(n, 17);
    FILE *f = open_buf();
    gw_json_init(&j, f);
    gw_json_array(&j);
    for (int i = 0; i < 2; i++) {
        gw_json_object(&j);
        gw_json_members(&j, text + 1, n - 1);
        GW_JSON_KEY(&j, "ts");
        gw_json_u64(&j, (uint64_t)i);
        gw_json_object_end(&j);
    }
    gw_json_object(&j);
    GW_JSON_KEY(&j, "a");
    gw_json_bool(&j, 0);
    gw_json_members(&j, text + 1, n - 1);
    gw_json_object_end(&j);
    gw_json_array_end(&j);
    assert_int_equal(gw_json_flush(&j), 0);
    fclose(f);
    assert_string_equal(buf, "[{\"ph\":\"X\",\"tid\":7,\"ts\":0},{\"ph\":\"X\",\"tid\":7,\"ts\":1},"
                             "{\"a\":false,\"ph\":\"X\",\"tid\":7}]");
    /* more than the buffer: the text is said to be lost, not cut */
    gw_json_init(&scratch, NULL);
    gw_json_array(&scratch);
    for (int i = 0; i < GW_JSON_BUFFER; i++)
        gw_json_u64(&scratch, 1);
    text = gw_json_text(&scratch, &n);
    assert_int_equal(n, 0);
}

/* More than the buffer holds, in one string and in many values: all of it, in order. */
static void test_longer_than_the_buffer(void **state)
{
    (void)state;
    char *big = malloc(3 * GW_JSON_BUFFER);
    assert_non_null(big);
    size_t size = 0;
    char *out = NULL;
    FILE *f = open_memstream(&out, &size);
    assert_non_null(f);
    memset(big, 'a', 3 * GW_JSON_BUFFER - 1);
    big[3 * GW_JSON_BUFFER - 1] = 0;
    static struct gw_json j;
    gw_json_init(&j, f);
    gw_json_array(&j);
    gw_json_str(&j, big);
    for (unsigned i = 0; i < 50000; i++)
        gw_json_u64(&j, i);
    gw_json_array_end(&j);
    assert_int_equal(gw_json_flush(&j), 0);
    fclose(f);
    /* [ "a…a" , 0,1,…,49999 ] */
    size_t numbers = 0;
    for (unsigned i = 0; i < 50000; i++)
        numbers += (size_t)snprintf(NULL, 0, "%u", i) + 1;
    assert_int_equal(size, 1 + 2 + (3 * GW_JSON_BUFFER - 1) + numbers + 1);
    assert_memory_equal(out + size - 7, ",49999]", 7);
    free(out);
    free(big);
}

static void test_too_deep_is_said(void **state)
{
    (void)state;
    FILE *f = open_buf();
    static struct gw_json j;
    gw_json_init(&j, f);
    for (int i = 0; i < GW_JSON_MAX_DEPTH + 1; i++)
        gw_json_array(&j);
    for (int i = 0; i < GW_JSON_MAX_DEPTH + 1; i++)
        gw_json_array_end(&j);
    assert_int_equal(gw_json_flush(&j), 0);
    fclose(f);
    assert_int_equal(j.overflow, 1);
    assert_int_equal(j.depth, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting_and_commas),
        cmocka_unit_test(test_strings_are_escaped),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_digits_at_every_length),
        cmocka_unit_test(test_members_made_once),
        cmocka_unit_test(test_longer_than_the_buffer),
        cmocka_unit_test(test_too_deep_is_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
