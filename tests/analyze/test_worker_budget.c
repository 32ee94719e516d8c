/*
 * The workers' CPU budget (worker_budget.h): the count a user starts, and how much of the
 * CPUs the loads get once the training thread, the process's other threads and other
 * processes have what they use, from CPU figures set by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "model.h"
#include "worker_budget.h"

/* A loop whose training thread loads for 4 ms of every 6.4 ms (a share of 0.625) */
/* The waits as measured and in the workers world: with a timeline the worlds at their
 * least are the same (replay.h, AN_WI_LEAST; replay.c, an_replay_finish) */
static void measured_wait(struct an_model *m, uint64_t ns)
{
    m->replay.loader_wait_ns[AN_WI_AS_MEASURED] = ns;
    m->replay.loader_wait_ns[an_world_of(1u << AN_WI_LEAST)] = ns;
}
static void workers_wait(struct an_model *m, uint64_t ns)
{
    m->replay.loader_wait_ns[an_world_of(1u << AN_WI_INPUT_WORKERS)] = ns;
    m->replay.loader_wait_ns[an_world_of(1u << AN_WI_INPUT_WORKERS | 1u << AN_WI_LEAST)] = ns;
}

static void loop(struct an_model *m, double train_cpus, double process_cpus, double others)
{
    m->replay.done = 1;
    m->replay.loads = 60;
    m->replay.load_ns = 240000000;
    m->replay.loop_ns = 384000000;
    m->cpu.known = 1;
    m->cpu.train_cpus = train_cpus;
    m->cpu.process_cpus = process_cpus;
    m->cpu.others_known = others >= 0;
    m->cpu.others_cpus = others >= 0 ? others : 0;
}

/* The workers world's loop `share` as long as the loop as measured (the runs 500 ms; with a
 * timeline the worlds at their least are the same). */
static void workers_loop(struct an_model *m, double share)
{
    uint64_t wall = 500000000, wk = wall - (uint64_t)((1 - share) * 384000000.0);
    m->replay.wall_ns[AN_WI_AS_MEASURED] = m->replay.wall_ns[an_world_of(1u << AN_WI_LEAST)] = wall;
    m->replay.wall_ns[an_world_of(1u << AN_WI_INPUT_WORKERS)] = wk;
    m->replay.wall_ns[an_world_of(1u << AN_WI_INPUT_WORKERS | 1u << AN_WI_LEAST)] = wk;
}

/* The loop above, its thread on a CPU 0.9 of the time outside its loads, spinning 0.3 of
 * the loop in waits for the GPU (115.2 ms), and as long in the workers world, whose loop
 * is 0.6 as long. */
static void spinning_loop(struct an_model *m)
{
    loop(m, 0.625 + 0.9 * 0.375, 0.625 + 0.9 * 0.375, 0);
    m->cpu.train_wait = 0.3;
    m->cpu.train_wait_cpu = 1;
    measured_wait(m, 115200000);
    workers_wait(m, 115200000);
    workers_loop(m, 0.6);
}

/* Beside its loads the thread spins 0.3 of the time in waits for the GPU and works 0.0375.
 * Its loads kept the CPU busy (1.0 of each load on a CPU): workers that compute through
 * theirs compete with the spinning thread all along, and it keeps its CPU through its
 * waits, whatever the count: in the workers world's loop, 0.6 as long, 0.5 spinning and
 * 0.0625 working. Two CPUs leave 1.4375 to the loads: two workers replayed, 0.719 of the
 * thread's speed each. (At a runnable thread's fair share, two thirds of a CPU beside two
 * workers, they were 0.802 each, and such budgets replayed 1.3-1.9 times what two workers
 * gained on random draws 6, 15 and 25.) */
static void spinning_thread_keeps_its_cpu(void **state)
{
    (void)state;
    struct an_model m = {0};
    struct an_worker_budget b;
    spinning_loop(&m);
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_int_equal(b.workers, 2);
    assert_int_equal(b.replayed, 2);
    assert_true(b.load_cpu > 0.999 && b.load_cpu <= 1);
    assert_true(b.train_need > 0.5620 && b.train_need < 0.5630);
    assert_true(b.loading > 1.4370 && b.loading < 1.4380);
    assert_true(b.speed > 0.7185 && b.speed < 0.7190);
}

