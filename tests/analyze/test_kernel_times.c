/* GPU time by kernel: sums per shape id (table and map alike), the top list's order, ties
 * and length, and the names asked of the resolver. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_times.h"

static const char *name_of(void *user, int what, uint64_t shape)
{
    static char name[32];
    int *asked = user;
    (*asked)++;
    if (what != 1 || shape == 7)
        return NULL;  /* shape 7: no name in the trace */
    snprintf(name, sizeof name, "k%llu", (unsigned long long)shape);
    return name;
}

static void sums_and_order(void **state)
{
    (void)state;
    struct an_kernel_times kt = {0};
    uint64_t far = (uint64_t)AN_KERNEL_TABLE_MAX + 5;
    for (int i = 0; i < 3; i++)
        an_kernel_times_add(&kt, 2, 100);    /* 300 over 3 */
    an_kernel_times_add(&kt, 1, 300);        /* 300 over 1: ties with 2, lower id first */
    an_kernel_times_add(&kt, 500, 50);       /* grows the table past its first size */
    an_kernel_times_add(&kt, far, 1000);     /* past the table: the map */
    an_kernel_times_add(&kt, far, 1);
    an_kernel_times_add(&kt, 7, 10);
    an_kernel_times_add(&kt, 0, 0);          /* a record of no time still counts as one */
    struct an_kernel_time top[8];
    int asked = 0;
    size_t n = an_kernel_times_top(&kt, top, 8, name_of, &asked);
    assert_int_equal(n, 6);
    assert_int_equal(asked, 6);
    const uint64_t shapes[] = {far, 1, 2, 500, 7, 0};
    const uint64_t ns[] = {1001, 300, 300, 50, 10, 0};
    const uint64_t records[] = {2, 1, 3, 1, 1, 1};
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(top[i].shape_id, shapes[i]);
        assert_int_equal(top[i].gpu_ns, ns[i]);
        assert_int_equal(top[i].records, records[i]);
    }
    assert_string_equal(top[1].name, "k1");
    assert_string_equal(top[4].name, "?");
    /* fewer kept than there are: the heaviest */
    n = an_kernel_times_top(&kt, top, 2, NULL, NULL);
    assert_int_equal(n, 2);
    assert_int_equal(top[0].shape_id, far);
    assert_int_equal(top[1].shape_id, 1);
    assert_string_equal(top[0].name, "?");
    an_kernel_times_free(&kt);
    assert_int_equal(an_kernel_times_top(&kt, top, 8, NULL, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sums_and_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
