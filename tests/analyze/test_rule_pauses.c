/* pauses at and around its thresholds: pause_steps (10 median steps), pause_min_ns
 * (100 ms), pause_every_min (20 steps) and min_share (3 %); and that input_pipeline leaves
 * pauses out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

/* blocks of `steps` steps, each followed by a pause of pause_ns without a CUDA call (the
 * last one ends the trace: no call after it, so it is no idle interval) */
static void loop_with_pauses(struct synth *s, unsigned blocks, unsigned steps,
                             uint64_t input_ns, uint64_t pause_ns)
{
    struct loop L = {.steps = steps, .input_ns = input_ns, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    for (unsigned b = 0; b < blocks; b++) {
        synth_loop(s, &L);
        synth_idle(s, pause_ns);
    }
}

static double fig(const struct an_finding *f, const char *name)
{
    const struct an_figure *g = synth_fig(f, name);
    assert_non_null(g);
    return g->value;
}

static void eval_pauses(int gpu)
{
    struct synth s = {.gpu_records = gpu};
    loop_with_pauses(&s, 4, 100, 0, 2000 * MS);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    struct an_findings out = {0};
    const struct an_finding *f = synth_rule(m, an_rule_pauses, &out, 8);
    assert_non_null(f);
    assert_string_equal(f->id, "pauses");
    assert_int_equal(fig(f, "pauses"), 3);
    /* three 2 s pauses, less the few us the host spent around each */
    assert_true(f->saving_ns > 3 * 1990 * MS && f->saving_ns <= 3 * 2000 * MS);
    assert_int_equal(fig(f, "pause_min_ns"), 100 * MS);  /* 10 x ~3 ms is under 100 ms */
    assert_non_null(strstr(f->change, "async_save"));
    assert_non_null(strstr(f->change, "persistent_workers=True"));
    /* the per-step DataLoader advice would be wrong: there is no wait in the steps */
    assert_null(synth_rule(m, an_rule_input_pipeline, &out, 8));
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

static void eval_pauses_gpu(void **state) { (void)state; eval_pauses(1); }
static void eval_pauses_host_only(void **state) { (void)state; eval_pauses(0); }

/* A wait in every step is the DataLoader's: no pause. */
static void loader_wait_is_no_pause(void **state)
{
    (void)state;
    struct synth s = {.gpu_records = 1};
    loop_with_pauses(&s, 1, 200, 40 * MS, 0);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    struct an_findings out = {0};
    assert_null(synth_rule(m, an_rule_pauses, &out, 8));
    assert_non_null(synth_rule(m, an_rule_input_pipeline, &out, 8));
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* DataLoader workers that deliver in bursts: a long wait every 8th step is the input's
 * rhythm (pause_every_min, 20 steps), not a pause. */
static void bursty_workers_are_input(void **state)
{
    (void)state;
    struct synth s = {.gpu_records = 1};
    struct loop L = {.steps = 1, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                     .item = 1};
    for (int i = 0; i < 400; i++) {
        synth_idle(&s, i % 8 == 0 ? 200 * MS : 0);
        synth_loop(&s, &L);
    }
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    struct an_findings out = {0};
    assert_true(m->steps.count >= 390);
    assert_null(synth_rule(m, an_rule_pauses, &out, 8));
    /* KNOWN GAP (issue 17): the replay takes no stretch of pause_min_ns or more for a
     * batch load, so the input change is not found to give these bursts back, though they
     * are input too; before the replay the input_pipeline rule claimed every burst's wait.
     * This asserts what the analyzer does now, so that a fix shows here. */
    const struct an_finding *in = synth_rule(m, an_rule_input_pipeline, &out, 8);
    assert_null(in);
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* Both at once: each finding gets its own time. */
static void pauses_and_loader_wait(void **state)
{
    (void)state;
    struct synth s = {.gpu_records = 1};
    loop_with_pauses(&s, 4, 100, 2 * MS, 1000 * MS);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    struct an_findings out = {0};
    const struct an_finding *p = synth_rule(m, an_rule_pauses, &out, 8);
    assert_non_null(p);
    assert_int_equal(fig(p, "pauses"), 3);
    /* each pause runs on into the next step's 2 ms wait: one stretch of 1002 ms */
    assert_true(p->saving_ns > 3 * 1000 * MS && p->saving_ns <= 3 * 1002 * MS);
    const struct an_finding *in = synth_rule(m, an_rule_input_pipeline, &out, 8);
    assert_non_null(in);
    /* about 2 ms a step over ~400 steps, none of the 3 s of pauses */
    assert_true(in->saving_ns > 390 * 1900 * US && in->saving_ns < 400 * 2100 * US);
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* pause_min_ns: 95 ms stretches are input wait, 110 ms ones pauses (the threshold's
 * bucket is 8 % wide); and min_share of the run. */
static void pause_thresholds(void **state)
{
    (void)state;
    const uint64_t lengths[] = {95 * MS, 110 * MS};
    for (int i = 0; i < 2; i++) {
        struct synth s = {.gpu_records = 1};
        loop_with_pauses(&s, 4, 100, 0, lengths[i]);
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        struct an_findings out = {0};
        const struct an_finding *p = synth_rule(m, an_rule_pauses, &out, 8);
        const struct an_finding *in = synth_rule(m, an_rule_input_pipeline, &out, 8);
        if (i == 0) {
            assert_null(p);
            assert_non_null(in);
        } else {
            assert_non_null(p);
            assert_int_equal(fig(p, "pauses"), 3);
            assert_null(in);
        }
        an_findings_free(&out);
        an_model_free(m);
        synth_free(&s);
    }
    /* one 110 ms pause in a ~6 s run is under 3 % of it: not worth a finding */
    struct synth s = {.gpu_records = 1};
    loop_with_pauses(&s, 2, 1000, 0, 110 * MS);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    struct an_findings out = {0};
    assert_null(synth_rule(m, an_rule_pauses, &out, 8));
    an_findings_free(&out);
    an_model_free(m);
    synth_free(&s);
}

/* A 3 s start after the first step (workers starting, a dataset indexed), then 200 steps
 * and, in the second run, 2 s pauses after steps 100 and 200: the start is a one-off, in
 * neither the finding nor its saving; alone it makes no finding. */
static void startup_pause(void **state)
{
    (void)state;
    for (int with_eval = 0; with_eval < 2; with_eval++) {
        struct synth s = {.gpu_records = 1};
        struct loop first = {.steps = 1, .kernels = 3, .kernel_ns = 1 * MS,
                             .launch_ns = 5 * US, .item = 1};
        synth_loop(&s, &first);
        synth_idle(&s, 3000 * MS);
        loop_with_pauses(&s, with_eval ? 3 : 1, with_eval ? 100 : 200, 0, 2000 * MS);
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        assert_true(m->steps.warmup_ns >= 3000 * MS);  /* the summary's start-up */
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_pauses, &out, 8);
        if (!with_eval) {
            assert_null(f);
        } else {
            assert_non_null(f);
            assert_int_equal(fig(f, "pauses"), 3);
            assert_int_equal(fig(f, "pauses_outside_steady"), 1);
            assert_int_equal(fig(f, "steps_between"), 150);  /* 301 steps, 2 pauses */
            assert_non_null(strstr(f->evidence, "in 2 pauses of 2.00 s on average"));
            assert_non_null(strstr(f->evidence, "1 more (3.00 s) came before or after"));
            assert_non_null(strstr(f->change, "async_save"));
            /* the two steady pauses are the saving, not the start */
            assert_true(f->saving_ns > 4000 * MS - 10 * MS && f->saving_ns <= 4000 * MS);
            /* of the steps' time, the 3 s start left out: larger than of the wall */
            double steps_ns = (double)m->steps.count * (double)m->steps.mean_ns;
            double expect = (double)f->saving_ns / steps_ns;
            assert_true(f->step_share > expect - 1e-12 && f->step_share < expect + 1e-12);
            assert_true(f->step_share > f->saving_share);
        }
        an_findings_free(&out);
        an_model_free(m);
        synth_free(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eval_pauses_gpu),
        cmocka_unit_test(eval_pauses_host_only),
        cmocka_unit_test(loader_wait_is_no_pause),
        cmocka_unit_test(bursty_workers_are_input),
        cmocka_unit_test(pauses_and_loader_wait),
        cmocka_unit_test(pause_thresholds),
        cmocka_unit_test(startup_pause),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