/* The same loop, whose replay with workers waits twice as long for the GPU (the loads
 * held it up; without them it waits on the GPU instead): the thread spins through all of
 * the workers world's loop then, and keeps a whole CPU. One CPU is left to the loads: one
 * worker, at the thread's speed; not the two at 0.719 that the waits as measured gave. The
 * waits are a share of the world's own loop: as long in a loop as long as measured, they
 * are 0.6 of it, and two workers load at 0.681. */
static void waits_the_workers_world_makes_are_spun_too(void **state)
{
    (void)state;
    struct an_model m = {0};
    struct an_worker_budget b;
    spinning_loop(&m);
    workers_wait(&m, 230400000);
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_int_equal(b.workers, 1);
    assert_int_equal(b.replayed, 1);
    assert_true(b.train_need > 0.999);
    assert_true(b.speed > 0.999);
    workers_loop(&m, 1);
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_int_equal(b.replayed, 2);
    assert_true(b.train_need > 0.6370 && b.train_need < 0.6380);
    assert_true(b.speed > 0.6810 && b.speed < 0.6815);
    /* waits as measured in both, the loop 0.6 as long: the budget above */
    workers_wait(&m, 115200000);
    workers_loop(&m, 0.6);
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_int_equal(b.replayed, 2);
    assert_true(b.speed > 0.7185 && b.speed < 0.7190);
}

/* Host-only, the workers world takes the work a read every few steps waited for as busy
 * through the loads between (twice the waits), the world at its least as busy from the
 * last batch's calls on (the waits as measured): the budget spends only the waits the
 * trace proves, two workers at 0.719 as above, not one (random draw 182: two gained
 * 221 ms where one was replayed to give 43). */
static void host_only_budget_spends_the_waits_proven(void **state)
{
    (void)state;
    struct an_model m = {0};
    struct an_worker_budget b;
    spinning_loop(&m);
    m.replay.loader_wait_ns[an_world_of(1u << AN_WI_INPUT_WORKERS)] = 230400000;
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_int_equal(b.replayed, 2);
    assert_true(b.speed > 0.7185 && b.speed < 0.7190);
}

/* The budget at the loading the passes agree on (an_worker_loading_next): the workers
 * and their speed that loading makes, the thread's need what the CPUs leave it. */
static void budget_at_a_loading(void **state)
{
    (void)state;
    struct an_model m = {0};
    struct an_worker_budget b;
    spinning_loop(&m);
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    an_worker_budget_at(&b, 2, 1.2);
    assert_int_equal(b.workers, 2);
    assert_int_equal(b.replayed, 2);
    assert_true(b.speed > 0.5999 && b.speed < 0.6001);
    assert_true(b.train_need > 0.7999 && b.train_need < 0.8001);
    an_worker_budget_at(&b, 2, 0.9);
    assert_int_equal(b.workers, 1);
    assert_true(b.speed > 0.8999 && b.speed < 0.9001);
    assert_true(b.train_need > 0.9999);
}

/* The passes' loadings: the latest budget's while every pass lies on one side of where the
 * budget and the waits agree, else where the line through the nearest pass on each side
 * meets x = y (random draw 207's passes: 1.0 -> 1.866, 1.866 -> 1.202, then 1.490). */
