/*
 * Property tests of the model and the rules: random training-like runs (random_run.h),
 * with and without GPU records, each analyzed and checked against what must hold of any
 * run (invariants.h). The runs come from fixed seeds, so a failure names its seed and
 * replays; GW_PROPERTY_RUNS=N checks N seeds per mode instead of the default.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "invariants.h"
#include "random_run.h"
#include "run_oracle.h"

#define DEFAULT_RUNS 600
#define RUN_BYTES 512

/* The run of one seed, analyzed: 0 when every invariant holds. The model and findings are
 * returned for the tests that look further. */
static int check_seed(uint64_t seed, int gpu_records, struct inv *v, struct rr *r,
                      struct an_model **model, struct an_findings *found)
{
    uint8_t bytes[RUN_BYTES];
    rr_seed_bytes(seed, 1, bytes, sizeof bytes);
    uint64_t others = seed % 3 == 0 ? 256ull << 20 : 0;
    return oracle_check_run(bytes, sizeof bytes, gpu_records, others, r, model, found, v);
}

static unsigned runs(void)
{
    const char *env = getenv("GW_PROPERTY_RUNS");
    return env && atoi(env) > 0 ? (unsigned)atoi(env) : DEFAULT_RUNS;
}

/* Every seed's run, in one mode; counts what the runs reached so that a generator that
 * stopped exercising the rules shows. */
static void check_mode(int gpu_records)
{
    unsigned n = runs(), failures = 0, with_steps = 0, with_findings = 0, assumed = 0;
    unsigned fired[32] = {0};
    for (uint64_t seed = 1; seed <= n; seed++) {
        struct rr r;
        struct inv v;
        struct an_model *m;
        struct an_findings found = {0};
        if (check_seed(seed, gpu_records, &v, &r, &m, &found)) {
            if (failures++ < 5)
                fprintf(stderr, "seed %llu (%s): %s\n", (unsigned long long)seed,
                        gpu_records ? "GPU records" : "host only", v.why);
        }
        with_steps += m->steps.steady > 0;
        assumed += m->assumed_drains > 0;
        with_findings += found.count > 0;
        for (size_t i = 0; i < found.count; i++)
            for (size_t k = 0; k < an_nrules && k < 32; k++)
                fired[k] += strcmp(found.items[i].id, an_rules[k].id) == 0;
        an_findings_free(&found);
        an_model_free(m);
        synth_free(&r.s);
    }
    fprintf(stderr,
            "%s: %u runs, %u with steady steps, %u with findings, %u with assumed drains; "
            "by rule:",
            gpu_records ? "GPU records" : "host only", n, with_steps, with_findings, assumed);
    for (size_t k = 0; k < an_nrules && k < 32; k++)
        fprintf(stderr, " %s %u", an_rules[k].id, fired[k]);
    fprintf(stderr, "\n");
    assert_int_equal(failures, 0);
    /* the runs must reach what they are meant to test: steps, and most of the rules */
    assert_true(with_steps >= n / 4);
    unsigned rules_reached = 0;
    for (size_t k = 0; k < an_nrules && k < 32; k++)
        rules_reached += fired[k] > 0;
    assert_true(rules_reached >= an_nrules - 2);
}

static void host_only_runs(void **state)
{
    (void)state;
    check_mode(0);
}

static void gpu_record_runs(void **state)
{
    (void)state;
    check_mode(1);
}

/* The checks themselves can fail: a model with a figure broken by hand is caught. */
static void invariants_catch_a_broken_model(void **state)
{
    (void)state;
    struct rr r;
    struct inv v;
    struct an_model *m;
    struct an_findings found = {0};
    uint64_t seed = 1;
    while (check_seed(seed, 1, &v, &r, &m, &found) == 0 && m->steps.steady == 0) {
        an_findings_free(&found);
        an_model_free(m);
        synth_free(&r.s);
        found = (struct an_findings){0};
        seed++;
    }
    assert_int_equal(v.broken, 0);
    m->steps.warmup++;
    assert_int_equal(inv_all(&v, m, &found), 1);
    assert_non_null(strstr(v.why, "warm-up"));
    m->steps.warmup--;
    m->mem.live[AN_MEM_POOL] += 1;
    assert_int_equal(inv_all(&v, m, &found), 1);
    assert_non_null(strstr(v.why, "live by kind"));
    m->mem.live[AN_MEM_POOL] -= 1;
    m->steady.launches = m->total.launches + 1;
    assert_int_equal(inv_all(&v, m, &found), 1);
    assert_non_null(strstr(v.why, "steady launches"));
    m->steady.launches = m->total.launches;
    /* a world that ends before the device could run its kernels (issue 36, class 5) */
    v.broken = 0;
    assert_int_equal(oracle_worlds(&r, m, &v), 0);
    uint64_t kept = m->replay.wall_ns[3];
    m->replay.wall_ns[3] = 1000;
    assert_int_equal(oracle_worlds(&r, m, &v), 1);
    assert_non_null(strstr(v.why, "the device's kernels need"));
    m->replay.wall_ns[3] = kept;
    an_findings_free(&found);
    an_model_free(m);
    synth_free(&r.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(invariants_catch_a_broken_model),
        cmocka_unit_test(host_only_runs),
        cmocka_unit_test(gpu_record_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
