/* The streaming JSON writer of gpuwatch export (tools/export/json_writer.c): commas and
 * nesting, escaping, numbers, and what is not a number. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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
    struct gw_json j;
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
    fclose(f);
    assert_string_equal(buf, "{\"a\":1,\"list\":[-2,{},[],true,null],\"b\":\"x\"}");
    assert_int_equal(j.depth, 0);
    assert_int_equal(j.overflow, 0);
}

static void test_strings_are_escaped(void **state)
{
    (void)state;
    FILE *f = open_buf();
    struct gw_json j;
    gw_json_init(&j, f);
    gw_json_array(&j);
    gw_json_str(&j, "q\"b\\n\n\t");
    gw_json_str_n(&j, "ab\0c", 4);
    gw_json_str(&j, "\xE2\x86\x92");  /* valid UTF-8 stays */
    gw_json_str(&j, "\xFF");          /* invalid UTF-8 is escaped */
    gw_json_str(&j, NULL);
    gw_json_array_end(&j);
    fclose(f);
    assert_string_equal(buf, "[\"q\\\"b\\\\n\\n\\t\",\"ab\\u0000c\",\"\xE2\x86\x92\",\"\\u00FF\",\"\"]");
}

static void test_numbers(void **state)
{
    (void)state;
    FILE *f = open_buf();
    struct gw_json j;
    gw_json_init(&j, f);
    gw_json_array(&j);
    gw_json_fixed(&j, 1.23456, 3);
    gw_json_fixed(&j, NAN, 3);
    gw_json_double(&j, INFINITY);
    gw_json_double(&j, 0.5);
    gw_json_u64(&j, UINT64_MAX);
    gw_json_array_end(&j);
    fclose(f);
    assert_string_equal(buf, "[1.235,null,null,0.5,18446744073709551615]");
}

static void test_too_deep_is_said(void **state)
{
    (void)state;
    FILE *f = open_buf();
    struct gw_json j;
    gw_json_init(&j, f);
    for (int i = 0; i < GW_JSON_MAX_DEPTH + 1; i++)
        gw_json_array(&j);
    for (int i = 0; i < GW_JSON_MAX_DEPTH + 1; i++)
        gw_json_array_end(&j);
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
        cmocka_unit_test(test_too_deep_is_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
