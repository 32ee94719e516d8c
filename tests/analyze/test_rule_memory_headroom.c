/* memory_headroom: near capacity at mem_high_share (90 %); room for a larger batch below
 * mem_low_share (50 %) only when the GPU is underused and a per-step cost showed up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

/* A loop holding `held` bytes on a device of `capacity`. */
static struct an_model *loop_loading(uint64_t held, uint64_t capacity, uint64_t after_item,
                                     uint64_t input)
{
    struct synth s = {0};
    synth_alloc(&s, held, 0);
    struct loop L = {.steps = 40, .input_ns = input, .h2d_bytes = 1u << 20, .h2d_ns = 50 * US,
                     .kernels = 10, .kernel_ns = 100 * US, .launch_ns = 5 * US, .item = 1,
                     .after_item_ns = after_item};
    synth_loop(&s, &L);
    struct an_model *m = synth_model(&s, NULL, capacity, 0);
    synth_free(&s);
    return m;
}

static struct an_model *loop_holding(uint64_t held, uint64_t capacity, uint64_t after_item)
{
    return loop_loading(held, capacity, after_item, 0);
}

static void near_capacity(void **state)
{
    (void)state;
    uint64_t cap = 1ull << 30;
    for (int k = 0; k < 2; k++) {
        uint64_t held = k ? cap / 100 * 92 : cap / 100 * 88;  /* around mem_high_share */
        struct an_model *m = loop_holding(held, cap, 0);
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_memory_headroom, &out, 8);
        if (k) {
            assert_non_null(f);
            assert_true(f->risk);
            assert_non_null(strstr(f->change, "checkpoint"));
            assert_non_null(strstr(f->change, "autocast"));
        } else {
            assert_null(f);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* A sync bubble on a nearly empty device: a larger batch spreads it. */
static void room_for_a_larger_batch(void **state)
{
    (void)state;
    struct an_model *m = loop_holding(16u << 20, 1ull << 30, 600 * US);
    struct an_findings out = {0};
    struct an_rule_ctx ctx = {.cpus = 8, .local_world = 1, .so_far = &out};
    an_rule_sync_bubble(m, &ctx, &out);
    assert_int_equal(out.count, 1);
    an_rule_memory_headroom(m, &ctx, &out);
    assert_int_equal(out.count, 2);
    const struct an_finding *f = &out.items[1];
    assert_string_equal(f->id, "memory_headroom");
    assert_false(f->risk);
    assert_non_null(strstr(f->change, "batch size"));
    assert_true(f->saving_ns < out.items[0].saving_ns);  /* never above the cause itself */
    an_findings_free(&out);
    an_model_free(m);
}

/* The same room without any per-step cost: nothing to gain. */
static void room_but_nothing_to_spread(void **state)
{
    (void)state;
    struct an_model *m = loop_holding(16u << 20, 1ull << 30, 0);
    struct an_findings out = {0};
    assert_null(synth_rule(m, an_rule_memory_headroom, &out, 8));
    an_findings_free(&out);
    an_model_free(m);
}

/* Room on the device, but the GPU waits for input: a batch k times larger takes about k
 * times as long to load, so the wait does not shrink per sample and nothing is promised
 * (the sync after each step leaves only a short bubble). */
static void room_but_input_bound(void **state)
{
    (void)state;
    struct an_model *m = loop_loading(16u << 20, 1ull << 30, 0, 4 * MS);
    struct an_findings out = {0};
    struct an_rule_ctx ctx = {.cpus = 8, .local_world = 1, .so_far = &out};
    an_rule_sync_bubble(m, &ctx, &out);
    assert_int_equal(out.count, 1);  /* the sync: removing it lets loading overlap the GPU */
    an_rule_memory_headroom(m, &ctx, &out);
    assert_int_equal(out.count, 1);
    an_findings_free(&out);
    an_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(near_capacity),
        cmocka_unit_test(room_for_a_larger_batch),
        cmocka_unit_test(room_but_nothing_to_spread),
        cmocka_unit_test(room_but_input_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