static void passes_meet_where_budget_and_waits_agree(void **state)
{
    (void)state;
    double x[4] = {1.0, 1.866, 1.490, 1.559}, y[4] = {1.866, 1.202, 1.640, 1.583};
    assert_true(an_worker_loading_next(x, y, 1) > 1.8659 &&
                an_worker_loading_next(x, y, 1) < 1.8661);
    double next = an_worker_loading_next(x, y, 2);  /* 1.0 + 0.866 * 0.866 / 1.53 */
    assert_true(next > 1.4900 && next < 1.4904);
    next = an_worker_loading_next(x, y, 3);  /* 1.49 (-0.15) and 1.866 (0.664) */
    assert_true(next > 1.5591 && next < 1.5595);
    next = an_worker_loading_next(x, y, 4);  /* 1.559 (-0.024) and 1.866 */
    assert_true(next > 1.5695 && next < 1.5700);
    double same_side_x[2] = {1.0, 1.5}, same_side_y[2] = {1.8, 1.7};
    assert_true(an_worker_loading_next(same_side_x, same_side_y, 2) > 1.6999 &&
                an_worker_loading_next(same_side_x, same_side_y, 2) < 1.7001);
}

/* Another process holding 1.2 CPUs (all it can keep of a 2-CPU machine's fair half: 1.0,
 * once the workers compete) and an autograd thread 0.3, the workers world's loop as long
 * as measured: the thread's 0.0375 of work, 0.6625 CPUs for the loads, one worker at
 * 0.6625. On 16 CPUs the other keeps its 1.2: 14.4625 left, 15 workers at 0.964. Threads
 * that make no CUDA call (an intra-op pool working for the loads) take nothing. */
static void others_take_their_share(void **state)
{
    (void)state;
    struct an_model m = {0};
    struct an_worker_budget b;
    double train = 0.625 + 0.1 * 0.375;
    loop(&m, train, train + 0.3 + 4.0, 1.2);
    m.cpu.traced_others_cpus = 0.3;
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_int_equal(b.replayed, 1);
    assert_true(b.process_others > 0.299 && b.process_others < 0.301);
    assert_true(b.others > 1.199 && b.others < 1.201);
    assert_true(b.others_keep > 0.999 && b.others_keep < 1.001);
    assert_true(b.train_need > 0.0374 && b.train_need < 0.0376);
    assert_true(b.speed > 0.6620 && b.speed < 0.6630);
    assert_int_equal(an_worker_budget(&m, 16, &b), 1);
    assert_int_equal(b.workers, 15);
    assert_int_equal(b.replayed, 15);
    assert_true(b.others_keep > 1.199 && b.others_keep < 1.201);
    assert_true(b.train_need > 0.0374 && b.train_need < 0.0376);
    assert_true(b.speed > 0.9641 && b.speed < 0.9643);
}

/* A thread that sleeps through its loads (0.625 of the loop) and is on a CPU 0.47 of the
 * time, 0.45 of it spinning in its waits or copying from pageable memory, beside a CPU hog
 * in another session: its loads took 0.02 / 0.625 of a CPU, they wait on storage, and the
 * hog is no loader of its own: the 4 workers users start on 2 CPUs, at full speed. */
static void sleeping_loads_beside_a_hog(void **state)
{
    (void)state;
    struct an_model m = {0};
    struct an_worker_budget b;
    loop(&m, 0.47, 0.47, 1.0);
    m.cpu.train_wait = 0.5;
    m.cpu.train_wait_cpu = 0.9;
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_true(b.load_cpu > 0.0319 && b.load_cpu < 0.0321);
    assert_int_equal(b.workers, 4);
    assert_int_equal(b.replayed, 4);
    assert_true(b.speed > 0.999);
}

/* The same thread spending 0.05 of the loop on a CPU outside its waits (0.08 of each
 * load) and spinning 0.35, beside a CPU hog, the workers world's loop 0.7 as long (0.5 of
 * it spinning): spinning it is one of the runnable threads beside the hog's busy CPU and
 * the workers, and workers that sleep through most of their loads take little of its CPU:
 * with two workers half a CPU and 0.08 of the other half, 0.27, 0.73 CPUs left, which
 * loads needing 0.08 fill at full speed with both CPUs' worth of workers. (Counting the
 * spinning thread whole left one worker at 0.84; in a trace whose need came to a whole
 * CPU, none at all.) */
