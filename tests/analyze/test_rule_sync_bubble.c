/* sync_bubble around min_share (3 %) and sync_steps_share (a drain in half the steps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

static const struct an_finding *with(uint64_t after_ns, unsigned every, int gpu,
                                     struct an_findings *out, struct an_model **m)
{
    struct synth s = {.gpu_records = gpu};
    struct loop L = {.steps = 60, .h2d_bytes = 1u << 20, .h2d_ns = 50 * US, .kernels = 10,
                     .kernel_ns = 100 * US, .launch_ns = 5 * US, .item = 1,
                     .item_every = every, .after_item_ns = after_ns};
    synth_loop(&s, &L);
    *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return synth_rule(*m, an_rule_sync_bubble, out, 8);
}

static void item_and_logging_every_step(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = with(400 * US, 1, gpu, &out, &m);
        assert_non_null(f);
        assert_string_equal(f->id, "sync_bubble");
        assert_non_null(strstr(f->evidence, ".item()"));
        assert_non_null(strstr(f->change, "loss.detach()"));
        /* ~0.4 ms a step, 59 steps; never more than the GPU's own busy time */
        assert_true(f->saving_ns > 59 * 380 * US && f->saving_ns < 59 * 480 * US);
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* 20 us of host work after the drain, on a ~1.1 ms step: under 3 %. */
static void short_refill(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(20 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* Logging every 20 steps: the drains are not the step's rhythm (0.05 a step) and cost
 * 1.8 %. */
static void drain_every_twentieth_step(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(400 * US, 20, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(item_and_logging_every_step),
        cmocka_unit_test(short_refill),
        cmocka_unit_test(drain_every_twentieth_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
