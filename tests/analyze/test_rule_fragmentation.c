/* fragmentation: an allocation failing while enough was free in total; churn of
 * churn_per_step (1) alloc/free calls per steady step and more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

static struct an_model *churn(unsigned every, int item, uint64_t host_ns)
{
    struct synth s = {0};
    struct loop L = {.steps = 40, .input_ns = host_ns, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = item, .churn_every = every};
    synth_loop(&s, &L);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return m;
}

/* One alloc + free each step = 2 calls a step: churn; every 4th step = 0.5: none. The free
 * is the step's only drain, so 0.6 ms of host work a step waits behind it: without the
 * churn it overlaps the GPU's 3 ms, 0.6 ms a step saved. */
static void churn_around_threshold(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        struct an_model *m = churn(k ? 1 : 4, 0, 600 * US);
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_fragmentation, &out, 8);
        if (k) {
            assert_non_null(f);
            assert_true(f && strstr(f->evidence, "alloc/free calls (in pairs) per steady step"));
            assert_true(f && strstr(f->change, "expandable_segments:True"));
            assert_int_equal(f->risk, 0);
            /* 39 steps: the first free found the queue as empty as the host left it */
            assert_true(f->saving_ns > 39 * 600 * US * 0.9 && f->saving_ns < 40 * 600 * US * 1.1);
        } else {
            assert_null(f);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* The same churn before loss.item(): the free waits for the GPU, but the item would wait
 * for the same work right after; removing the churn gives back only the calls' own time,
 * under min_share: no time finding (the free's wait is not the churn's to give back). */
static void churn_before_a_sync_saves_little(void **state)
{
    (void)state;
    struct an_model *m = churn(1, 1, 600 * US);
    struct an_findings out = {0};
    assert_null(synth_rule(m, an_rule_fragmentation, &out, 8));
    an_findings_free(&out);
    an_model_free(m);
}

/* 4 MiB allocated every step and never freed (a leak; on an H100 each cuMemAlloc took
 * ~170 us, over min_share of the step): allocations alone are no churn, and steady growth
 * is the leak rule's, so no fragmentation finding. */
static void allocs_without_frees(void **state)
{
    (void)state;
    struct synth s = {0};
    struct loop L = {.steps = 40, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                     .item = 1, .leak_bytes = 4u << 20};
    synth_loop(&s, &L);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    assert_true(m->steady.allocs >= m->steps.steady);
    assert_int_equal(m->steady.frees, 0);
    struct an_findings out = {0};
    assert_null(synth_rule(m, an_rule_fragmentation, &out, 8));
    an_findings_free(&out);
    an_model_free(m);
}

/* 200 MiB requested while 1 GiB - 500 MiB held was free: fragmented. A 600 MiB request
 * in the same state is simply too large. */
static void failed_while_free(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        struct synth s = {0};
        synth_alloc(&s, 500u << 20, 0);
        struct loop L = {.steps = 10, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                         .item = 1};
        synth_loop(&s, &L);
        synth_alloc(&s, k ? 200u << 20 : 600u << 20, 1);
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        assert_int_equal(m->mem.ooms_fragmented, k ? 1 : 0);
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_fragmentation, &out, 8);
        if (k) {
            assert_non_null(f);
            assert_true(f->risk);
            assert_non_null(strstr(f->evidence, "enough memory was free"));
        } else {
            assert_null(f);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(churn_around_threshold),
        cmocka_unit_test(churn_before_a_sync_saves_little),
        cmocka_unit_test(failed_while_free),
        cmocka_unit_test(allocs_without_frees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
