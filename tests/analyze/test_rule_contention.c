/* contention: the training thread runnable without a CPU (the CPU samples' run-queue time)
 * is its own cause, never the input pipeline's. The loop: 4 ms with no CUDA call, then 3 ms
 * of GPU work waited for, each step; the samples say how much of the time the thread was
 * preempted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

/* CPU samples every 25 ms: the training thread (tid 1) on a CPU `busy` of the time and
 * runnable without one `runq` of it (recorded: with_runq); no worker process. */
static void add_samples(struct synth *s, double busy, double runq, int with_runq)
{
    for (uint64_t t = 0; t <= s->now; t += 25 * MS) {
        struct an_ev thread = {.ts = t, .end = t, .tid = 99, .kind = AN_CPU_THREAD, .ptr = 1,
                               .bytes = (uint64_t)((double)t * busy)};
        if (with_runq) {
            thread.dir = 1;
            thread.end = t + (uint64_t)((double)t * runq);
        }
        synth_push(s, &thread);
        struct an_ev proc = {.ts = t, .end = t, .tid = 99, .kind = AN_CPU_PROC,
                             .bytes = (uint64_t)((double)t * busy)};
        synth_push(s, &proc);
    }
}

/* The model of s's events (s freed) with every rule run on 8 CPUs into out; contention's
 * finding, NULL when none. */
static const struct an_finding *contention_of(struct synth *s, struct an_findings *out,
                                              struct an_model **m)
{
    *m = synth_model(s, NULL, 1ull << 30, 0);
    synth_free(s);
    struct an_rule_ctx ctx = {.cpus = 8, .local_world = 1};
    an_run_rules(*m, &ctx, out);
    return an_findings_find(out, "contention");
}

/* The findings of both rules on the loop with these samples; input_pipeline and contention
 * (NULL when not found). */
