/* --fail-if: parsing (usage errors) and evaluation against a run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "analyze.h"
#include "synth.h"

static int holds(const char *expr, const struct an_run *run)
{
    struct an_condition *c;
    char err[256];
    assert_int_equal(an_condition_parse(expr, &c, err, sizeof err), 0);
    int r = an_condition_holds(c, run);
    an_condition_free(c);
    return r;
}

static int bad(const char *expr)
{
    struct an_condition *c = NULL;
    char err[256] = "";
    int rc = an_condition_parse(expr, &c, err, sizeof err);
    an_condition_free(c);
    return rc != 0 && err[0];
}

static void parse_errors(void **state)
{
    (void)state;
    assert_true(bad(""));
    assert_true(bad("gpu_util"));
    assert_true(bad("gpu_util<"));
    assert_true(bad("gpu_util<abc"));
    assert_true(bad("gpu_util<0.6x"));
    assert_true(bad("gpu_utilization<0.6"));
    assert_true(bad("finding<input_pipeline"));
    assert_true(bad("finding=no_such_rule"));
    assert_true(bad("idle.nothing>0"));
}

/* A run of one input-bound process, built by hand around its model. */
static void evaluation(void **state)
{
    (void)state;
    struct synth s = {0};
    struct loop L = {.steps = 30, .input_ns = 4 * MS, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    struct an_trace trace = {.readable = 1, .model = m, .active = 1};
    struct an_run run = {.traces = &trace, .ntraces = 1, .active = 1};
    run.busy_ns = an_busy_ns(m, &m->total, m->wall_ns);
    run.span_ns = m->wall_ns;
    struct an_rule_ctx ctx = {.cpus = 8, .local_world = 1};
    an_run_rules(m, &ctx, &run.findings);
    an_findings_rank(&run.findings);
    assert_true(holds("finding=input_pipeline", &run));
    assert_false(holds("finding!=input_pipeline", &run));
    assert_false(holds("finding=leak", &run));
    assert_true(holds("gpu_util<0.6", &run));
    assert_true(holds("gpu_util < 60%", &run));
    assert_false(holds("gpu_util>=0.6", &run));
    assert_true(holds("steps==29", &run));
    assert_true(holds("step_ms>6.5", &run));
    assert_true(holds("idle.input_pipeline>0.5", &run));
    assert_true(holds("findings>=1", &run));
    assert_true(holds("saving_share>0.25", &run));
    assert_false(holds("saving_share>0.9", &run));
    assert_false(holds("damaged_bytes>0", &run));
    an_findings_free(&run.findings);
    an_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_errors),
        cmocka_unit_test(evaluation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
