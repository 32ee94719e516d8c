/* changes_together: a loss read every step followed by logging, and a buffer allocated and
 * freed each step (cudaFree waits for the GPU): either drain alone keeps the GPU idle while
 * the host logs, so taking out one saves nothing; both together give the logging back.
 * A loop with one of the two wastes, or two that overlap (one wait, two changes), gets no
 * such finding. The excess over the two changes alone is held to min_share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

#define STEPS 30

static struct an_model *loop_model_th(uint64_t log_ns, unsigned churn_every, int gpu,
                                      const struct an_thresholds *th)
{
    struct synth s = {.gpu_records = gpu, .cpus = 8};
    struct loop L = {.steps = STEPS, .kernels = 4, .kernel_ns = 500 * US, .launch_ns = 5 * US,
                     .item = 1, .after_item_ns = log_ns, .churn_every = churn_every};
    synth_loop(&s, &L);
    struct an_model *m = synth_model(&s, th, 1ull << 30, 0);
    synth_free(&s);
    return m;
}

static struct an_model *loop_model(uint64_t log_ns, unsigned churn_every, int gpu)
{
    return loop_model_th(log_ns, churn_every, gpu, NULL);
}

static const struct an_finding *run_rule(const struct an_model *m, struct an_findings *out)
{
    return synth_rule(m, an_rule_changes_together, out, 8);
}

static void drains_that_hide_each_other(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_model *m = loop_model(1 * MS, 1, gpu);
        struct an_findings out = {0};
        const struct an_finding *f = run_rule(m, &out);
        assert_non_null(f);
        assert_string_equal(f->id, "changes_together");
        assert_true(synth_fig(f, "change_a")->value == AN_WI_NO_SYNC);
        assert_true(synth_fig(f, "change_b")->value == AN_WI_NO_CHURN);
        /* alone, each leaves the other's drain: little; together the 1 ms of logging a step
         * hides behind the 2 ms of kernels (all but the last step's) */
        double a = synth_fig(f, "saving_a_ns")->value, b = synth_fig(f, "saving_b_ns")->value;
        double both = synth_fig(f, "saving_together_ns")->value;
        assert_true(a < 0.05 * STEPS * MS);
        assert_true(b < 0.05 * STEPS * MS);
        assert_in_range(both, (STEPS - 2) * MS, (STEPS + 1) * MS);
        assert_true(f->saving_ns == (uint64_t)(both - a - b));  /* what the pair adds */
        assert_non_null(strstr(f->title, "no_sync and no_churn"));
        assert_non_null(strstr(f->change, "loss.item()"));
        assert_non_null(strstr(f->change, "expandable_segments"));
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* One drain alone (no churn): its own finding's, nothing together. Two overlapping changes
 * (a loader and a loss read on 8 CPUs: each saves on its own) exceed their sum by nothing. */
static void no_excess_no_finding(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_model *m = loop_model(1 * MS, 0, gpu);
        struct an_findings out = {0};
        assert_null(run_rule(m, &out));
        an_model_free(m);

        struct synth s = {.gpu_records = gpu, .cpus = 8};
        struct loop L = {.steps = STEPS, .input_ns = 4 * MS, .kernels = 4,
                         .kernel_ns = 500 * US, .launch_ns = 5 * US, .item = 1};
        synth_loop(&s, &L);
        m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        assert_null(run_rule(m, &out));
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* The excess over the two changes alone is held to min_share: at min_share the finding
 * is made, just above it not, though the two together save more than min_share. */
static void excess_held_to_min_share(void **state)
{
    (void)state;
    struct an_model *m = loop_model(200 * US, 1, 1);
    struct an_findings out = {0};
    const struct an_finding *f = run_rule(m, &out);
    assert_non_null(f);
    double share = an_whatif_share(m, f->saving_ns);
    double both = an_whatif_share(m, (uint64_t)synth_fig(f, "saving_together_ns")->value);
    an_findings_free(&out);
    an_model_free(m);
    struct an_thresholds th = AN_THRESHOLDS_DEFAULT;
    th.min_share = share;
    m = loop_model_th(200 * US, 1, 1, &th);
    assert_non_null(run_rule(m, &out));
    an_findings_free(&out);
    an_model_free(m);
    th.min_share = share * (1 + 1e-9);
    assert_true(both > th.min_share);
    m = loop_model_th(200 * US, 1, 1, &th);
    assert_null(run_rule(m, &out));
    an_findings_free(&out);
    an_model_free(m);
}

/* A pair of changes that leave the GPU's work alone saves no more than the idle time the
 * timeline measured, as each change alone: a replay that says the pair gives back 10x the
 * idle (a rank on a GPU 95 % busy, its launches slowed by another process) makes no
 * finding; host-only, where no idle is measured, it does. */
static void pair_held_to_measured_idle(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_model *m = loop_model(0, 0, gpu);
        int world = an_world_of(1u << AN_WI_GRAPHS | 1u << AN_WI_NO_CHURN);
        uint64_t base = m->replay.wall_ns[AN_WI_AS_MEASURED];
        assert_true(world > 0 && base > STEPS * MS);
        m->replay.wall_ns[world] = base - STEPS * MS;  /* a third of the run "saved" */
        struct an_findings out = {0};
        const struct an_finding *f = run_rule(m, &out);
        if (gpu) {
            assert_true(an_world_saving(m, 1u << AN_WI_GRAPHS | 1u << AN_WI_NO_CHURN) <
                        STEPS * MS / 10);
            assert_null(f);
        } else {
            assert_non_null(f);
            assert_true(synth_fig(f, "saving_together_ns")->value == STEPS * MS);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drains_that_hide_each_other),
        cmocka_unit_test(no_excess_no_finding),
        cmocka_unit_test(excess_held_to_min_share),
        cmocka_unit_test(pair_held_to_measured_idle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