static void light_loads_beside_a_hog(void **state)
{
    (void)state;
    struct an_model m = {0};
    struct an_worker_budget b;
    loop(&m, 0.40, 0.40, 1.0);
    m.cpu.train_wait = 0.35;
    m.cpu.train_wait_cpu = 1;
    measured_wait(&m, 134400000);
    workers_wait(&m, 134400000);
    workers_loop(&m, 0.7);
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_true(b.load_cpu > 0.0799 && b.load_cpu < 0.0801);
    assert_true(b.train_need > 0.2695 && b.train_need < 0.2705);
    assert_int_equal(b.replayed, 2);
    assert_true(b.speed > 0.999);
}

/* Loads that wait on storage use no CPU: every worker at the thread's speed. Without
 * batch loads, or the CPUs, there is no budget. */
static void reads_need_no_cpu_and_no_loads_no_budget(void **state)
{
    (void)state;
    struct an_model m = {0};
    struct an_worker_budget b;
    loop(&m, 0.02, 0.02, -1);
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_int_equal(b.replayed, 4);
    assert_true(b.speed > 0.999);
    assert_int_equal(an_worker_budget(&m, 0, &b), 0);
    m.replay.loads = 0;
    assert_int_equal(an_worker_budget(&m, 2, &b), 0);
}

/* Without CPU samples the thread is taken as on a CPU throughout, its loads computing and
 * its waits spinning: the loop's 0.375 beside its loads it needs whole, 0.625 of the
 * workers world's loop, 0.6 as long; 1.375 CPUs left, two workers at 0.6875 each. It
 * waited 0.3 of the loop for the GPU, as long with the workers: the same need, spun. (The
 * fallback before it, cpus - 1 workers at full speed, named one.) */
static void no_samples_the_thread_on_a_cpu_throughout(void **state)
{
    (void)state;
    struct an_model m = {0};
    struct an_worker_budget b;
    loop(&m, 0.02, 0.02, -1);
    m.cpu.known = 0;
    workers_loop(&m, 0.6);
    for (int waited = 0; waited < 2; waited++) {
        measured_wait(&m, waited ? 115200000 : 0);
        workers_wait(&m, waited ? 115200000 : 0);
        assert_int_equal(an_worker_budget(&m, 2, &b), 1);
        assert_true(b.load_cpu > 0.999);
        assert_true(b.train_need > 0.6245 && b.train_need < 0.6255);
        assert_int_equal(b.workers, 2);
        assert_int_equal(b.replayed, 2);
        assert_true(b.speed > 0.6870 && b.speed < 0.6880);
    }
}

/* The thread waits off the CPU while the process's own loader threads keep 1.9 of the 2
 * CPUs busy (issue 36 A2): no count helps, the CPUs are the loading's already. */
static void own_loaders_fill_the_cpus(void **state)
{
    (void)state;
    struct an_model m = {0};
    struct an_worker_budget b;
    loop(&m, 0.02, 0.02 + 1.9, 0);
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_int_equal(b.workers, 0);
    assert_int_equal(b.replayed, 1);
    assert_true(b.speed < 0.03);
    m.cpu.process_cpus = 0.02 + 0.5;  /* half a CPU: storage, and 4 workers help */
    assert_int_equal(an_worker_budget(&m, 2, &b), 1);
    assert_int_equal(b.workers, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spinning_thread_keeps_its_cpu),
        cmocka_unit_test(waits_the_workers_world_makes_are_spun_too),
        cmocka_unit_test(host_only_budget_spends_the_waits_proven),
        cmocka_unit_test(budget_at_a_loading),
        cmocka_unit_test(passes_meet_where_budget_and_waits_agree),
        cmocka_unit_test(others_take_their_share),
        cmocka_unit_test(sleeping_loads_beside_a_hog),
        cmocka_unit_test(light_loads_beside_a_hog),
        cmocka_unit_test(reads_need_no_cpu_and_no_loads_no_budget),
        cmocka_unit_test(no_samples_the_thread_on_a_cpu_throughout),
        cmocka_unit_test(own_loaders_fill_the_cpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
