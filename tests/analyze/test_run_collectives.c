/* The ranks' collectives lined up (run_collectives.c, comm_samples.c): waits, arrivals,
 * skew, the straggler's gain and the hosts' clock offsets, on ranks whose collectives are
 * written here with known starts and ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analyze.h"
#include "comm_samples.h"
#include "rules.h"

#define US 1000ull
#define MS 1000000ull

struct world {
    struct an_run run;
    struct an_trace traces[4];
};

/* Rank r on host `host` whose clock reads `clock_error` ahead of the first host's. */
static void add_rank(struct world *w, int32_t rank, const char *host, int64_t clock_error)
{
    struct an_trace *t = &w->traces[w->run.ntraces++];
    memset(t, 0, sizeof *t);
    t->active = 1;
    t->hdr.rank = rank;
    t->hdr.pid = 100 + (uint32_t)rank;
    strncpy(t->hdr.hostname, host, sizeof t->hdr.hostname - 1);
    t->hdr.realtime_minus_trace_ns = clock_error;
    t->model = calloc(1, sizeof *t->model);
    assert_non_null(t->model);
    t->model->gpu_timeline = 1;
    w->run.traces = w->traces;
}

/* The k-th collective of a rank: it ends at `end` on the common clock and lasted dur. */
static void collective(struct world *w, size_t i, uint64_t end, uint64_t dur)
{
    assert_int_equal(an_comm_sample_add(&w->traces[i].model->comm_samples, end - dur, end), 0);
}

static void world_free(struct world *w)
{
    for (size_t i = 0; i < w->run.ntraces; i++)
        an_model_free(w->traces[i].model);
}

/* Three ranks, two hosts: rank 2 (host b, its clock 5 ms ahead) arrives 1 ms after the
 * others at each of 100 collectives; its ends read 100 ns late for the first 50. */
static void straggler_on_another_host(void **state)
{
    (void)state;
    struct world w = {0};
    add_rank(&w, 0, "a", 0);
    add_rank(&w, 1, "a", 0);
    add_rank(&w, 2, "b", 5 * (int64_t)MS);
    for (uint64_t k = 0; k < 100; k++) {
        uint64_t end = 10 * MS + k * 4 * MS;
        collective(&w, 0, end, 1500 * US);
        collective(&w, 1, end, 1500 * US);
        /* (trace clock: its realtime offset corrects the 5 ms, to within the jitter) */
        uint64_t jitter = k < 50 ? 100 : 0;
        collective(&w, 2, end + jitter, 500 * US + jitter);
    }
    an_run_collectives(&w.run);
    const struct an_run_comm *c = &w.run.comm;
    assert_int_equal(c->ranks, 3);
    assert_int_equal(c->collectives, 100);
    assert_int_equal(c->joined, 100);
    assert_int_equal(c->straggler, 2);
    /* were it to arrive with the others: 1 ms sooner, less the jitter, 100 times */
    assert_int_equal(c->straggler_gain_ns, 100 * MS - 50 * 100);
    assert_int_equal(w.traces[0].comm_wait_ns, 100 * MS - 50 * 100);
    assert_int_equal(w.traces[1].comm_wait_ns, 100 * MS - 50 * 100);
    assert_int_equal(w.traces[2].comm_wait_ns, 0);
    assert_int_equal(w.traces[0].comm_last, 0);
    assert_int_equal(w.traces[2].comm_last, 100);
    assert_int_equal(c->skew_median_ns, 1 * MS);  /* k < 50: 1 ms - 100 ns, then 1 ms */
    assert_int_equal(c->skew_max_ns, 1 * MS);
    /* the hosts: b's clock 5 ms ahead (the median of its ends against rank 0's: the upper
     * of the two middle ones, 100 ns late) */
    assert_int_equal(c->hosts, 2);
    assert_int_equal(w.traces[0].clock_offset_ns, 0);
    assert_int_equal(w.traces[1].clock_offset_ns, 0);
    assert_int_equal(w.traces[2].clock_offset_ns, 5 * (int64_t)MS + 100);
    assert_int_equal(c->residual_ns, 100);
    world_free(&w);
}

/* More collectives than are kept: every rank keeps the same ones, and the sums scale to
 * all of them. */
