/* shared_gpu: memory used by others at start, at others_min_bytes (256 MiB) and
 * others_min_share (5 %) and around them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

static const struct an_finding *with(uint64_t capacity, uint64_t others,
                                     struct an_findings *out, struct an_model **m)
{
    struct synth s = {0};
    struct loop L = {.steps = 10, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                     .item = 1};
    synth_loop(&s, &L);
    *m = synth_model(&s, NULL, capacity, others);
    synth_free(&s);
    return synth_rule(*m, an_rule_shared_gpu, out, 8);
}

static void cases(void **state)
{
    (void)state;
    static const struct { uint64_t cap, others; int fires; } c[] = {
        {1ull << 30, 300ull << 20, 1},   /* 300 MiB of 1 GiB */
        {1ull << 30, 200ull << 20, 0},   /* under 256 MiB */
        {80ull << 30, 400ull << 20, 0},  /* 0.5 % of 80 GiB: our own context's size */
        {80ull << 30, 8ull << 30, 1},    /* 10 % of 80 GiB */
        {0, 0, 0},                       /* capacity unknown */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = with(c[i].cap, c[i].others, &out, &m);
        if (c[i].fires) {
            assert_non_null(f);
            assert_true(f->risk);
            assert_non_null(strstr(f->change, "empty_cache"));
        } else {
            assert_null(f);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* Another process holds 700 MiB (68 %) of a 1 GiB device and this one peaks at 240 MiB: the
 * device is near capacity (91 %), and the co-tenant is the cause: shared_gpu leads the risks
 * and the near-capacity advice names the others before mixed precision. */
static void co_tenant_comes_first(void **state)
{
    (void)state;
    static const struct { uint64_t others, held; const char *advice; } c[] = {
        {700ull << 20, 240ull << 20, "Most of it is other processes' (700.0 MiB, see shared_gpu)"},
        /* this process holds the larger part: its own advice, the co-tenant still first */
        {300ull << 20, 660ull << 20, "Make room before a larger input"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct synth s = {0};
        synth_alloc(&s, c[i].held, 0);
        struct loop L = {.steps = 10, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                         .item = 1};
        synth_loop(&s, &L);
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, c[i].others);
        synth_free(&s);
        struct an_findings out = {0};
        /* in the order rules.def runs them: memory_headroom first */
        assert_non_null(synth_rule(m, an_rule_memory_headroom, &out, 8));
        assert_non_null(synth_rule(m, an_rule_shared_gpu, &out, 8));
        an_findings_rank(&out);
        assert_int_equal(out.count, 2);
        assert_string_equal(out.items[0].id, "shared_gpu");
        assert_int_equal(out.items[0].outside, 1);
        assert_string_equal(out.items[1].id, "memory_headroom");
        assert_int_equal(out.items[1].outside, 0);
        assert_true(out.items[1].risk);
        assert_memory_equal(out.items[1].change, c[i].advice, strlen(c[i].advice));
        an_findings_free(&out);
        an_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(cases),
                                       cmocka_unit_test(co_tenant_comes_first)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
