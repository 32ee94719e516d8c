/*
 * Overlapping advice (issue 17): the top change is made first and the others are replayed
 * on the changed run. A step of 3 ms batch loading, 2 ms of GPU work waited for by
 * loss.item(), then 1 ms of logging: 6 ms a step. Workers hide the loading (3 ms saved a
 * step); taking the sync out lets the logging and the loading overlap the GPU (2 ms saved);
 * with the workers in place the sync costs only the logging's overlap (1 ms).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "rules.h"
#include "synth.h"

#define STEPS 30

static void near(double got, double want, double tolerance)
{
    if (got < want * (1 - tolerance) || got > want * (1 + tolerance))
        fail_msg("%.0f is not within %.0f%% of %.0f", got, tolerance * 100, want);
}

/* The step by hand: the logging ends with a call (a CUDA query), so that it and the next
 * batch's loading are two stretches, not one. */
static void step_loop(struct synth *s)
{
    s->now = 1000 * MS;
    synth_alloc(s, 64ull << 20, 0);
    for (int i = 0; i < STEPS; i++) {
        synth_idle(s, 3 * MS);  /* next(loader) */
        synth_h2d(s, 1u << 20, 20 * US, 0);
        for (int k = 0; k < 4; k++)
            synth_launch(s, 5 * US, 500 * US);
        synth_item(s);
        synth_idle(s, 800 * US);  /* print(f"loss {loss:.4f}"): under input_gap_ns */
        synth_call(s, AN_CALL, GW_API_cuDeviceGetName, 1 * US, 0);
    }
    synth_stream_sync(s);
}