static void decimated_alike(void **state)
{
    (void)state;
    struct world w = {0};
    add_rank(&w, 0, "a", 0);
    add_rank(&w, 1, "a", 0);
    uint64_t n = 3 * AN_COMM_SAMPLES + 5;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t end = MS + k * MS;
        collective(&w, 0, end, 300 * US);
        collective(&w, 1, end, 100 * US);  /* rank 1 is 200 us late each time */
    }
    const struct an_comm_samples *s = &w.traces[0].model->comm_samples;
    assert_int_equal(s->count, n);
    assert_int_equal(s->stride, 4);
    assert_int_equal(s->n, (n + 3) / 4);
    assert_non_null(an_comm_sample_find(s, 8));
    assert_null(an_comm_sample_find(s, 6));
    an_run_collectives(&w.run);
    assert_int_equal(w.run.comm.joined, (n + 3) / 4);
    assert_int_equal(w.run.comm.straggler, 1);
    assert_int_equal(w.traces[0].comm_wait_ns, n * 200 * US);
    assert_int_equal(w.run.comm.straggler_gain_ns, n * 200 * US);
    assert_int_equal(w.traces[1].comm_last, n);
    world_free(&w);
}

/* Ranks that are not lined up: one process alone, one with no rank, one host-only. */
static void nothing_to_line_up(void **state)
{
    (void)state;
    struct world w = {0};
    add_rank(&w, 0, "a", 0);
    add_rank(&w, -1, "a", 0);
    add_rank(&w, 2, "a", 0);
    w.traces[2].model->gpu_timeline = 0;
    for (size_t i = 0; i < 3; i++)
        collective(&w, i, 2 * MS, MS);
    an_run_collectives(&w.run);
    assert_int_equal(w.run.comm.ranks, 0);
    assert_int_equal(w.traces[0].comm_wait_ns, 0);
    assert_false(an_run_lined_up(&w.traces[1]));
    assert_false(an_run_lined_up(&w.traces[2]));
    assert_true(an_run_lined_up(&w.traces[0]));
    world_free(&w);
}

/* A rank that lost its last two collectives' records (within the slack): only those all
 * kept are compared, and the sums scaled to the first rank's count. */
static void lost_records(void **state)
{
    (void)state;
    struct world w = {0};
    add_rank(&w, 0, "a", 0);
    add_rank(&w, 1, "a", 0);
    for (uint64_t k = 0; k < 10; k++) {
        collective(&w, 0, MS + k * MS, 400 * US);
        if (k < 8)
            collective(&w, 1, MS + k * MS, 100 * US);
    }
    an_run_collectives(&w.run);
    assert_int_equal(w.run.comm.ranks, 2);
    assert_int_equal(w.run.comm.collectives, 10);
    assert_int_equal(w.run.comm.joined, 8);
    /* 8 compared, 300 us each, scaled to the first rank's 10 */
    assert_int_equal(w.traces[0].comm_wait_ns, 10 * 300 * US);
    world_free(&w);
}

/* Ranks whose counts differ past the slack (3 of 300 here, 1 %, or 2) run different
 * collectives (groups of their own): nothing is lined up, the counts are said. */
static void counts_that_differ(void **state)
{
    (void)state;
    for (int extra = 3; extra <= 4; extra++) {
        struct world w = {0};
        add_rank(&w, 0, "a", 0);
        add_rank(&w, 1, "a", 0);
        for (uint64_t k = 0; k < 300 + (uint64_t)extra; k++) {
            collective(&w, 0, MS + k * MS, 400 * US);
            if (k < 300)
                collective(&w, 1, MS + k * MS, 100 * US);
        }
        an_run_collectives(&w.run);
        const struct an_run_comm *c = &w.run.comm;
        assert_int_equal(c->candidates, 2);
        assert_int_equal(c->count_min, 300);
        assert_int_equal(c->count_max, 300 + extra);
        /* slack: 1 % of 303 is 3 (one sequence); of 304, 3 too: 4 is past it */
        assert_int_equal(c->ranks, extra == 3 ? 2 : 0);
        assert_int_equal(w.traces[0].comm_wait_ns, extra == 3 ? 303 * 300 * US : 0);
        world_free(&w);
    }
}

/* The processes start apart: the first collective waits for the last one to be up (10 ms
 * here), which says nothing of any rank's pace. The steady state's figures leave it out;
 * the whole run's wait keeps it. */
static void startup_apart(void **state)
{
    (void)state;
    struct world w = {0};
    add_rank(&w, 0, "a", 0);
    add_rank(&w, 1, "a", 0);
    for (size_t i = 0; i < 2; i++) {
        w.traces[i].model->steps.steady = 9;
        w.traces[i].model->steady_start = 20 * MS + 500 * US;  /* after the first collective */
    }
    for (uint64_t k = 0; k < 10; k++) {
        uint64_t end = 20 * MS + k * MS;
        collective(&w, 0, end, k ? 300 * US : 10 * MS);  /* rank 0 waited at the first */
        collective(&w, 1, end, 100 * US);
    }
    an_run_collectives(&w.run);
    const struct an_run_comm *c = &w.run.comm;
    assert_int_equal(c->collectives, 10);
    assert_int_equal(c->steady_collectives, 9);
    assert_int_equal(c->joined, 9);
    assert_int_equal(w.traces[0].comm_wait_ns, 9900 * US + 9 * 200 * US);
    assert_int_equal(w.traces[0].comm_wait_steady_ns, 9 * 200 * US);
    assert_int_equal(w.traces[1].comm_last, 9);
    assert_int_equal(c->skew_max_ns, 200 * US);
    assert_int_equal(c->straggler_gain_ns, 9 * 200 * US);
    world_free(&w);
}

