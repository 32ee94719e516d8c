/* small_copies around its thresholds: blocking H2D copies under h2d_min_bytes (64 KiB) on
 * average, small_copies_per_step (8) of them a step, H2D-stall idle at min_share (3 %). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

static const struct an_finding *with(unsigned copies, uint64_t bytes, uint64_t copy_ns,
                                     int pageable, int gpu, struct an_findings *out,
                                     struct an_model **m)
{
    struct synth s = {.gpu_records = gpu};
    struct loop L = {.steps = 30, .h2d_bytes = bytes, .h2d_ns = copy_ns,
                     .h2d_pageable = pageable, .h2d_copies = copies, .kernels = 3,
                     .kernel_ns = 1 * MS, .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return synth_rule(*m, an_rule_small_copies, out, 8);
}

static void many_small_copies(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_findings out = {0};
        struct an_model *m;
        /* 16 blocking 4 KiB copies of 50 us a step: 800 us stalled per step */
        const struct an_finding *f = with(16, 4096, 50 * US, 1, gpu, &out, &m);
        assert_non_null(f);
        assert_string_equal(f->id, "small_copies");
        assert_non_null(strstr(f->change, "torch.cat"));
        assert_non_null(strstr(f->change, "non_blocking=True"));
        assert_non_null(strstr(f->evidence, "16.0 per step"));
        /* pinned and async, each copy a third as long and off the host's path */
        assert_true(f->saving_ns > 30 * 500 * US && f->saving_ns < 30 * 560 * US);
        const struct an_figure *per_step = synth_fig(f, "copies_per_step");
        assert_non_null(per_step);
        assert_true(per_step->value == 16.0);
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* 7 copies a step are under small_copies_per_step; 8 are at it. */
static void copies_per_step_around_threshold(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(7, 4096, 100 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
    assert_non_null(with(8, 4096, 100 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* Batch-sized copies (64 KiB and more on average) are pageable_h2d's, not this rule's. */
static void batch_sized_copies(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(16, 64u << 10, 100 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
    assert_non_null(with(16, (64u << 10) - 1, 100 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* Pinned async copies do not block the host: nothing stalls, no finding. */
static void pinned_async_copies(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(16, 4096, 50 * US, 0, 1, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* 16 copies of 3 us in a ~3.1 ms step stall 1.5 % (replayed saving 1 %), under min_share;
 * 12 us, 6 % (saving 4 %), over. */
/* The rule fires exactly when the replayed saving is min_share (thresholds.h) of the
 * replayed run or more: a sweep of copy times that crosses it, both sides seen. */
static void share_around_threshold(void **state)
{
    (void)state;
    int below = 0, above = 0;
    for (uint64_t copy = 1 * US; copy <= 30 * US; copy += 1 * US) {
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = with(16, 4096, copy, 1, 0, &out, &m);
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
        cmocka_unit_test(many_small_copies),
        cmocka_unit_test(copies_per_step_around_threshold),
        cmocka_unit_test(batch_sized_copies),
        cmocka_unit_test(pinned_async_copies),
        cmocka_unit_test(share_around_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
