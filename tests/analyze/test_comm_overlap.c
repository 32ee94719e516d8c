/* Collectives against compute: each communication kernel's time that no compute kernel
 * covered, fed in start order as the model feeds them; names that are collectives'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "comm_overlap.h"

static void exposed_time(void **state)
{
    (void)state;
    struct an_comm_overlap c = {0};
    /* before any collective: compute [0,100) and [90,150) -> one span [0,150) */
    an_comm_feed(&c, 0, 100, 0);
    an_comm_feed(&c, 90, 150, 0);
    /* comm [120,200): covered by compute up to 150, and by [170,180) below -> exposed 40 */
    an_comm_feed(&c, 120, 200, 1);
    an_comm_feed(&c, 170, 180, 0);
    /* comm [300,400) with nothing beside it -> exposed 100 */
    an_comm_feed(&c, 300, 400, 1);
    /* comm [500,600) entirely under compute [450,700) -> exposed 0 */
    an_comm_feed(&c, 450, 700, 0);
    an_comm_feed(&c, 500, 600, 1);
    /* two collectives at once [800,900) and [850,950), compute [880,920) -> 80 + 60 */
    an_comm_feed(&c, 800, 900, 1);
    an_comm_feed(&c, 850, 950, 1);
    an_comm_feed(&c, 880, 920, 0);
    an_comm_finish(&c);
    assert_int_equal(c.kernels, 5);
    assert_int_equal(c.comm_ns, 80 + 100 + 100 + 100 + 100);
    assert_int_equal(c.exposed_ns, 40 + 100 + 0 + 80 + 60);
    /* nothing is kept once settled */
    assert_int_equal(c.npending, 0);
    an_comm_free(&c);
}

static void no_collective_no_cost(void **state)
{
    (void)state;
    struct an_comm_overlap c = {0};
    for (uint64_t t = 0; t < 100000; t += 10)
        an_comm_feed(&c, t, t + 15, 0);
    an_comm_finish(&c);
    assert_int_equal(c.kernels, 0);
    assert_int_equal(c.comm_ns, 0);
    assert_int_equal(c.exposed_ns, 0);
    assert_null(c.compute);  /* only the latest span was kept, in place */
    an_comm_free(&c);
}

static void names(void **state)
{
    (void)state;
    assert_true(an_is_comm_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
    assert_true(an_is_comm_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t"));
    assert_false(an_is_comm_kernel("void at::native::vectorized_elementwise_kernel"));
    assert_false(an_is_comm_kernel("nccl"));
    assert_false(an_is_comm_kernel(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exposed_time),
        cmocka_unit_test(no_collective_no_cost),
        cmocka_unit_test(names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
