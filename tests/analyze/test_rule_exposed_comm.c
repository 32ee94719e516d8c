/* exposed_communication: collectives no compute ran beside, at min_share (5 %) of the wall
 * time and around it; only with a GPU timeline and collectives. The model's collective
 * figures are set on a synthetic run (comm_overlap.c's own test measures them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

static void cases(void **state)
{
    (void)state;
    static const struct { int timeline; uint64_t kernels; double exposed_share; int fires; } c[] = {
        {1, 40, 0.10, 1},
        {1, 40, 0.051, 1},
        {1, 40, 0.049, 0},   /* under min_share */
        {1, 0, 0.10, 0},     /* no collectives */
        {0, 40, 0.10, 0},    /* host-only: no GPU records to measure it on */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct synth s = {.gpu_records = c[i].timeline};
        struct loop L = {.steps = 20, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                         .item = 1};
        synth_loop(&s, &L);
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        assert_int_equal(m->gpu_timeline, c[i].timeline);
        m->comm_kernels = c[i].kernels;
        m->comm_exposed_ns = (uint64_t)(c[i].exposed_share * (double)m->wall_ns);
        m->comm_ns = 3 * m->comm_exposed_ns;
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_exposed_comm, &out, 8);
        if (c[i].fires) {
            assert_non_null(f);
            assert_string_equal(f->id, "exposed_communication");
            assert_false(f->risk);
            assert_int_equal(f->saving_ns, m->comm_exposed_ns);
            assert_int_equal((int64_t)synth_fig(f, "collectives")->value, 40);
            assert_int_equal((int64_t)synth_fig(f, "exposed_ns")->value, m->comm_exposed_ns);
            assert_non_null(strstr(f->change, "no_sync"));
            char share[64];  /* the evidence's share of the wall time */
            snprintf(share, sizeof share, "(%.0f%% of the wall time)", c[i].exposed_share * 100);
            assert_non_null(strstr(f->evidence, share));
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