/* A collective whose record has no length on the last rank to arrive (a record of 0 ns):
 * that rank arrived last, and the other waited the whole of its own. */
static void zero_length_record(void **state)
{
    (void)state;
    struct world w = {0};
    add_rank(&w, 0, "a", 0);
    add_rank(&w, 1, "a", 0);
    for (uint64_t k = 0; k < 4; k++) {
        collective(&w, 0, MS + k * MS, 300 * US);
        collective(&w, 1, MS + k * MS, 0);
    }
    an_run_collectives(&w.run);
    assert_int_equal(w.traces[1].comm_last, 4);
    assert_int_equal(w.traces[0].comm_wait_ns, 4 * 300 * US);
    assert_int_equal(w.traces[1].comm_wait_ns, 0);
    world_free(&w);
}

/* The residual: what is left of the ends' differences once the clocks are aligned, at the
 * 90th percentile: two collectives of ten whose ends rank 1 read 1 us late. */
static void residual_of_two_late_ends(void **state)
{
    (void)state;
    struct world w = {0};
    add_rank(&w, 0, "a", 0);
    add_rank(&w, 1, "b", 0);
    for (uint64_t k = 0; k < 10; k++) {
        uint64_t late = k < 2 ? 1000 : 0;
        collective(&w, 0, MS + k * MS, 200 * US);
        collective(&w, 1, MS + k * MS + late, 200 * US + late);
    }
    an_run_collectives(&w.run);
    assert_int_equal(w.run.comm.hosts, 2);
    assert_int_equal(w.traces[1].clock_offset_ns, 0);  /* the median: on time */
    assert_int_equal(w.run.comm.residual_ns, 1000);    /* 20 values: the 19th is 1 us */
    assert_int_equal(w.run.comm.skew_max_ns, 1000);
    assert_int_equal(w.run.comm.skew_median_ns, 0);
    world_free(&w);
}

/* Four alike ranks; rank 3 arrives 10 ms late at `late` of 40 collectives: a straggler is
 * late as a rule (half the collectives or more), not at a few (rule_straggler.c; beside a
 * CPU hog, one of four alike ranks was last at 4 of 39 and was named). */
static size_t stragglers_when_late_at(unsigned late)
{
    struct world w = {0};
    for (int32_t r = 0; r < 4; r++) {
        add_rank(&w, r, "a", 0);
        w.traces[r].model->wall_ns = 1000 * MS;
        w.traces[r].model->comm_exposed_ns = 1000 * MS;
    }
    /* the collectives end together; a rank's kernel lasts from its arrival: rank 3 late
     * at every (40 / late)-th, else rank 0 the last of them by 100 us */
    for (uint64_t k = 0; k < 40; k++) {
        uint64_t end = 10 * MS + k * 25 * MS;
        int slow = k % (40 / late) == 40 / late / 2;
        for (size_t r = 0; r < 4; r++) {
            uint64_t dur = slow ? (r == 3 ? 1 * MS : 11 * MS) : (r == 0 ? 2 * MS : 2100 * US);
            collective(&w, r, end, dur);
        }
    }
    an_run_collectives(&w.run);
    assert_int_equal(w.run.comm.straggler, 3);
    assert_int_equal(w.traces[3].comm_last, late);
    an_rule_straggler(&w.run);
    size_t found = w.run.findings.count;
    an_findings_free(&w.run.findings);
    world_free(&w);
    return found;
}

static void straggler_is_late_as_a_rule(void **state)
{
    (void)state;
    assert_int_equal(stragglers_when_late_at(4), 0);
    assert_int_equal(stragglers_when_late_at(20), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(straggler_is_late_as_a_rule),
        cmocka_unit_test(straggler_on_another_host),
        cmocka_unit_test(decimated_alike),
        cmocka_unit_test(nothing_to_line_up),
        cmocka_unit_test(lost_records),
        cmocka_unit_test(counts_that_differ),
        cmocka_unit_test(startup_apart),
        cmocka_unit_test(zero_length_record),
        cmocka_unit_test(residual_of_two_late_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