static void findings(double busy, double runq, int with_runq, struct an_findings *out,
                     const struct an_finding **input, const struct an_finding **contention,
                     struct an_model **m)
{
    struct synth s = {.gpu_records = 1, .cpus = 8};
    struct loop L = {.steps = 40, .input_ns = 4 * MS, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    add_samples(&s, busy, runq, with_runq);
    *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    struct an_rule_ctx ctx = {.cpus = 8, .local_world = 1};
    an_run_rules(*m, &ctx, out);
    *input = an_findings_find(out, "input_pipeline");
    *contention = an_findings_find(out, "contention");
}

/* Preempted 60 % of the time: the 4 ms stretches (57 % of a 7 ms step) are the scheduler's,
 * not the loader's: contention, with its advice; no input finding (its replayed saving less
 * the preempted time is under min_share). */
static void preempted_is_contention(void **state)
{
    (void)state;
    struct an_findings out = {0};
    const struct an_finding *input, *contention;
    struct an_model *m;
    findings(0.35, 0.6, 1, &out, &input, &contention, &m);
    assert_true(m->cpu.runq_known);
    assert_true(m->cpu.train_runq > 0.58 && m->cpu.train_runq < 0.62);
    assert_non_null(contention);
    assert_null(input);
    assert_true(contention && strstr(contention->change, "OMP_NUM_THREADS"));
    assert_true(contention && strstr(contention->change, "More DataLoader workers would"));
    assert_true(contention && strstr(contention->evidence, "without a CPU 60%"));
    /* the preempted time, at most the GPU's idle time: ~4 ms of each 7 ms step idle */
    assert_true(contention->saving_share > 0.5 && contention->saving_share < 0.62);
    an_findings_free(&out);
    an_model_free(m);
}

/* Preempted 20 %: both; the input finding keeps what the workers can give back beyond the
 * preempted time. */
static void some_preemption_trims_the_input_saving(void **state)
{
    (void)state;
    struct an_findings out = {0}, clean = {0};
    const struct an_finding *input, *contention, *input0, *contention0;
    struct an_model *m, *m0;
    findings(0.7, 0.2, 1, &out, &input, &contention, &m);
    findings(0.9, 0, 1, &clean, &input0, &contention0, &m0);
    assert_non_null(contention);
    assert_non_null(input);
    assert_null(contention0);
    assert_non_null(input0);
    /* 20 % of the run's wall less */
    double less = (double)(input0->saving_ns - input->saving_ns) / (double)m->wall_ns;
    if (less < 0.18 || less > 0.22)
        fail_msg("input saving trimmed by %.3f of wall", less);
    an_findings_free(&out);
    an_findings_free(&clean);
    an_model_free(m);
    an_model_free(m0);
}

/* Samples without the run-queue time (an older trace, no schedstat): nothing said. */
static void unrecorded_says_nothing(void **state)
{
    (void)state;
    struct an_findings out = {0};
    const struct an_finding *input, *contention;
    struct an_model *m;
    findings(0.35, 0.6, 0, &out, &input, &contention, &m);
    assert_false(m->cpu.runq_known);
    assert_null(contention);
    assert_non_null(input);
    an_findings_free(&out);
    an_model_free(m);
}

/* A healthy loop host-only (issue 36 A3): the thread spends 90 % of its time in waits for
 * the GPU and is preempted 20 % of the time. Preempted inside a wait it loses nothing: the
 * bound is the 2 % outside them, under min_share; preempted with no waits, 20 % stands. */
static void preempted_in_waits_is_no_contention(void **state)
{
    (void)state;
    for (int waits = 0; waits < 2; waits++) {
        struct synth s = {.gpu_records = 0, .cpus = 8};
        struct loop L = {.steps = 40, .kernels = 3, .kernel_ns = 2 * MS, .launch_ns = 5 * US,
                         .item = 1};
        synth_loop(&s, &L);
        for (uint64_t t = 0; t <= s.now; t += 25 * MS) {
            struct an_ev thread = {.ts = t, .tid = 99, .kind = AN_CPU_THREAD, .ptr = 1,
                                   .bytes = (uint64_t)((double)t * 0.8),
                                   .key = waits ? (uint64_t)((double)t * 0.9) : 0,
                                   .stream = waits ? (uint64_t)((double)t * 0.7) : 0, .dir = 1,
                                   .end = t + (uint64_t)((double)t * 0.2)};
            synth_push(&s, &thread);
            struct an_ev proc = {.ts = t, .end = t, .tid = 99, .kind = AN_CPU_PROC,
                                 .bytes = (uint64_t)((double)t * 0.8)};
            synth_push(&s, &proc);
        }
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = contention_of(&s, &out, &m);
        if (waits) {
            assert_null(f);
        } else {
            assert_non_null(f);
            assert_true(f->saving_share > 0.15 && f->saving_share < 0.25);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* Preempted at the start only (issue 34: CPU hogs that eased off after 170 ms): 12 steps
 * of 15 ms, 8 ms of each runnable without a CPU, then 40 steps of 7 ms. Slow by preemption,
 * the first steps are no warm-up, and the contention they show is found; the same slow
 * start with no preemption recorded is warm-up, and nothing is contended. */
static void a_preempted_start_is_no_warmup(void **state)
{
    (void)state;
    for (int preempted = 0; preempted < 2; preempted++) {
        struct synth s = {.gpu_records = 1, .cpus = 8};
        struct loop slow = {.steps = 12, .input_ns = 12 * MS, .kernels = 3,
                            .kernel_ns = 1 * MS, .launch_ns = 5 * US, .item = 1};
        struct loop L = slow;
        L.steps = 40;
        L.input_ns = 4 * MS;
        synth_loop(&s, &slow);
        uint64_t slow_end = s.now;
        synth_loop(&s, &L);
        for (uint64_t t = 0; t <= s.now + 25 * MS; t += 25 * MS) {
            uint64_t in_slow = t < 1000 * MS ? 0 : (t < slow_end ? t : slow_end) - 1000 * MS;
            struct an_ev thread = {.ts = t, .tid = 99, .kind = AN_CPU_THREAD, .ptr = 1,
                                   .bytes = t / 2, .dir = 1,
                                   .end = t + (preempted ? in_slow * 8 / 15 : 0)};
            synth_push(&s, &thread);
            struct an_ev proc = {.ts = t, .end = t, .tid = 99, .kind = AN_CPU_PROC,
                                 .bytes = t / 2};
            synth_push(&s, &proc);
        }
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = contention_of(&s, &out, &m);
        if (preempted) {
            assert_int_equal(m->steps.warmup, 0);
            assert_non_null(f);
        } else {
            assert_int_equal(m->steps.warmup, 11);  /* (the first step ends at the first marker) */
            assert_null(f);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(preempted_in_waits_is_no_contention),
        cmocka_unit_test(preempted_is_contention),
        cmocka_unit_test(some_preemption_trims_the_input_saving),
        cmocka_unit_test(unrecorded_says_nothing),
        cmocka_unit_test(a_preempted_start_is_no_warmup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
