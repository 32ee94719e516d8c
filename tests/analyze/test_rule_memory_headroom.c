/* memory_headroom: near capacity at mem_high_share (90 %); room for a larger batch below
 * mem_low_share (50 %) only when the GPU is underused, a per-step cost showed up and the
 * step's footprint is mem_batch_min_bytes (64 MiB) or more. */
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

/* What the rule should save: the fixed per-step idle (after drains, between launches), at
 * most what the sync finding saves, x (1 - 1/min(k, 4)). */
static uint64_t expected_saving(const struct an_model *m, const struct an_finding *sync,
                                double k)
{
    uint64_t fixed = an_run_idle(m, AN_CAUSE_SYNC) + an_run_idle(m, AN_CAUSE_LAUNCH);
    if (sync->saving_ns < fixed)
        fixed = sync->saving_ns;
    double larger = k < 4 ? k : 4;
    return an_u64((double)fixed * (1 - 1 / larger));
}

/* A sync bubble on a 1 GiB device holding `held` (all of it the step's footprint: nothing
 * comes and goes): a larger batch spreads it when the footprint means something. Room to
 * 85 % of 1 GiB = 870.4 MiB: k = 870.4 / held - 1. */
static void room_for_a_larger_batch(void **state)
{
    (void)state;
    static const struct { uint64_t held; double k; const char *title; } c[] = {
        {128ull << 20, 5.8, "Memory to spare while the GPU is underused: a 4x larger batch fits"},
        {200ull << 20, 3.352,
         "Memory to spare while the GPU is underused: a 3.4x larger batch fits"},
        {64ull << 20, 12.6, "Memory to spare while the GPU is underused: a 4x larger batch fits"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct an_model *m = loop_holding(c[i].held, 1ull << 30, 600 * US);
        struct an_findings out = {0};
        struct an_rule_ctx ctx = {.cpus = 8, .local_world = 1, .so_far = &out};
        an_rule_sync_bubble(m, &ctx, &out);
        assert_int_equal(out.count, 1);
        an_rule_memory_headroom(m, &ctx, &out);
        assert_int_equal(out.count, 2);
        const struct an_finding *f = &out.items[1];
        assert_string_equal(f->id, "memory_headroom");
        assert_false(f->risk);
        assert_string_equal(f->title, c[i].title);
        assert_non_null(strstr(f->change, c[i].k <= 4 ? "about 3.4x" : "Raise the batch size "
                                                                      "2-4x (keeping 15%"));
        double k = (0.85 * 1024 - (double)(c[i].held >> 20)) / (double)(c[i].held >> 20);
        assert_true(k > c[i].k - 0.01 && k < c[i].k + 0.01);
        assert_int_equal(f->saving_ns, expected_saving(m, &out.items[0], k));
        assert_true(f->saving_ns > 0);
        assert_true(f->saving_ns < out.items[0].saving_ns);  /* never above the cause */
        double factor = -1;
        for (size_t j = 0; j < f->nfig; j++)
            if (!strcmp(f->fig[j].key, "batch_factor"))
                factor = f->fig[j].value;
        assert_true(factor == (k < 4 ? k : 4));
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* The same sync bubble on loops whose step holds 1 MiB (room / footprint = 869x) or just
 * under mem_batch_min_bytes: no batch-size claim; the sync finding is the advice. */
static void no_claim_from_a_tiny_footprint(void **state)
{
    (void)state;
    static const uint64_t held[] = {1ull << 20, 16ull << 20, (64ull << 20) - 4096};
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        struct an_model *m = loop_holding(held[i], 1ull << 30, 600 * US);
        struct an_findings out = {0};
        struct an_rule_ctx ctx = {.cpus = 8, .local_world = 1, .so_far = &out};
        an_rule_sync_bubble(m, &ctx, &out);
        assert_int_equal(out.count, 1);
        assert_true(out.items[0].saving_ns > 0);
        an_rule_memory_headroom(m, &ctx, &out);
        assert_int_equal(out.count, 1);
        assert_string_equal(out.items[0].id, "sync_bubble");
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* The same room without any per-step cost: nothing to gain. */
static void room_but_nothing_to_spread(void **state)
{
    (void)state;
    struct an_model *m = loop_holding(128u << 20, 1ull << 30, 0);
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
    struct an_model *m = loop_loading(128u << 20, 1ull << 30, 0, 4 * MS);
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
        cmocka_unit_test(no_claim_from_a_tiny_footprint),
        cmocka_unit_test(room_but_nothing_to_spread),
        cmocka_unit_test(room_but_input_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
