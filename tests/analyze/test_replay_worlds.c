/*
 * The replay wakes a world only when an event first touches one of its changes (replay.h,
 * live worlds): until then it is the world without that change, and the copy it starts
 * from must hold every clock the replay keeps per world. Random runs (random_run.h), with
 * and without GPU records, replayed both ways, must give every world's wall time alike;
 * and the lazy way must have left worlds asleep for a while in most of them, or the check
 * checks nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "random_run.h"
#include "replay.h"

#define RUNS 300
#define RUN_BYTES 512

static int by_end(const void *a, const void *b)
{
    const struct an_ev *x = a, *y = b;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The run's events in the order the analysis releases them, near enough: by end; each to
 * both replays. Returns the worlds the lazy one had awake when its first step was done. */
static void replay_both(struct rr *r, struct an_replay *lazy, struct an_replay *all,
                        unsigned *asleep_at_half)
{
    struct an_thresholds th = AN_THRESHOLDS_DEFAULT;
    struct an_replay_state a, b;
    an_replay_init(&a, &th, r->s.gpu_records, 4);
    an_replay_init(&b, &th, r->s.gpu_records, 4);
    an_replay_wake_all(&b);
    qsort(r->s.ev, r->s.n, sizeof *r->s.ev, by_end);
    uint64_t first = r->s.n ? r->s.ev[0].ts : 0, last = 0;
    for (size_t i = 0; i < r->s.n; i++) {
        const struct an_ev *ev = &r->s.ev[i];
        if (i == r->s.n / 2)
            *asleep_at_half = AN_WORLDS - a.nlive;
        if (ev->ts < first)
            first = ev->ts;
        if (ev->end > last)
            last = ev->end;
        if (an_is_gpu(ev)) {
            an_replay_gpu(&a, ev);
            an_replay_gpu(&b, ev);
        } else {
            an_replay_host(&a, ev);
            an_replay_host(&b, ev);
        }
    }
    an_replay_finish(&a, first, last - first, lazy);
    an_replay_finish(&b, first, last - first, all);
    an_replay_free(&a);
    an_replay_free(&b);
}

static void check_mode(int gpu_records)
{
    unsigned failures = 0, slept = 0, woke = 0;
    for (uint64_t seed = 1; seed <= RUNS; seed++) {
        uint8_t bytes[RUN_BYTES];
        rr_seed_bytes(seed, 7, bytes, sizeof bytes);
        struct rr_bytes in = {bytes, sizeof bytes, 0};
        struct rr *r = malloc(sizeof *r);
        assert_non_null(r);
        rr_generate(r, &in, gpu_records);
        struct an_replay lazy, all;
        unsigned asleep = 0;
        replay_both(r, &lazy, &all, &asleep);
        slept += asleep > 0;
        woke += asleep < AN_WORLDS - 1;
        for (int w = 0; w < AN_WORLDS; w++)
            if (lazy.wall_ns[w] != all.wall_ns[w] && failures++ < 5)
                fprintf(stderr, "seed %llu (%s): world %d replayed %llu lazily, %llu awake\n",
                        (unsigned long long)seed, gpu_records ? "GPU records" : "host only",
                        w, (unsigned long long)lazy.wall_ns[w],
                        (unsigned long long)all.wall_ns[w]);
        assert_int_equal(lazy.loads, all.loads);
        assert_int_equal(lazy.pauses, all.pauses);
        synth_free(&r->s);
        free(r);
    }
    fprintf(stderr, "%s: %u runs, %u with worlds asleep half way, %u with some awake\n",
            gpu_records ? "GPU records" : "host only", RUNS, slept, woke);
    assert_int_equal(failures, 0);
    assert_true(slept >= RUNS / 2);
    assert_true(woke >= RUNS / 2);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_only_runs),
        cmocka_unit_test(gpu_record_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
