/* small_copies around its thresholds: blocking H2D copies under h2d_min_bytes (64 KiB) on
 * average, small_copies_per_step (8) of them a step, H2D-stall idle at min_share (3 %). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

static const struct an_finding *with(unsigned copies, uint64_t bytes, uint64_t copy_ns,
                                     int pageable, int gpu, struct an_findings *out,
                                     struct an_model **m)
{
    struct synth s = {.gpu_records = gpu};
    struct loop L = {.steps = 30, .h2d_bytes = bytes, .h2d_ns = copy_ns,
                     .h2d_pageable = pageable, .h2d_copies = copies, .kernels = 3,
                     .kernel_ns = 1 * MS, .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return synth_rule(*m, an_rule_small_copies, out, 8);
}

static void many_small_copies(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_findings out = {0};
        struct an_model *m;
        /* 16 blocking 4 KiB copies of 50 us a step: 800 us stalled per step */
        const struct an_finding *f = with(16, 4096, 50 * US, 1, gpu, &out, &m);
        assert_non_null(f);
        assert_string_equal(f->id, "small_copies");
        assert_non_null(strstr(f->change, "torch.cat"));
        assert_non_null(strstr(f->change, "non_blocking=True"));
        assert_non_null(strstr(f->evidence, "16.0 per step"));
        /* pinned and async, each copy a third as long and off the host's path */
        assert_true(f->saving_ns > 30 * 500 * US && f->saving_ns < 30 * 560 * US);
        const struct an_figure *per_step = synth_fig(f, "copies_per_step");
        assert_non_null(per_step);
        assert_true(per_step->value == 16.0);
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* 7 copies a step are under small_copies_per_step; 8 are at it. */
static void copies_per_step_around_threshold(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(7, 4096, 100 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
    assert_non_null(with(8, 4096, 100 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* Batch-sized copies (64 KiB and more on average) are pageable_h2d's, not this rule's. */
static void batch_sized_copies(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(16, 64u << 10, 100 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
    assert_non_null(with(16, (64u << 10) - 1, 100 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* Pinned async copies do not block the host: nothing stalls, no finding. */
static void pinned_async_copies(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(16, 4096, 50 * US, 0, 1, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* 16 copies of 3 us in a ~3.1 ms step stall 1.5 % (replayed saving 1 %), under min_share;
 * 12 us, 6 % (saving 4 %), over. */
/* The rule fires exactly when the replayed saving is min_share (thresholds.h) of the
 * replayed run or more: a sweep of copy times that crosses it, both sides seen. */
static void share_around_threshold(void **state)
{
    (void)state;
    int below = 0, above = 0;
    for (uint64_t copy = 1 * US; copy <= 30 * US; copy += 1 * US) {
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = with(16, 4096, copy, 1, 0, &out, &m);
        double share;
        int worth;
        if (!synth_fires_at_min_share(m, f, AN_WI_PINNED_ASYNC, &share, &worth))
            fail_msg("copy %llu ns: saving share %.4f, min_share %.2f, finding %s",
                     (unsigned long long)copy, share, m->th.min_share, f ? "yes" : "no");
        below += !worth;
        above += worth;
        an_findings_free(&out);
        an_model_free(m);
    }
    assert_true(below > 0 && above > 0);
}

/* 500 blocking 4 KiB pageable uploads of 20 us an iteration, then 3 kernels of 1 ms, no
 * sync and no NVTX, 30 iterations: the steps are the iterations (found at a kernel's
 * launch: the uploads come 500 times between two of its launches), not every copy; small_copies fires with 500 copies a step, and its saving is
 * the coalescing world: each copy a microsecond of the host's memcpy into a staging buffer,
 * its bytes back to back on the GPU in a third of the time (no pinned copy to measure by). */
static void thousands_of_small_copies(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct synth s = {.gpu_records = gpu, .now = 1000 * MS};
        synth_alloc(&s, 64ull << 20, 0);
        /* (not synth_loop: it marks each step with an event sync; nothing does here) */
        for (int i = 0; i < 30; i++) {
            for (int c = 0; c < 500; c++)
                synth_h2d(&s, 4096, 20 * US, 1);
            for (int k = 0; k < 3; k++) {
                synth_launch(&s, 5 * US, 1 * MS);
                s.ev[s.n - 1 - (size_t)gpu].key = (uint64_t)k + 1;  /* three kernels */
            }
        }
        synth_stream_sync(&s);
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        /* (before, 14 999 steps of 0.1 ms at every copy) */
        assert_int_equal(m->steps.source, AN_STEPS_AUTO);
        assert_string_equal(m->steps.marker, "launch of one kernel");
        assert_int_equal(m->steps.count, 29);
        assert_true(m->steps.median_ns > 12900 * US && m->steps.median_ns < 13100 * US);
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_small_copies, &out, 8);
        if (!f)
            fail_msg("gpu %d: no finding", gpu);
        const struct an_figure *per_step = synth_fig(f, "copies_per_step");
        assert_non_null(per_step);
        assert_true(per_step->value == 500.0);
        /* 13 ms an iteration as measured (390.172 ms in all); coalesced, 500 x 6.67 us of
         * copies back to back and 3 ms of kernels: 6.67 ms back an iteration */
        assert_int_equal(m->wall_ns, 390172 * US);
        assert_true(f->saving_ns > 200060 * US && f->saving_ns < 200260 * US);
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* 48 blocking 6 KiB copies of 15 us a step (metadata) after a loss.item(), in a 30 ms
 * step: 0.7 ms a step, coalescing gives back under min_share: quiet. */
static void metadata_copies_pass(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct synth s = {.gpu_records = gpu};
        struct loop L = {.steps = 30, .h2d_bytes = 6144, .h2d_ns = 15 * US,
                         .h2d_pageable = 1, .h2d_copies = 48, .kernels = 30,
                         .kernel_ns = 1 * MS, .launch_ns = 5 * US, .item = 1};
        synth_loop(&s, &L);
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        struct an_findings out = {0};
        assert_null(synth_rule(m, an_rule_small_copies, &out, 8));
        /* 0.485 ms back a step of 31 ms: 1.6 % */
        uint64_t saving = an_replay_saving(&m->replay, AN_WI_PINNED_ASYNC);
        assert_true(saving > 14450 * US && saving < 14650 * US);
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* Each of 64 samples of 16 KiB uploaded on its own (30 us on the GPU, blocking: pageable)
 * before its own 2 us kernel, then a 1 ms kernel and loss.item(), 30 steps, the host's
 * memcpy rate measured at `bps`: the pinned_async world's saving. */
static uint64_t per_sample_saving(int gpu, uint64_t bps)
{
    struct synth s = {.gpu_records = gpu, .now = 1000 * MS};
    synth_alloc(&s, 64ull << 20, 0);
    for (int i = 0; i < 30; i++) {
        for (int c = 0; c < 64; c++) {
            synth_h2d(&s, 16384, 30 * US, 1);
            synth_launch(&s, 1 * US, 2 * US);
        }
        synth_launch(&s, 1 * US, 1 * MS);
        synth_item(&s);
    }
    struct gw_file_header h;
    memset(&h, 0, sizeof h);
    h.device_total_mem = h.device_free_at_start = 1ull << 30;
    h.cupti_status = gpu ? GW_CUPTI_ACTIVE : GW_CUPTI_DISABLED;
    struct an_model *m = an_model_new(NULL, &h);
    assert_non_null(m);
    an_model_set_host_copy(m, bps, 0);
    an_model_feed_all(m, s.ev, s.n);
    synth_free(&s);
    uint64_t saving = an_replay_saving(&m->replay, AN_WI_PINNED_ASYNC);
    an_model_free(m);
    return saving;
}

/* Coalesced, a step's samples are gathered on the host before the one copy (the fix users
 * write: collate into a pinned buffer, copy once), so the kernels wait for the memcpy of
 * them all: from the second step on (the first has no step before it to size the batch
 * by, and gathers each sample alone), the step's 1 MiB memcpy at the measured rate is on
 * the step's path. At 10.49 GB/s it takes 100 us, at half that 200: 29 steps x 100 us
 * less saved. Copied one by one beside the kernels before them (before, at any rate), the
 * memcpy hid behind the GPU's 12 us a sample and the rate changed nothing. */
static void gathered_first_at_the_hosts_rate(void **state)
{
    (void)state;
    const uint64_t bps = (1ull << 20) * 10000;  /* 1 MiB in 100 us */
    for (int gpu = 0; gpu < 2; gpu++) {
        uint64_t fast = per_sample_saving(gpu, bps), slow = per_sample_saving(gpu, bps / 2);
        if (fast - slow < 2890 * US || fast - slow > 2910 * US)
            fail_msg("gpu %d: saving %.3f ms at the rate, %.3f at half of it", gpu,
                     (double)fast / 1e6, (double)slow / 1e6);
    }
}

/* 200 blocking 4 KiB pageable uploads of 2 us a step, `between` apart, after `before` of
 * building them, then 3 kernels of 1 ms and loss.item(), 30 steps: the pinned_async
 * world's saving. */
static uint64_t spaced_uploads_saving(int gpu, uint64_t before, uint64_t between)
{
    struct synth s = {.gpu_records = gpu, .now = 1000 * MS};
    synth_alloc(&s, 64ull << 20, 0);
    for (int i = 0; i < 30; i++) {
        s.now += before;
        for (int c = 0; c < 200; c++) {
            s.now += c ? between : 0;
            synth_h2d(&s, 4096, 2 * US, 1);
        }
        for (int k = 0; k < 3; k++)
            synth_launch(&s, 5 * US, 1 * MS);
        synth_item(&s);
    }
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    uint64_t saving = an_replay_saving(&m->replay, AN_WI_PINNED_ASYNC);
    an_model_free(m);
    return saving;
}

/* Gathered into one buffer, the uploads leave the host work between them too (the loop's
 * .cuda() per tensor): 3 us between each two of 200, 199 x 3 us a step, 30 steps, back
 * beyond what the calls give; the 400 us that builds them before the first stays (a
 * stretch gathering does not take: the saving is the same with or without it). */
static void work_between_small_uploads(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        uint64_t packed = spaced_uploads_saving(gpu, 0, 0);
        uint64_t spaced = spaced_uploads_saving(gpu, 0, 3 * US);
        uint64_t built = spaced_uploads_saving(gpu, 400 * US, 3 * US);
        if (spaced - packed < 17900 * US || spaced - packed > 17920 * US)
            fail_msg("gpu %d: %.3f ms saved with 3 us between, %.3f without", gpu,
                     (double)spaced / 1e6, (double)packed / 1e6);
        if (built > spaced + 10 * US || built + 10 * US < spaced)
            fail_msg("gpu %d: %.3f ms saved after 400 us of building, %.3f without", gpu,
                     (double)built / 1e6, (double)spaced / 1e6);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_small_copies),
        cmocka_unit_test(copies_per_step_around_threshold),
        cmocka_unit_test(batch_sized_copies),
        cmocka_unit_test(pinned_async_copies),
        cmocka_unit_test(share_around_threshold),
        cmocka_unit_test(thousands_of_small_copies),
        cmocka_unit_test(metadata_copies_pass),
        cmocka_unit_test(gathered_first_at_the_hosts_rate),
        cmocka_unit_test(work_between_small_uploads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
