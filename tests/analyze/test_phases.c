/* The run's phases (model/phases.c): top-level NVTX ranges of the first thread that opens
 * one, summed by name; nested and other threads' ranges apart; idle intervals split over
 * the ranges by overlap, closed and still open; the range open at the end closed there;
 * names past the table counted untold. Exact sums. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "phases.h"

static struct an_ev range(int push, uint32_t tid, uint64_t ts, uint64_t name)
{
    struct an_ev ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = push ? AN_RANGE_PUSH : AN_RANGE_POP;
    ev.tid = tid;
    ev.ts = ev.end = ts;
    ev.bytes = name;
    return ev;
}

static const char *names(void *user, int what, uint64_t id)
{
    (void)user;
    static const char *const table[] = {"", "train", "eval", "checkpoint", "inner"};
    return what == 0 && id < 5 ? table[id] : NULL;
}

static void feed(struct an_phase_state *st, struct an_phases *out, int push, uint32_t tid,
                 uint64_t ts, uint64_t name)
{
    struct an_ev ev = range(push, tid, ts, name);
    an_phases_range(st, out, &ev);
}

static void sums_and_splits(void **state)
{
    (void)state;
    struct an_phase_state st;
    struct an_phases out;
    memset(&out, 0, sizeof out);
    an_phases_init(&st);
    uint64_t idle[AN_CAUSE_COUNT] = {0};
    /* train [100, 200) with a nested range; thread 9's ranges are not phases */
    feed(&st, &out, 1, 1, 100, 1);
    feed(&st, &out, 1, 1, 120, 4);
    feed(&st, &out, 1, 9, 130, 2);
    feed(&st, &out, 0, 1, 150, 0);
    feed(&st, &out, 0, 9, 160, 0);
    feed(&st, &out, 0, 1, 200, 0);
    /* eval [250, 300), train again [300, 400) */
    feed(&st, &out, 1, 1, 250, 2);
    feed(&st, &out, 0, 1, 300, 0);
    feed(&st, &out, 1, 1, 300, 1);
    feed(&st, &out, 0, 1, 400, 0);
    /* checkpoint opens at 500 and is open at the end of what was read */
    feed(&st, &out, 1, 1, 500, 3);
    /* idle [180, 320): 140 ns, 70 input and 70 sync: 20/140 in train's first range,
     * 50/140 in eval, 20/140 in train's second, 50/140 outside */
    idle[AN_CAUSE_INPUT] = 70;
    idle[AN_CAUSE_SYNC] = 70;
    an_phases_idle(&st, &out, 1, 180, 320, idle);
    /* host-only idle [450, 650): 50 ns before checkpoint opened, 150 in it (still open) */
    memset(idle, 0, sizeof idle);
    idle[AN_CAUSE_ALLOC] = 200;
    an_phases_idle(&st, &out, 0, 450, 650, idle);
    /* the range's thread wrote its last event at 800; thread 9 wrote later, and the
     * sampler's CPU sample of thread 1 is later still: neither is the range's own */
    struct an_ev later = {.kind = AN_LAUNCH, .tid = 1, .ts = 800};
    an_phases_thread_event(&st, &later);
    later = (struct an_ev){.kind = AN_LAUNCH, .tid = 9, .ts = 900};
    an_phases_thread_event(&st, &later);
    later = (struct an_ev){.kind = AN_CPU_THREAD, .tid = 1, .ts = 950};
    an_phases_thread_event(&st, &later);
    an_phases_finish(&st, &out, names, NULL);
    assert_int_equal(out.count, 3);
    assert_string_equal(out.phase[0].name, "train");
    assert_string_equal(out.phase[1].name, "eval");
    assert_string_equal(out.phase[2].name, "checkpoint");
    assert_int_equal(out.phase[0].count, 2);
    assert_int_equal(out.phase[0].ns, 200);
    assert_int_equal(out.phase[1].count, 1);
    assert_int_equal(out.phase[1].ns, 50);
    assert_int_equal(out.phase[2].count, 1);
    assert_int_equal(out.phase[2].ns, 300);
    assert_float_equal(out.phase[0].idle_gpu_ns[AN_CAUSE_INPUT], 70.0 * 40 / 140, 1e-9);
    assert_float_equal(out.phase[0].idle_gpu_ns[AN_CAUSE_SYNC], 70.0 * 40 / 140, 1e-9);
    assert_float_equal(out.phase[1].idle_gpu_ns[AN_CAUSE_INPUT], 25, 1e-9);
    assert_float_equal(out.phase[2].idle_gpu_ns[AN_CAUSE_INPUT], 0, 1e-9);
    assert_float_equal(out.phase[2].idle_host_ns[AN_CAUSE_ALLOC], 150, 1e-9);
    assert_float_equal(out.phase[0].idle_host_ns[AN_CAUSE_ALLOC], 0, 1e-9);
    assert_int_equal(out.ranges_untold, 0);
    an_phases_free(&st);
}

static void names_past_the_table(void **state)
{
    (void)state;
    struct an_phase_state st;
    struct an_phases out;
    memset(&out, 0, sizeof out);
    an_phases_init(&st);
    for (uint64_t k = 0; k < AN_KEEP_PHASES + 3; k++) {
        feed(&st, &out, 1, 1, 10 * k, 100 + k);
        feed(&st, &out, 0, 1, 10 * k + 5, 0);
    }
    an_phases_finish(&st, &out, NULL, NULL);
    assert_int_equal(out.count, AN_KEEP_PHASES);
    assert_int_equal(out.ranges_untold, 3);
    assert_int_equal(out.phase[AN_KEEP_PHASES - 1].ns, 5);
    assert_string_equal(out.phase[0].name, "");
    an_phases_free(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sums_and_splits),
        cmocka_unit_test(names_past_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