static void input_then_sync(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct synth s = {.gpu_records = gpu, .cpus = 8};
        step_loop(&s);
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        near((double)an_replay_saving(&m->replay, AN_WI_INPUT_WORKERS), STEPS * 3.0 * MS, 0.1);
        near((double)an_replay_saving(&m->replay, AN_WI_NO_SYNC), STEPS * 2.0 * MS, 0.1);
        near((double)an_replay_saving_after(&m->replay, AN_WI_INPUT_WORKERS, AN_WI_NO_SYNC),
             STEPS * 0.82 * MS, 0.1);
        struct an_findings out = {0};
        struct an_rule_ctx ctx = {.cpus = 8, .local_world = 1};
        an_run_rules(m, &ctx, &out);
        an_findings_rank(&out);
        assert_true(out.count >= 2);
        assert_string_equal(out.items[0].id, "input_pipeline");
        assert_string_equal(out.items[0].after_id, "");  /* the top is not re-ranked */
        const struct an_finding *sync = an_findings_find(&out, "sync_bubble");
        assert_non_null(sync);
        assert_string_equal(sync->after_id, "input_pipeline");
        near((double)sync->after_ns, STEPS * 0.82 * MS, 0.1);
        /* workers leave the sync 0.82 ms of its 2: not one wait */
        assert_int_equal(sync->same_wait, 0);
        assert_int_equal(out.items[0].same_wait, 0);
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* A 4 ms loader, 2 ms of GPU work and loss.item() each step, on 2 CPUs (one worker): the
 * worker and taking the sync out each hide the 2 ms of GPU work behind the loading, and
 * each leaves the other nothing. One wait: both findings carry the same same_wait key. */
static void one_wait_two_changes(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct synth s = {.gpu_records = gpu, .cpus = 2};
        s.now = 1000 * MS;
        synth_alloc(&s, 64ull << 20, 0);
        for (int i = 0; i < STEPS; i++) {
            synth_idle(&s, 4 * MS);
            synth_h2d(&s, 1u << 20, 20 * US, 0);
            for (int k = 0; k < 4; k++)
                synth_launch(&s, 5 * US, 500 * US);
            synth_item(&s);
        }
        synth_stream_sync(&s);
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        near((double)an_replay_saving(&m->replay, AN_WI_INPUT_WORKERS), STEPS * 2.0 * MS, 0.1);
        near((double)an_replay_saving(&m->replay, AN_WI_NO_SYNC), STEPS * 2.0 * MS, 0.1);
        struct an_findings out = {0};
        struct an_rule_ctx ctx = {.cpus = 2, .local_world = 1};
        an_run_rules(m, &ctx, &out);
        an_findings_rank(&out);
        const struct an_finding *in = an_findings_find(&out, "input_pipeline");
        const struct an_finding *sync = an_findings_find(&out, "sync_bubble");
        assert_non_null(in);
        assert_non_null(sync);
        assert_true(in->same_wait != 0);
        assert_int_equal(in->same_wait, sync->same_wait);
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* Ties: ids order two savings when the smaller is within 2 % of the larger; within 10 %
 * when they remove one wait. */
static void same_wait_ties_wider(void **state)
{
    (void)state;
    struct { double ratio; uint64_t key; const char *top; } cases[] = {
        {1 / 0.981, 0, "input_pipeline"}, {1 / 0.979, 0, "sync_bubble"},
        {1 / 0.901, 7, "input_pipeline"}, {1 / 0.899, 7, "sync_bubble"},
        {1 / 0.95, 0, "sync_bubble"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct an_findings list = {0};
        struct an_finding *a = an_finding_add(&list, "input_pipeline");
        a->saving_ns = 100000000;
        a->same_wait = cases[i].key;
        struct an_finding *b = an_finding_add(&list, "sync_bubble");
        b->saving_ns = (uint64_t)(100000000 * cases[i].ratio);
        b->same_wait = cases[i].key;
        an_findings_rank(&list);
        assert_string_equal(list.items[0].id, cases[i].top);
        an_findings_free(&list);
    }
}

/* A saving said "up to" (host-only: kernels of unproven length taken as nil) ranks after a
 * proven one, whatever its bound (it may be anything from nil to it), even within the 2 %
 * tie band whose ids would otherwise order them; two bounds, or two proven savings, rank
 * by saving as before. */
static void proven_before_bounds(void **state)
{
    (void)state;
    struct { uint64_t launch_ns; int launch_bound_only; uint64_t sync_ns; int sync_bound_only;
             const char *top; } cases[] = {
        {12470000, 1, 10170000, 0, "sync_bubble"},     /* the stalled run's ranking */
        {100000000, 1, 1000000, 0, "sync_bubble"},
        {10100000, 1, 10000000, 0, "sync_bubble"},     /* within 2 %, ids put launch first */
        {12470000, 0, 10170000, 0, "launch_bound"},
        {12470000, 1, 10170000, 1, "launch_bound"},
        {8000000, 0, 10170000, 1, "launch_bound"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct an_findings list = {0};
        struct an_finding *a = an_finding_add(&list, "launch_bound");
        a->saving_ns = cases[i].launch_ns;
        a->upper_bound = cases[i].launch_bound_only;
        struct an_finding *b = an_finding_add(&list, "sync_bubble");
        b->saving_ns = cases[i].sync_ns;
        b->upper_bound = cases[i].sync_bound_only;
        an_findings_rank(&list);
        if (strcmp(list.items[0].id, cases[i].top))
            fail_msg("case %zu: %s first, expected %s", i, list.items[0].id, cases[i].top);
        an_findings_free(&list);
    }
}

/* A finding that adds to other changes (changes_together: graphs and a sync out, together
 * 20 ms more) ranks right after the last finding of those changes, whatever it saves;
 * findings of other changes keep their order by saving. */
static void follows_its_changes(void **state)
{
    (void)state;
    struct { const char *id; int whatif; uint64_t ms; } in[] = {
        {"changes_together", 0, 20}, {"input_pipeline", AN_WI_INPUT_WORKERS, 10},
        {"launch_bound", AN_WI_GRAPHS, 8}, {"fragmentation", AN_WI_NO_CHURN, 2},
    };
    const char *out_order[] = {"input_pipeline", "launch_bound", "changes_together",
                               "fragmentation"};
    for (int reversed = 0; reversed < 2; reversed++) {
        struct an_findings list = {0};
        for (size_t k = 0; k < 4; k++) {
            size_t i = reversed ? 3 - k : k;
            struct an_finding *f = an_finding_add(&list, in[i].id);
            f->whatif = in[i].whatif;
            f->saving_ns = in[i].ms * 1000000;
            if (!in[i].whatif)
                f->follows = 1u << AN_WI_NO_SYNC | 1u << AN_WI_GRAPHS;
        }
        an_findings_rank(&list);
        for (size_t i = 0; i < 4; i++)
            assert_string_equal(list.items[i].id, out_order[i]);
        an_findings_free(&list);
    }
    /* with no finding of its changes, by its saving */
    struct an_findings list = {0};
    struct an_finding *f = an_finding_add(&list, "changes_together");
    f->saving_ns = 20000000;
    f->follows = 1u << AN_WI_NO_SYNC | 1u << AN_WI_NO_CHURN;
    f = an_finding_add(&list, "input_pipeline");
    f->whatif = AN_WI_INPUT_WORKERS;
    f->saving_ns = 10000000;
    an_findings_rank(&list);
    assert_string_equal(list.items[0].id, "changes_together");
    an_findings_free(&list);
}

/* The ranks a finding names: ascending, each once, negative ones (no rank) left out. */
static void ranks_ascending_once(void **state)
{
    (void)state;
    struct an_finding f;
    memset(&f, 0, sizeof f);
    const int32_t in[] = {3, 1, 2, 1, -1, 0, 3};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        an_finding_add_rank(&f, in[i]);
    assert_int_equal(f.nranks, 4);
    for (int32_t r = 0; r < 4; r++)
        assert_int_equal(f.ranks[r], r);
}

/* Taking a finding out leaves the others whole and in order. */
static void remove_keeps_the_others(void **state)
{
    (void)state;
    struct an_findings list = {0};
    const char *ids[] = {"input_pipeline", "sync_bubble", "launch_bound", "pageable_h2d"};
    for (size_t i = 0; i < 4; i++)
        an_finding_add(&list, ids[i])->saving_ns = 100 + i;
    an_finding_remove(&list, "sync_bubble");
    assert_int_equal(list.count, 3);
    const size_t left[] = {0, 2, 3};
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(list.items[i].id, ids[left[i]]);
        assert_int_equal(list.items[i].saving_ns, 100 + left[i]);
    }
    an_findings_free(&list);
}

/* Text appended to a finding's field stops at its end, never past it. */
static void appendf_stays_inside(void **state)
{
    (void)state;
    struct { char text[16]; char after[16]; } b;
    memset(&b, 0, sizeof b);
    memset(b.after, 'x', sizeof b.after - 1);
    an_appendf(b.text, sizeof b.text, "%s", "abc");
    an_appendf(b.text, sizeof b.text, "%s", "0123456789abcdefghijklmnopqrstuvwxyz");
    assert_string_equal(b.text, "abc0123456789ab");
    assert_string_equal(b.after, "xxxxxxxxxxxxxxx");
}

/* Risks rank before every time saving, soonest first (struck, dated, undated). */
static void risks_rank_first(void **state)
{
    (void)state;
    struct an_findings list = {0};
    struct { const char *id; int risk; double strikes_s; uint64_t saving_ns; } in[] = {
        {"input_pipeline", 0, -1, 900}, {"shared_gpu", 1, -1, 0}, {"leak", 1, 8.5, 0},
        {"sync_bubble", 0, -1, 50}, {"oom_retry", 1, 0, 0}, {"memory_headroom", 1, 120, 0},
        {"fragmentation", 1, 0.5, 0},  /* dated, under a second: before leak, after struck */
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        struct an_finding *f = an_finding_add(&list, in[i].id);
        assert_non_null(f);
        assert_true(f->strikes_s == -1);  /* undated unless the rule dates it */
        f->risk = in[i].risk;
        f->strikes_s = in[i].strikes_s;
        f->saving_ns = in[i].saving_ns;
    }
    an_findings_rank(&list);
    const char *want[] = {"oom_retry", "fragmentation", "leak", "memory_headroom",
                          "shared_gpu", "input_pipeline", "sync_bubble"};
    for (size_t i = 0; i < list.count; i++)
        assert_string_equal(list.items[i].id, want[i]);
    an_findings_free(&list);
    /* two alone, in either order: under a second to strike still comes before undated */
    for (int order = 0; order < 2; order++) {
        for (int k = 0; k < 2; k++) {
            struct an_finding *r = an_finding_add(&list, k == order ? "leak" : "shared_gpu");
            r->risk = 1;
            r->strikes_s = k == order ? 0.5 : -1;
        }
        an_findings_rank(&list);
        assert_string_equal(list.items[0].id, "leak");
        an_findings_free(&list);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(input_then_sync),
        cmocka_unit_test(one_wait_two_changes),
        cmocka_unit_test(same_wait_ties_wider),
        cmocka_unit_test(proven_before_bounds),
        cmocka_unit_test(follows_its_changes),
        cmocka_unit_test(ranks_ascending_once),
        cmocka_unit_test(remove_keeps_the_others),
        cmocka_unit_test(appendf_stays_inside),
        cmocka_unit_test(risks_rank_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
