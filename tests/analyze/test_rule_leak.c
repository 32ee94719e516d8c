/* leak: memory held grows in growth_steps_share (75 %) of the steady steps and by
 * growth_min_bytes (16 MiB) in all, and around those. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

static struct an_model *leaking(uint64_t bytes, unsigned steps, unsigned every)
{
    struct synth s = {0};
    struct loop L = {.steps = 1, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                     .item = 1};
    for (unsigned i = 0; i < steps; i++) {
        L.leak_bytes = i % every == 0 ? bytes : 0;
        synth_loop(&s, &L);
    }
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return m;
}

static void grows_every_step(void **state)
{
    (void)state;
    struct an_model *m = leaking(4u << 20, 40, 1);
    struct an_findings out = {0};
    const struct an_finding *f = synth_rule(m, an_rule_leak, &out, 8);
    assert_non_null(f);
    assert_true(f->risk);
    assert_non_null(strstr(f->evidence, "Still held at exit"));
    assert_non_null(strstr(f->evidence, "more steps"));
    assert_non_null(strstr(f->change, "detach"));
    an_findings_free(&out);
    an_model_free(m);
}

/* 256 KiB a step: 10 MiB in all, under growth_min_bytes. */
static void grows_too_little(void **state)
{
    (void)state;
    struct an_model *m = leaking(256u << 10, 40, 1);
    struct an_findings out = {0};
    assert_null(synth_rule(m, an_rule_leak, &out, 8));
    an_findings_free(&out);
    an_model_free(m);
}

/* Growth in every other step (50 %): not the leak pattern (fragmentation looks at it). */
static void grows_now_and_then(void **state)
{
    (void)state;
    struct an_model *m = leaking(8u << 20, 40, 2);
    struct an_findings out = {0};
    assert_null(synth_rule(m, an_rule_leak, &out, 8));
    an_findings_free(&out);
    an_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grows_every_step),
        cmocka_unit_test(grows_too_little),
        cmocka_unit_test(grows_now_and_then),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
