/*
 * The host's CPUs as the replay shares them (tools/analyze/replay/cpu_sched.c), against
 * oracles: small programs whose times are worked out by hand, the working in each test's
 * comment (processor sharing: n runnable threads on c CPUs each get min(1, c / n) of a
 * CPU, less where a thread's cap is lower and the others share what it leaves).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "replay/cpu_sched.h"

#define MS 1e6

#define WORK(ms) {AN_CS_WORK, 0, 0, (ms) * MS}
#define SLEEP(ms) {AN_CS_SLEEP, 0, 0, (ms) * MS}
#define WAIT_SPIN(e) {AN_CS_WAIT, 1, (e), 0}
#define WAIT_SLEEP(e) {AN_CS_WAIT, 0, (e), 0}
#define SIGNAL(e) {AN_CS_SIGNAL, 0, (e), 0}
#define THREAD(s, rep) {.steps = (s), .nsteps = sizeof(s) / sizeof((s)[0]), .repeat = (rep)}

/* (the replay works in double ns: a thousandth of a ns is exact enough) */
#define assert_ms(value, ms)                                                            \
    do {                                                                                \
        double v_ = (value), want_ = (ms) * MS;                                         \
        if (fabs(v_ - want_) > 1e-3)                                                    \
            fail_msg("%s = %.6f ms, the oracle says %.6f ms", #value, v_ / MS, want_ / MS); \
    } while (0)

static struct an_cs cs;  /* (its timed signals make it large: not on the stack) */

/* 1 CPU, two threads of 10 ms each: each gets half of it, both end at 20 ms, each having
 * waited for the CPU half of that time (10 ms). */
static void test_one_cpu_two_threads(void **state)
{
    (void)state;
    static const struct an_cs_step ten[] = {WORK(10)};
    struct an_cs_thread t[] = {THREAD(ten, 1), THREAD(ten, 1)};
    assert_int_equal(an_cs_init(&cs, 1, t, 2), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    for (int i = 0; i < 2; i++) {
        assert_ms(t[i].end_ns, 20);
        assert_ms(t[i].cpu_ns, 10);
        assert_ms(t[i].runq_ns, 10);
    }
}

/* 2 CPUs, three threads of 10 ms: 2/3 of a CPU each, so 15 ms, a third of it (5 ms) in the
 * run queue. */
static void test_two_cpus_three_threads(void **state)
{
    (void)state;
    static const struct an_cs_step ten[] = {WORK(10)};
    struct an_cs_thread t[] = {THREAD(ten, 1), THREAD(ten, 1), THREAD(ten, 1)};
    assert_int_equal(an_cs_init(&cs, 2, t, 3), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    for (int i = 0; i < 3; i++) {
        assert_ms(t[i].end_ns, 15);
        assert_ms(t[i].runq_ns, 5);
    }
}

/* Another process's load: a thread that never ends, capped at its measured share. At 0.97
 * of a CPU it still takes a full third of 2 CPUs' fair share (2/3 < 0.97): two threads of
 * 10 ms end at 15 ms, and do not wait for it to end. At 0.5 it takes 0.5, the two share
 * the 1.5 left, 0.75 each: 10 / 0.75 = 13.333 ms. */
static void test_other_process_load(void **state)
{
    (void)state;
    static const struct an_cs_step ten[] = {WORK(10)}, hog[] = {WORK(1)};
    struct an_cs_thread t[] = {THREAD(ten, 1), THREAD(ten, 1), THREAD(hog, AN_CS_FOREVER)};
    t[2].cap = 0.97;
    assert_int_equal(an_cs_init(&cs, 2, t, 3), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(t[0].end_ns, 15);
    assert_ms(t[1].end_ns, 15);
    assert_ms(t[2].cpu_ns, 10);
    t[2].cap = 0.5;
    assert_int_equal(an_cs_init(&cs, 2, t, 3), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(t[0].end_ns, 10 / 0.75);
    assert_ms(t[2].cpu_ns, 0.5 * 10 / 0.75);
    assert_ms(t[2].runq_ns, 0);  /* (it took all it would) */
}

/* A cgroup quota of 1.5 CPUs: two threads of 10 ms get 0.75 each, 13.333 ms. */
static void test_quota(void **state)
{
    (void)state;
    static const struct an_cs_step ten[] = {WORK(10)};
    struct an_cs_thread t[] = {THREAD(ten, 1), THREAD(ten, 1)};
    assert_int_equal(an_cs_init(&cs, 1.5, t, 2), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(t[0].end_ns, 10 / 0.75);
    assert_ms(t[1].runq_ns, 0.25 * 10 / 0.75);
}

/* A sleep is off the CPU. 1 CPU: A sleeps 5 ms then works 10; B works 10. B alone to 5 ms
 * (5 done), then both at a half: B's last 5 take 10 ms, it ends at 15; A has done 5 by
 * then, its last 5 alone: 20 ms. Each waited for the CPU half of the 10 ms shared: 5. */
static void test_sleep_is_off_the_cpu(void **state)
{
    (void)state;
    static const struct an_cs_step a[] = {SLEEP(5), WORK(10)}, b[] = {WORK(10)};
    struct an_cs_thread t[] = {THREAD(a, 1), THREAD(b, 1)};
    assert_int_equal(an_cs_init(&cs, 1, t, 2), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(t[0].end_ns, 20);
    assert_ms(t[1].end_ns, 15);
    assert_ms(t[0].runq_ns, 5);
    assert_ms(t[1].runq_ns, 5);
    assert_ms(t[0].cpu_ns, 10);
}

/* A training thread waits for the GPU (its event signalled at 5 ms) beside two workers of
 * 10 ms each, on 2 CPUs; it works 1 ms before the wait and 1 ms after.
 * Spinning (CUDA's default): three runnable throughout, 2/3 each. Its first 1 ms ends at
 * 1.5; it spins to 5 (3.5 ms at 2/3: 2.333 ms of CPU); its last 1 ms ends at 6.5. The
 * workers have done 1 + 3.5 * 2/3 + 1 = 4.333 ms by 6.5, the 5.667 left alone at a full
 * CPU each: 12.167 ms.
 * Sleeping (cudaDeviceScheduleBlockingSync): from 1.5 to 5 the workers have a CPU each, 4.5
 * done by 5, 5.5 by 6.5, 11 ms at the end: the spinning wait cost them 1.167 ms. */
static void test_spinning_wait_holds_a_cpu(void **state)
{
    (void)state;
    static const struct an_cs_step spin[] = {WORK(1), WAIT_SPIN(0), WORK(1)},
                                   sleep[] = {WORK(1), WAIT_SLEEP(0), WORK(1)},
                                   load[] = {WORK(10)};
    struct an_cs_thread t[] = {THREAD(spin, 1), THREAD(load, 1), THREAD(load, 1)};
    assert_int_equal(an_cs_init(&cs, 2, t, 3), 0);
    assert_int_equal(an_cs_signal_at(&cs, 0, 5 * MS), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(t[0].end_ns, 6.5);
    assert_ms(t[0].spin_ns, 3.5 * 2 / 3);
    assert_ms(t[0].cpu_ns, 2 + 3.5 * 2 / 3);
    assert_ms(t[1].end_ns, 6.5 + (10 - (1 + 3.5 * 2 / 3 + 1)));
    assert_ms(t[2].end_ns, t[1].end_ns / MS);

    struct an_cs_thread u[] = {THREAD(sleep, 1), THREAD(load, 1), THREAD(load, 1)};
    assert_int_equal(an_cs_init(&cs, 2, u, 3), 0);
    assert_int_equal(an_cs_signal_at(&cs, 0, 5 * MS), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(u[0].end_ns, 6.5);
    assert_ms(u[0].spin_ns, 0);
    assert_ms(u[0].cpu_ns, 2);
    assert_ms(u[1].end_ns, 11);
}

/* A loader thread makes 4 batches of 2 ms, the training thread takes each and works 1 ms.
 * 2 CPUs: the batches are ready at 2, 4, 6, 8 and each step ends 1 ms after: 9 ms, no
 * run-queue time. 1 CPU: batch 1 at 2; the step's 1 ms and the next load share the CPU,
 * the step ends at 4, the load (1 ms done) at 5; so steps end at 4, 7, 10 and, the loader
 * done at 11, the last alone at 12. Each waited 1 ms in each of three shared stretches. */
static void test_loader_and_training_thread(void **state)
{
    (void)state;
    static const struct an_cs_step train[] = {WAIT_SLEEP(0), WORK(1)},
                                   loader[] = {WORK(2), SIGNAL(0)};
    struct an_cs_thread t[] = {THREAD(train, 4), THREAD(loader, 4)};
    assert_int_equal(an_cs_init(&cs, 2, t, 2), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(t[0].end_ns, 9);
    assert_ms(t[1].end_ns, 8);
    assert_ms(t[0].runq_ns, 0);

    assert_int_equal(an_cs_init(&cs, 1, t, 2), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(t[0].end_ns, 12);
    assert_ms(t[1].end_ns, 11);
    assert_ms(t[0].runq_ns, 3);
    assert_ms(t[1].runq_ns, 3);
}

/* The prefetch bound: 2 slots (signalled at the start), a worker that waits for a slot,
 * loads 1 ms and hands the batch over; the training thread takes a batch, gives its slot
 * back and works 3 ms. 2 CPUs. Batches at 1 and 2, then the worker waits; the step taking
 * batch 1 at 1 frees a slot: batch 3 at 3; batch 2 taken at 4 frees one: batch 4 at 5.
 * Steps end at 4, 7, 10, 13. */
static void test_prefetch_bound(void **state)
{
    (void)state;
    enum { BATCH, SLOT };
    static const struct an_cs_step train[] = {WAIT_SLEEP(BATCH), SIGNAL(SLOT), WORK(3)},
                                   worker[] = {WAIT_SLEEP(SLOT), WORK(1), SIGNAL(BATCH)};
    struct an_cs_thread t[] = {THREAD(train, 4), THREAD(worker, 4)};
    assert_int_equal(an_cs_init(&cs, 2, t, 2), 0);
    assert_int_equal(an_cs_signal_at(&cs, SLOT, 0), 0);
    assert_int_equal(an_cs_signal_at(&cs, SLOT, 0), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(t[0].end_ns, 13);
    assert_ms(t[1].end_ns, 5);
    assert_ms(t[1].cpu_ns, 4);
}

/* The GPU as a pool of its own (capacity 1), its stream a thread that waits for the
 * launches the training thread signals. Per step the thread launches for 0.2 ms, reads
 * the loss back (.item(): a spinning wait for the step's kernels, 1 ms), then logs for
 * 0.4 ms: 1.6 ms a step, 4 steps 6.4 ms. The read removed, an edit of the thread's steps
 * (no wait), the host runs ahead (0.6 ms a step) and the GPU, its kernels queued, runs
 * them back to back from 0.2 ms: 0.2 + 4 x 1 = 4.2 ms, the thread itself done at 2.4. */
static void test_gpu_pool_sync_removed(void **state)
{
    (void)state;
    enum { LAUNCHED, DONE };
    static const struct an_cs_step read[] = {WORK(0.2), SIGNAL(LAUNCHED), WAIT_SPIN(DONE),
                                             WORK(0.4)},
                                   no_read[] = {WORK(0.2), SIGNAL(LAUNCHED), WORK(0.4)},
                                   stream[] = {WAIT_SLEEP(LAUNCHED), WORK(1), SIGNAL(DONE)};
    struct an_cs_thread t[] = {THREAD(read, 4), THREAD(stream, 4)};
    t[1].pool = 1;
    assert_int_equal(an_cs_init(&cs, 2, t, 2), 0);
    assert_int_equal(an_cs_set_pool(&cs, 1, 1), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(t[0].end_ns, 6.4);
    assert_ms(t[0].spin_ns, 4);
    assert_ms(t[1].cpu_ns, 4);  /* (the GPU's busy time) */

    struct an_cs_thread u[] = {THREAD(no_read, 4), THREAD(stream, 4)};
    u[1].pool = 1;
    assert_int_equal(an_cs_init(&cs, 2, u, 2), 0);
    assert_int_equal(an_cs_set_pool(&cs, 1, 1), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(u[0].end_ns, 2.4);
    assert_ms(u[1].end_ns, 4.2);
    assert_int_equal(an_cs_set_pool(&cs, 0, 1), -1);
}

/* Loads moved to N workers, an edit of the threads: 2 CPUs, a GPU; 4 steps, each a batch
 * loaded in 4 ms of CPU, then 1 ms of launches and a spinning wait for 2 ms of kernels.
 * One worker: it has a CPU to itself (the thread spins on the other): batches at 4, 8,
 * 12, 16; each step launches to +1 and waits to +3: the last ends at 19 ms.
 * Two workers (two batches each): both batches at 4; from 4 the thread (launching, then
 * spinning) and the two workers share 2 CPUs, 2/3 each: launches end at 5.5, kernels at
 * 7.5; the second step's launches at 9.0; the workers, 1 + 2 x 2/3 + 1 = 3.333 ms done by
 * then, end their 0.667 left at 10; the GPU ends at 11; then alone: launches 11-12,
 * kernels 12-14, launches 14-15, kernels 15-17: 17 ms.
 * Four workers (one batch each): 4 threads on 2 CPUs, all batches at 8; then 3 ms a step
 * alone: 20 ms, slower than one worker: workers past what the CPUs run only slow it. */
static void test_workers_share_the_cpus_with_a_spinning_thread(void **state)
{
    (void)state;
    enum { BATCH, LAUNCHED, DONE };
    static const struct an_cs_step train[] = {WAIT_SLEEP(BATCH), WORK(1), SIGNAL(LAUNCHED),
                                              WAIT_SPIN(DONE)},
                                   stream[] = {WAIT_SLEEP(LAUNCHED), WORK(2), SIGNAL(DONE)},
                                   load[] = {WORK(4), SIGNAL(BATCH)};
    static const double end_ms[] = {0, 19, 17, 0, 20};
    for (unsigned workers = 1; workers <= 4; workers *= 2) {
        struct an_cs_thread t[6] = {THREAD(train, 4), THREAD(stream, 4)};
        t[1].pool = 1;
        for (unsigned w = 0; w < workers; w++)
            t[2 + w] = (struct an_cs_thread)THREAD(load, 4 / workers);
        assert_int_equal(an_cs_init(&cs, 2, t, 2 + workers), 0);
        assert_int_equal(an_cs_set_pool(&cs, 1, 1), 0);
        assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
        assert_ms(t[0].end_ns, end_ms[workers]);
    }
}

/* A wait nothing will signal is said, not looped on; a run may stop at a given time and go
 * on from there. */
static void test_stuck_and_until(void **state)
{
    (void)state;
    static const struct an_cs_step waits[] = {WORK(1), WAIT_SPIN(3)};
    struct an_cs_thread t[] = {THREAD(waits, 1)};
    assert_int_equal(an_cs_init(&cs, 1, t, 1), 0);
    assert_int_equal(an_cs_run(&cs, 0.5 * MS), AN_CS_UNTIL);
    assert_ms(cs.now, 0.5);
    assert_ms(t[0].cpu_ns, 0.5);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_STUCK);
    assert_ms(cs.now, 1);
    assert_int_equal(t[0].done, 0);
    assert_int_equal(an_cs_signal_at(&cs, 3, 4 * MS), 0);
    assert_int_equal(an_cs_run(&cs, INFINITY), AN_CS_ALL_DONE);
    assert_ms(t[0].end_ns, 4);
    assert_ms(t[0].spin_ns, 3);  /* spun from 1 to 4 with the CPU to itself */
    assert_int_equal(an_cs_signal_at(&cs, AN_CS_MAX_EVENTS, 0), -1);
    static const struct an_cs_step bad[] = {WAIT_SLEEP(AN_CS_MAX_EVENTS)};
    struct an_cs_thread b[] = {THREAD(bad, 1)};
    assert_int_equal(an_cs_init(&cs, 1, b, 1), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_cpu_two_threads),
        cmocka_unit_test(test_two_cpus_three_threads),
        cmocka_unit_test(test_other_process_load),
        cmocka_unit_test(test_quota),
        cmocka_unit_test(test_sleep_is_off_the_cpu),
        cmocka_unit_test(test_spinning_wait_holds_a_cpu),
        cmocka_unit_test(test_loader_and_training_thread),
        cmocka_unit_test(test_prefetch_bound),
        cmocka_unit_test(test_gpu_pool_sync_removed),
        cmocka_unit_test(test_workers_share_the_cpus_with_a_spinning_thread),
        cmocka_unit_test(test_stuck_and_until),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
