/* launch_bound around launch_min_per_step (100) and, host-only, the issue/wait shares. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

static const struct an_finding *with(unsigned kernels, uint64_t kernel_ns, int gpu,
                                     struct an_findings *out, struct an_model **m)
{
    struct synth s = {.gpu_records = gpu};
    struct loop L = {.steps = 30, .kernels = kernels, .kernel_ns = kernel_ns,
                     .launch_ns = 4 * US};
    synth_loop(&s, &L);
    *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return synth_rule(*m, an_rule_launch_bound, out, 8);
}

/* 500 kernels of 1 us a step, launched 4 us apart. */
static void tiny_kernels(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = with(500, 1 * US, gpu, &out, &m);
        assert_non_null(f);
        assert_string_equal(f->id, "launch_bound");
        assert_non_null(strstr(f->change, "reduce-overhead"));
        /* the GPU idles ~3 us of every 4 us */
        assert_true(f->saving_share > 0.6 && f->saving_share <= 1.0);
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* 50 launches a step: under launch_min_per_step. */
static void few_launches(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(50, 1 * US, 1, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* 500 kernels of 40 us: the GPU is the bottleneck, the host waits for it. */
static void gpu_bound(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct synth s = {.gpu_records = gpu};
        struct loop L = {.steps = 30, .kernels = 500, .kernel_ns = 40 * US,
                         .launch_ns = 4 * US, .item = 1};
        synth_loop(&s, &L);
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        struct an_findings out = {0};
        assert_null(synth_rule(m, an_rule_launch_bound, &out, 8));
        an_findings_free(&out);
        an_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_kernels),
        cmocka_unit_test(few_launches),
        cmocka_unit_test(gpu_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
