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

/* s's events (host calls and GPU records) replayed in the order of their ends, the trace
 * starting at t0, its wall measured_ns. */
static void replay_events(struct synth *s, uint64_t t0, uint64_t measured_ns,
                          struct an_replay *out)
{
    qsort(s->ev, s->n, sizeof *s->ev, by_end);
    struct an_thresholds th = AN_THRESHOLDS_DEFAULT;
    struct an_replay_state st;
    an_replay_init(&st, &th, 1, 4);
    for (size_t i = 0; i < s->n; i++) {
        if (an_is_gpu(&s->ev[i]))
            an_replay_gpu(&st, &s->ev[i]);
        else
            an_replay_host(&st, &s->ev[i]);
    }
    an_replay_finish(&st, t0, measured_ns, out);
    an_replay_free(&st);
}

static void kernel_record(struct synth *s, uint64_t ts, uint64_t end, uint64_t corr)
{
    struct an_ev k = {.kind = AN_GPU_KERNEL, .stream = 1, .ts = ts, .end = end, .ptr = corr};
    synth_push(s, &k);
}

/* An event sync waits for the operation its event was recorded after, not for the stream's
 * latest (replay.c, want_done): kernel A (50-1050 us), the event recorded, kernel B
 * (1050-1550 us); the sync returns when A ends, the host then works until 2035 us. The
 * replay gives the run back, and with cuda_graphs A runs without its 50 us of latency, the
 * sync returning that much sooner. Once with A's record met before the event's record call
 * is replayed (recorded at 60 us: A's end kept then), once after (at 10 us: kept when A
 * ends, B having run by the time the sync is replayed). Had the sync waited for B, the
 * host's last 1 ms would have moved by 500 us; for nothing kept, it would be taken as the
 * sync's own time, which no world shortens. */
static void event_sync_waits_for_its_own_operation(void **state)
{
    (void)state;
    const uint64_t t0 = 1 * MS;
    for (int a_first = 0; a_first <= 1; a_first++) {
        struct synth s = {.now = t0};
        struct an_ev *a = synth_call(&s, AN_LAUNCH, GW_API_cuLaunchKernel, 5 * US, AN_F_KERNEL);
        a->key = 1;
        s.now = t0 + (a_first ? 60 : 10) * US;
        struct an_ev *rec = synth_call(&s, AN_CALL, GW_API_cuEventRecord, 1 * US, 0);
        rec->key = 0xE1;
        s.now = t0 + 65 * US;
        struct an_ev *b = synth_call(&s, AN_LAUNCH, GW_API_cuLaunchKernel, 5 * US, AN_F_KERNEL);
        b->key = 2;
        s.now = t0 + 70 * US;
        struct an_ev *sync = synth_call(&s, AN_SYNC, GW_API_cuEventSynchronize, 980 * US,
                                        AN_F_DRAINS);
        sync->key = 0xE1;
        s.now = t0 + 2030 * US;
        synth_call(&s, AN_LAUNCH, GW_API_cuLaunchKernel, 5 * US, AN_F_KERNEL)->key = 3;
        kernel_record(&s, t0 + 50 * US, t0 + 1050 * US, 1);
        kernel_record(&s, t0 + 1050 * US, t0 + 1550 * US, 2);
        kernel_record(&s, t0 + 2040 * US, t0 + 2041 * US, 3);
        struct an_replay out;
        replay_events(&s, t0, 2041 * US, &out);
        synth_free(&s);
        assert_int_equal(out.ops_matched, 3);
        assert_int_equal(out.wall_ns[an_world_of(0)], 2041 * US);
        assert_int_equal(an_replay_saving(&out, AN_WI_GRAPHS), 60 * US);
        for (int w = 1; w < AN_CHANGES + 1; w++)  /* (no other change touches the run) */
            if (w != AN_WI_GRAPHS)
                assert_int_equal(an_replay_saving(&out, (enum an_whatif)w), 0);
    }
}

/* A graph's records share its call's correlation id: a later one meets the call the first
 * met, which the replay keeps in the queue slot it left (replay.c, cur_op) until a new
 * operation takes that slot. Here 16 kernel launches fill the stream's queue of 16 before
 * the graph's second node (200-1000 us) is seen, the last of them in that very slot: the
 * node still runs where the graph's call put it, in every world. cuda_graphs gains only the
 * launches' 1 us gaps on the GPU (15 us); were the node taken for the last launch's kernel
 * (a graph runs it back to back: from 40 us), 175 us. */
static void graph_record_after_its_slot_is_taken(void **state)
{
    (void)state;
    const uint64_t t0 = 1 * MS;  /* (the trace clock's start: 0 is none) */
    struct synth s = {.now = t0};
    synth_call(&s, AN_LAUNCH, GW_API_cuGraphLaunch, 10 * US, 0);
    s.now = t0 + 40 * US;
    for (int i = 0; i < 16; i++) {
        struct an_ev *l = synth_call(&s, AN_LAUNCH, GW_API_cuLaunchKernel, 5 * US, AN_F_KERNEL);
        l->key = 1;
        s.now += 5 * US;
    }
    s.now = t0 + 200 * US;
    synth_call(&s, AN_SYNC, GW_API_cuStreamSynchronize, 840 * US, AN_F_DRAINS);
    struct an_ev rec = {.kind = AN_GPU_KERNEL, .stream = 1, .flags = AN_F_GRAPH_NODE, .ptr = 7};
    rec.ts = t0 + 20 * US, rec.end = t0 + 30 * US;
    synth_push(&s, &rec);
    rec.ts = t0 + 200 * US, rec.end = t0 + 1000 * US;
    synth_push(&s, &rec);
    for (uint64_t i = 0; i < 16; i++)
        kernel_record(&s, t0 + (1000 + 2 * i) * US, t0 + (1001 + 2 * i) * US, 100 + i);
    struct an_replay out;
    replay_events(&s, t0, 1040 * US, &out);
    synth_free(&s);
    assert_int_equal(out.ops_matched, 18);
    assert_int_equal(out.wall_ns[an_world_of(0)], 1040 * US);
    assert_int_equal(an_replay_saving(&out, AN_WI_GRAPHS), 15 * US);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_only_runs),
        cmocka_unit_test(gpu_record_runs),
        cmocka_unit_test(graph_record_after_its_slot_is_taken),
        cmocka_unit_test(event_sync_waits_for_its_own_operation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
