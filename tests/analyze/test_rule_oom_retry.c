/* oom_retry: an OOM, a burst of frees and a retried allocation within retry_window_ns
 * (100 ms) is a storm; a retry after the window is not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

/* Steps holding cached blocks; at step `at` an allocation fails, `frees` cached blocks are
 * freed `delay` later, and the allocation is retried. */
static struct an_model *storm(unsigned frees, uint64_t delay, int retry_ok)
{
    struct synth s = {0};
    uint64_t cached[8];
    for (int i = 0; i < 8; i++)
        cached[i] = synth_alloc(&s, 32u << 20, 0);
    struct loop L = {.steps = 10, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                     .item = 1};
    synth_loop(&s, &L);
    synth_alloc(&s, 100u << 20, 1);  /* CUDA_ERROR_OUT_OF_MEMORY */
    synth_idle(&s, delay);
    for (unsigned i = 0; i < frees && i < 8; i++)
        synth_free_ptr(&s, cached[i], i ? 0 : 2 * MS);
    synth_alloc(&s, 100u << 20, !retry_ok);
    synth_loop(&s, &L);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return m;
}

static void retry_storm(void **state)
{
    (void)state;
    struct an_model *m = storm(4, 0, 1);
    assert_int_equal(m->mem.ooms, 1);
    assert_int_equal(m->mem.storms, 1);
    assert_int_equal(m->mem.storm_frees, 4);
    struct an_findings out = {0};
    const struct an_finding *f = synth_rule(m, an_rule_oom_retry, &out, 8);
    assert_non_null(f);
    assert_true(f && strstr(f->change, "expandable_segments:True"));
    assert_true(f && strstr(f->change, "garbage_collection_threshold:0.8"));
    /* a risk that struck already, listed apart: no saving; the storm's cost (the first
     * free waited 2 ms for the device) is its evidence */
    assert_int_equal(f->risk, 1);
    assert_true(f->strikes_s == 0);
    assert_int_equal(f->saving_ns, 0);
    assert_true(synth_fig(f, "storm_ns")->value >= 2 * MS && synth_fig(f, "storm_ns")->value < 3 * MS);
    an_findings_free(&out);
    an_model_free(m);
}

/* Frees 150 ms after the OOM: outside retry_window_ns, no storm (an OOM all the same, a
 * risk that struck). */
static void frees_too_late(void **state)
{
    (void)state;
    struct an_model *m = storm(4, 150 * MS, 1);
    assert_int_equal(m->mem.ooms, 1);
    assert_int_equal(m->mem.storms, 0);
    assert_int_equal(m->mem.unrecovered_ooms, 1);
    struct an_findings out = {0};
    const struct an_finding *f = synth_rule(m, an_rule_oom_retry, &out, 8);
    assert_non_null(f);
    assert_int_equal(f->risk, 1);
    assert_true(f->strikes_s == 0);
    assert_true(synth_fig(f, "storm_ns")->value == 0);
    assert_true(synth_fig(f, "unrecovered_ooms")->value == 1);
    an_findings_free(&out);
    an_model_free(m);
}

/* The retry fails too: counted as unrecovered, its time still spent. */
static void retry_fails(void **state)
{
    (void)state;
    struct an_model *m = storm(4, 0, 0);
    assert_int_equal(m->mem.storms, 0);
    assert_int_equal(m->mem.unrecovered_ooms, 1);
    assert_int_equal(m->mem.ooms, 2);
    assert_true(m->mem.storm_ns >= 2 * MS);
    an_model_free(m);
}

static void no_oom(void **state)
{
    (void)state;
    struct synth s = {0};
    struct loop L = {.steps = 10, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                     .item = 1};
    synth_loop(&s, &L);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    struct an_findings out = {0};
    assert_null(synth_rule(m, an_rule_oom_retry, &out, 8));
    an_findings_free(&out);
    an_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retry_storm),
        cmocka_unit_test(frees_too_late),
        cmocka_unit_test(retry_fails),
        cmocka_unit_test(no_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
