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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(cases)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
