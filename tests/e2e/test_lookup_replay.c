/* Replays the CUDA 13 runtime's 440 driver lookups (tests/data/cudart13-lookups.tsv)
 * through cuGetProcAddress_v2 with and without the shim: every answer must name the same
 * exported function, coming from libgpuwatch.so exactly when that function is hooked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static struct run_result with_shim, without_shim;

static int next_line(char **cursor, char *line, size_t cap)
{
    if (!**cursor)
        return 0;
    char *end = strchr(*cursor, '\n');
    size_t len = end ? (size_t)(end - *cursor) : strlen(*cursor);
    if (len >= cap)
        len = cap - 1;
    memcpy(line, *cursor, len);
    line[len] = '\0';
    *cursor += end ? len + 1 : len;
    return 1;
}

static void test_every_lookup_substituted_exactly(void **state)
{
    (void)state;
    const char *args[] = {"--mode", "replay", "--list", GW_LOOKUPS_TSV, NULL};
    struct run_options options = {.args = args, .preload = 1};
    run_workload(&options, &with_shim);
    options.preload = 0;
    run_workload(&options, &without_shim);
    assert_int_equal(with_shim.status, 0);
    assert_int_equal(without_shim.status, 0);

    char *a = with_shim.out, *b = without_shim.out;
    char line_a[512], line_b[512];
    unsigned lines = 0, substituted = 0;
    while (next_line(&a, line_a, sizeof line_a)) {
        assert_true(next_line(&b, line_b, sizeof line_b));
        char sym_a[256], exact_a[256], file_a[256], sym_b[256], exact_b[256], file_b[256];
        int ver_a, rc_a, ver_b, rc_b;
        unsigned long long flags_a, flags_b;
        assert_int_equal(sscanf(line_a, "%255s %d %llu %d %255s %255s", sym_a, &ver_a, &flags_a,
                                &rc_a, exact_a, file_a), 6);
        assert_int_equal(sscanf(line_b, "%255s %d %llu %d %255s %255s", sym_b, &ver_b, &flags_b,
                                &rc_b, exact_b, file_b), 6);
        assert_string_equal(sym_a, sym_b);
        assert_int_equal(rc_a, rc_b);
        /* Same variant: the same exported name, whoever defines it. */
        if (strcmp(exact_a, exact_b) != 0)
            fail_msg("%s@%d flags %llu: %s with the shim, %s without", sym_a, ver_a, flags_a,
                     exact_a, exact_b);
        int hooked = api_id_of(exact_b) != 0;
        if (hooked != (strcmp(file_a, "libgpuwatch.so") == 0))
            fail_msg("%s@%d flags %llu -> %s from %s", sym_a, ver_a, flags_a, exact_a, file_a);
        substituted += hooked;
        lines++;
    }
    assert_false(next_line(&b, line_b, sizeof line_b));
    assert_int_equal(lines, 440);
    /* The list asks for these hooked variants; a change in the table shows up here. */
    print_message("replayed %u lookups, %u answered with a wrapper\n", lines, substituted);
    assert_true(substituted >= 60);

    struct tally traces;
    tally_traces(with_shim.trace_dir, &traces);
    assert_int_equal(traces.files, 1);
    /* One self-lookup, then the 440 lines, each recorded with its outcome. */
    assert_int_equal(traces.file[0].calls[api_id_of("cuGetProcAddress_v2")], 441);
    assert_int_equal(traces.file[0].proc_outcome[GW_PROC_SUBSTITUTED], substituted + 1);
    remove_dir(with_shim.trace_dir);
    remove_dir(without_shim.trace_dir);
}

/* The real libcudart.so.13 resolves the driver through the shim: every lookup is traced,
 * the same 89 hooked variants get wrappers, and its cuInit reaches our wrapper. */
static void test_real_runtime_goes_through_the_shim(void **state)
{
    (void)state;
    struct run_options options = {.program = GW_CUDART_START, .preload = 1};
    run_workload(&options, &with_shim);
    assert_int_equal(with_shim.status, 0);
    assert_non_null(strstr(with_shim.out, "cudaGetDeviceCount"));
    struct tally traces;
    tally_traces(with_shim.trace_dir, &traces);
    assert_int_equal(traces.files, 1);
    const struct file_tally *f = &traces.file[0];
    assert_int_equal(f->calls[api_id_of("cuGetProcAddress_v2")], 440);
    assert_int_equal(f->proc_outcome[GW_PROC_SUBSTITUTED], 89);
    assert_int_equal(f->proc_outcome[GW_PROC_FAILED], 1); /* the "" probe */
    assert_int_equal(f->calls[api_id_of("cuInit")], 1);
    assert_int_equal(f->damage, 0);
    remove_dir(with_shim.trace_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_lookup_substituted_exactly),
        cmocka_unit_test(test_real_runtime_goes_through_the_shim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
