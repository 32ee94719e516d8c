/* pageable_h2d around its thresholds: blocking copies of h2d_min_bytes (64 KiB) and more,
 * H2D-stall idle at min_share (3 %) and more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

static const struct an_finding *with(uint64_t bytes, uint64_t copy_ns, int pageable, int gpu,
                                     struct an_findings *out, struct an_model **m)
{
    struct synth s = {.gpu_records = gpu};
    struct loop L = {.steps = 30, .h2d_bytes = bytes, .h2d_ns = copy_ns,
                     .h2d_pageable = pageable, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return synth_rule(*m, an_rule_pageable_h2d, out, 8);
}

static void pageable_copies(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = with(16u << 20, 3 * MS, 1, gpu, &out, &m);
        assert_non_null(f);
        assert_string_equal(f->id, "pageable_h2d");
        assert_non_null(strstr(f->change, "pin_memory=True"));
        assert_non_null(strstr(f->change, "non_blocking=True"));
        /* ~3 ms stalled per step, 30 steps; pinned, the copy takes a third of that (no
         * pinned copy in the run to measure by) and still cannot overlap the previous
         * step's compute (.item() drained it): 2 ms back a step */
        assert_true(f->saving_ns > 30 * 1900 * US && f->saving_ns < 30 * 2100 * US);
        an_findings_free(&out);
        an_model_free(m);
    }
}

static void pinned_async_copies(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(16u << 20, 3 * MS, 0, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* 32 KiB copies are under h2d_min_bytes even when they stall: not this rule's business. */
static void small_copies(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(32u << 10, 300 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* Stalls of 60 us in a 3 ms step (2 %) are under min_share; 150 us (4.8 %) are over. */
/* The rule fires exactly when the replayed saving is min_share (thresholds.h) of the
 * replayed run or more: a sweep of copy times that crosses it, both sides seen. */
static void share_around_threshold(void **state)
{
    (void)state;
    int below = 0, above = 0;
    for (uint64_t copy = 20 * US; copy <= 600 * US; copy += 20 * US) {
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = with(1u << 20, copy, 1, 0, &out, &m);
        double share;
        int worth;
        if (!synth_fires_at_min_share(m, f, AN_WI_PINNED_ASYNC, &share, &worth))
            fail_msg("copy %llu ns: saving share %.4f, min_share %.2f, finding %s",
                     (unsigned long long)copy, share, m->th.min_share, f ? "yes" : "no");
        below += !worth;
        above += worth;
        an_findings_free(&out);
        an_model_free(m);
    }
    assert_true(below > 0 && above > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pageable_copies),
        cmocka_unit_test(pinned_async_copies),
        cmocka_unit_test(small_copies),
        cmocka_unit_test(share_around_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
