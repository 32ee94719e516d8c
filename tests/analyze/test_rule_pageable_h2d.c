/* pageable_h2d around its thresholds: blocking copies of h2d_min_bytes (64 KiB) and more,
 * H2D-stall idle at min_share (3 %) and more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "synth.h"

static const struct an_finding *with(uint64_t bytes, uint64_t copy_ns, int pageable, int gpu,
                                     struct an_findings *out, struct an_model **m)
{
    struct synth s = {.gpu_records = gpu};
    struct loop L = {.steps = 30, .h2d_bytes = bytes, .h2d_ns = copy_ns,
                     .h2d_pageable = pageable, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return synth_rule(*m, an_rule_pageable_h2d, out, 8);
}

static void pageable_copies(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = with(16u << 20, 3 * MS, 1, gpu, &out, &m);
        assert_non_null(f);
        assert_string_equal(f->id, "pageable_h2d");
        assert_non_null(strstr(f->change, "pin_memory=True"));
        assert_non_null(strstr(f->change, "non_blocking=True"));
        /* ~3 ms stalled per step, 30 steps; pinned, the copy takes a third of that (no
         * pinned copy in the run to measure by) and still cannot overlap the previous
         * step's compute (.item() drained it): 2 ms back a step */
        assert_true(f->saving_ns > 30 * 1900 * US && f->saving_ns < 30 * 2100 * US);
        an_findings_free(&out);
        an_model_free(m);
    }
}

static void pinned_async_copies(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(16u << 20, 3 * MS, 0, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* 32 KiB copies are under h2d_min_bytes even when they stall: not this rule's business. */
static void small_copies(void **state)
{
    (void)state;
    struct an_findings out = {0};
    struct an_model *m;
    assert_null(with(32u << 10, 300 * US, 1, 0, &out, &m));
    an_findings_free(&out);
    an_model_free(m);
}

/* Stalls of 60 us in a 3 ms step (2 %) are under min_share; 150 us (4.8 %) are over. */
/* The rule fires exactly when the replayed saving is min_share (thresholds.h) of the
 * replayed run or more: a sweep of copy times that crosses it, both sides seen. */
static void share_around_threshold(void **state)
{
    (void)state;
    int below = 0, above = 0;
    for (uint64_t copy = 20 * US; copy <= 600 * US; copy += 20 * US) {
        struct an_findings out = {0};
        struct an_model *m;
        const struct an_finding *f = with(1u << 20, copy, 1, 0, &out, &m);
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

/* A bulk download that blocks: cuMemcpyDtoH_v2 of `bytes` into pageable memory, after the
 * stream's work, `copy_ns` on the GPU. */
static void download(struct synth *s, uint64_t bytes, uint64_t copy_ns)
{
    uint64_t issued = s->now;
    synth_gpu(s, AN_GPU_COPY, issued, copy_ns, GW_COPY_DTOH, GW_HOST_PAGEABLE, bytes);
    uint64_t dur = s->gpu_end - issued + 2 * US;
    struct an_ev *e = synth_call(s, AN_COPY, GW_API_cuMemcpyDtoH_v2, dur,
                                 AN_F_BLOCKING | AN_F_DRAINS | AN_F_ALL_STREAMS);
    e->dir = GW_COPY_DTOH;
    e->host_kind = GW_HOST_PAGEABLE;
    e->bytes = bytes;
}

/* (not inlined: gcc cannot see that the finding's text lies in a list it grew) */
__attribute__((noinline)) static int has(const char *text, const char *part)
{
    return strstr(text, part) != NULL;
}

static double fig(const struct an_finding *f, const char *key)
{
    for (size_t i = 0; i < f->nfig; i++)
        if (!strcmp(f->fig[i].key, key))
            return f->fig[i].value;
    return -1;
}

/* A CPU-offloaded optimizer step, 20 steps: 3 ms of kernels, 16 MiB of gradients down to
 * pageable memory (6 ms), 4 ms of CPU work on them, 16 MiB of weights up (6 ms). Pinned
 * both ways each copy takes a third (2 ms): the step goes from 19 ms to 11 ms, 8 ms back a
 * step; the uploads alone would give 4 of them (what was predicted before downloads
 * counted: 80 ms). The finding names both directions. */
static struct an_model *offloaded_optimizer_model(int gpu, uint64_t kernel_stream)
{
    struct synth s = {.gpu_records = gpu};
    for (int i = 0; i < 20; i++) {
        for (int k = 0; k < 3; k++) {
            synth_launch(&s, 5 * US, 1 * MS);
            s.ev[s.n - 1].stream = kernel_stream;         /* its record, or its call */
            if (gpu)
                s.ev[s.n - 2].stream = kernel_stream;     /* its call */
        }
        download(&s, 16u << 20, 6 * MS);
        synth_idle(&s, 4 * MS);
        synth_h2d(&s, 16u << 20, 6 * MS, 1);
    }
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return m;
}

static void offloaded_optimizer(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_model *m = offloaded_optimizer_model(gpu, 1);
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_pageable_h2d, &out, 8);
        if (!f)
            fail_msg("gpu %d: no finding", gpu);
        assert_string_equal(f->title, "Copies to and from pageable memory block the host and "
                                      "stall the GPU (uploads and downloads)");
        assert_true(has(f->evidence, "20 device-to-host copies into pageable memory "
                                            "(320.0 MiB, 16.0 MiB each on average)"));
        assert_true(has(f->change, "pin_memory=True"));
        assert_true(has(f->change, "Download into pinned memory too"));
        assert_true(fig(f, "blocked_downloads") == 20);
        assert_true(fig(f, "blocked_download_bytes") == 20.0 * (16u << 20));
        assert_true(fig(f, "blocked_copies") == 20);
        /* with GPU records, 8 ms a step over 20 steps (160.095 ms: the first upload's
         * wait included); host-only the download's move is told from its wait for the
         * kernels by the fastest blocking copy's rate (the uploads': 16 MiB in 6 ms), so
         * about the same (162.090 ms) */
        uint64_t want = gpu ? 160095 * US : 162090 * US;
        if (f->saving_ns < want - 100 * US || f->saving_ns > want + 100 * US)
            fail_msg("gpu %d: saving %llu ns", gpu, (unsigned long long)f->saving_ns);
        /* the downloads are data the host uses: dropping a sync does not remove them */
        assert_true(an_replay_saving(&m->replay, AN_WI_NO_SYNC) < 20 * 100 * US);
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* The same offloaded optimizer with its kernels on a side stream: the download on the
 * default stream drains them too. Host-only they were done when its move began, not when
 * it ended: taken as running until its end in every world, pinning the download saved
 * nothing of it (118 ms, where the timeline's replay gives 194: the upload, pinned, no
 * longer holds back the next step's kernels on the other stream). Told apart, host-only
 * gives what the timeline does. */
static void download_after_other_streams(void **state)
{
    (void)state;
    uint64_t saving[2];
    for (int gpu = 0; gpu < 2; gpu++) {
        struct an_model *m = offloaded_optimizer_model(gpu, 2);
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_pageable_h2d, &out, 8);
        assert_non_null(f);
        assert_true(m->replay.error < 1e-9);
        saving[gpu] = f->saving_ns;
        an_findings_free(&out);
        an_model_free(m);
    }
    if (saving[0] < saving[1] - 5 * MS || saving[0] > saving[1] + 5 * MS)
        fail_msg("host-only %llu ns, with the timeline %llu", (unsigned long long)saving[0],
                 (unsigned long long)saving[1]);
}

/* A state download every 5 steps: 64 MiB to pageable memory (20 ms), the loop's uploads
 * pinned and async, GPU records. Only the downloads block: the finding says so; pinned,
 * each takes a third, 13.3 ms back per download. A 4-byte .item() every step instead: no
 * finding; both: the finding counts the 8 downloads, not the 40 reads. */
static void periodic_state_download(void **state)
{
    (void)state;
    for (int bulk = 0; bulk < 3; bulk++) {
        struct synth s = {.gpu_records = 1};
        for (int i = 0; i < 40; i++) {
            synth_h2d(&s, 1u << 20, 100 * US, 0);
            for (int k = 0; k < 3; k++)
                synth_launch(&s, 5 * US, 1 * MS);
            if (bulk != 1)
                synth_item(&s);
            if (bulk && i % 5 == 4)
                download(&s, 64u << 20, 20 * MS);
        }
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_pageable_h2d, &out, 8);
        if (!bulk) {
            assert_null(f);
        } else {
            assert_non_null(f);
            assert_string_equal(f->title, "Device-to-host copies into pageable memory block "
                                          "the host (downloads)");
            assert_true(has(f->evidence, "8 device-to-host copies into pageable "
                                                "memory (512.0 MiB, 64.0 MiB each on average)"));
            /* (without the reads, each waited for the step's kernels too) */
            if (!has(f->evidence, bulk == 1 ? "blocked the host for 283.34 ms in all"
                                            : "blocked the host for 160.02 ms in all"))
                fail_msg("%s", f->evidence);
            assert_false(has(f->change, "DataLoader"));
            assert_true(fig(f, "blocked_downloads") == 8);
            assert_true(fig(f, "blocked_copies") == 0);
            if (f->saving_ns < 8 * 13000 * US || f->saving_ns > 8 * 13600 * US)
                fail_msg("saving %llu ns", (unsigned long long)f->saving_ns);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* Forty 4 KiB pageable uploads a step, each waiting for the step's kernels before it (a
 * dict of tensors moved one by one), the loss read each step, and a 16 MiB checkpoint read
 * every 20 steps: the pinned world pins them all, and the small uploads give its saving
 * back. The downloads alone are the finding's, and pinning them gives back at most the 3
 * ms the host spent in them: no finding (random draw 31 ranked three checkpoint reads
 * first with the 65 ms that gathering the small uploads gave back). Every step's: the
 * finding, its saving no more than their host time. */
static void downloads_claim_their_own_time(void **state)
{
    (void)state;
    for (int every = 20; every >= 1; every -= 19) {
        struct synth s = {.gpu_records = 1};
        for (int i = 0; i < 60; i++) {
            for (int k = 0; k < 3; k++)
                synth_launch(&s, 5 * US, 300 * US);
            synth_item(&s);
            for (int c = 0; c < 40; c++)
                synth_h2d(&s, 4096, 20 * US, 1);
            if (i % every == every - 1)
                download(&s, 16u << 20, 1 * MS);
        }
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_pageable_h2d, &out, 8);
        const struct an_xfer *x = &m->xfer[GW_COPY_DTOH][GW_HOST_PAGEABLE];
        assert_int_equal(x->bulk, 60 / every);
        assert_true(an_whatif_saving(m, AN_WI_PINNED_ASYNC) > x->bulk_ns);
        if (every > 1) {
            assert_null(f);
        } else {
            assert_non_null(f);
            assert_int_equal(f->saving_ns, x->bulk_ns);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* The loop's state read every so many steps is not what pinning edits: 60 steps of 3 ms of
 * kernels and a 4 MiB gradient download into pageable memory (1.5 ms on the GPU; pinned, a
 * third: 1 ms back each, 60 ms), and a 64 MiB read of the state (24 ms) after the step's
 * download, every 30 steps (torch.save(model.state_dict())): the user pins the tensor the
 * loop downloads each step, never the state torch.save reads, so the saving is the 60 ms
 * alone (with the two reads pinned too it was 60 + 2 x 16 = 92 ms: random draw 3 beside a
 * CPU hog, 115 ms predicted where the fix gained 80). Read every 5 steps instead, the same
 * download is the loop's, and pinned: 60 + 12 x 16 = 252 ms. */
static void state_read_every_so_many_steps(void **state)
{
    (void)state;
    for (int every = 30; every >= 5; every -= 25) {
        struct synth s = {.gpu_records = 1};
        for (int i = 0; i < 60; i++) {
            for (int k = 0; k < 3; k++)
                synth_launch(&s, 5 * US, 1 * MS);
            download(&s, 4u << 20, 1500 * US);
            if (i % every == every - 1)
                download(&s, 64u << 20, 24 * MS);
        }
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        uint64_t want = every == 30 ? 60 * MS : 252 * MS;
        uint64_t saving = an_whatif_saving(m, AN_WI_PINNED_ASYNC);
        if (saving < want - 1 * MS || saving > want + 1 * MS)
            fail_msg("every %d: saving %llu ns, want %llu", every,
                     (unsigned long long)saving, (unsigned long long)want);
        an_model_free(m);
    }
}

/* x.cuda() from pinned memory without non_blocking=True: PyTorch copies asynchronously,
 * then syncs the stream. 50 steps of a 5 ms batch load on the thread, a 32 MiB pinned
 * upload (1.7 ms on the GPU) and its stream's sync, 4 kernels of 1 ms, GPU records. Each
 * step: the load (the GPU finishes the step before it meanwhile), then the copy waited
 * for, then the launches: 5 + 1.7 + ~0.03 ms. Copied with non_blocking=True the host
 * queues it and goes on: the GPU, 5.7 ms a step, bounds the loop, ~1.03 ms a step back
 * (the first step has no load before it to overlap: 49 of them, 50.5 ms). The copies
 * count as blocked (no pageable copy, no synchronous entry point in the trace: there was
 * no finding). A kernel launched between the copy and the sync makes it the user's sync,
 * not the copy's: none counted, and no finding of this rule. */
static void pinned_upload_waited_for(void **state)
{
    (void)state;
    for (int between = 0; between < 2; between++) {
        struct synth s = {.gpu_records = 1};
        for (int i = 0; i < 50; i++) {
            synth_idle(&s, 5 * MS);
            synth_h2d(&s, 32u << 20, 1700 * US, 0);
            if (between)
                synth_launch(&s, 5 * US, 1 * MS);
            synth_stream_sync(&s);
            for (int k = 0; k < 4 - between; k++)
                synth_launch(&s, 5 * US, 1 * MS);
        }
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_pageable_h2d, &out, 8);
        if (between) {
            assert_int_equal(m->total.h2d_waited_calls, 0);
            assert_null(f);
        } else {
            assert_int_equal(m->total.h2d_waited_calls, 50);
            assert_non_null(f);
            assert_true(fig(f, "blocked_copies") == 50);
            if (!has(f->evidence, "50 asynchronous ones waited for by a sync of their stream"))
                fail_msg("%s", f->evidence);
            assert_true(has(f->change, "non_blocking=True"));
            if (f->saving_ns < 48 * MS || f->saving_ns > 53 * MS)
                fail_msg("saving %llu ns", (unsigned long long)f->saving_ns);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* Host-only, 40 steps of 4 ms of kernels and a 16 MiB pageable download right after them
 * (2 ms of copy on the GPU), nothing else waiting: each download's 6 ms are its wait for the
 * kernels and its move, which no call tells apart (the fastest such copy's rate includes
 * its wait too). With the host's memcpy rate measured (8 GB/s: the staging copy takes
 * 2.097 ms at least), the saving taking all of it as the move is the ceiling and what
 * rests on the least move the finding: 40 x 2/3 x 2.097 ms = 55.9 ms. With the timeline:
 * the copy's own 2 ms, nothing unproven. Without the rate: the whole call, as before. */
static void downloads_after_unproven_kernels(void **state)
{
    (void)state;
    for (int mode = 0; mode < 3; mode++) {  /* host-only with a rate, without, timeline */
        struct synth s = {.gpu_records = mode == 2, .host_copy_bps = mode == 1 ? 0 : 8000000000};
        for (int i = 0; i < 40; i++) {
            for (int k = 0; k < 8; k++)
                synth_launch(&s, 5 * US, 500 * US);
            download(&s, 16u << 20, 2 * MS);
            synth_idle(&s, 1 * MS);
        }
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        synth_free(&s);
        struct an_findings out = {0};
        const struct an_finding *f = synth_rule(m, an_rule_pageable_h2d, &out, 8);
        if (!f)
            fail_msg("mode %d: no finding", mode);
        uint64_t replayed = an_whatif_saving(m, AN_WI_PINNED_ASYNC);
        if (mode == 0) {
            assert_int_equal(out.nunproven, 1);
            const struct an_unproven *u = &out.unproven[0];
            assert_string_equal(u->id, "pageable_h2d");
            assert_int_equal(u->up_to_ns, replayed);
            assert_int_equal(u->proven_ns, f->saving_ns);
            assert_int_equal(f->saving_ns, replayed - m->replay.pinned_unknown_ns);
            /* 2/3 of 40 least moves (16 MiB at 8 GB/s), as the replay lays them */
            if (f->saving_ns < 55 * MS || f->saving_ns > 57 * MS)
                fail_msg("floor %llu ns", (unsigned long long)f->saving_ns);
            assert_true(u->up_to_ns > 150 * MS);  /* (the calls' 6 ms taken as moves) */
        } else {
            assert_int_equal(out.nunproven, 0);
            assert_int_equal(m->replay.pinned_unknown_ns, 0);
            assert_int_equal(f->saving_ns, replayed);
            if (mode == 2 && (f->saving_ns < 52 * MS || f->saving_ns > 55 * MS))
                fail_msg("timeline %llu ns", (unsigned long long)f->saving_ns);
        }
        an_findings_free(&out);
        an_model_free(m);
    }
}

/* 4 pageable uploads of 34 MiB at start-up (a model's weights), then a loop that copies
 * nothing and reads its loss every step: one-offs, no finding (the loop has nothing to pin);
 * the same start with a 16 MiB pageable upload every step: the finding. */
static void startup_copies_are_one_offs(void **state)
{
    (void)state;
    for (int gpu = 0; gpu < 2; gpu++)
        for (int per_step = 0; per_step < 2; per_step++) {
            struct synth s = {.gpu_records = gpu};
            s.now = 1000 * MS;
            synth_alloc(&s, 256ull << 20, 0);
            for (int k = 0; k < 4; k++)
                synth_h2d(&s, 34u << 20, 6 * MS, 1);
            synth_idle(&s, 50 * MS);
            struct loop L = {.steps = 30, .h2d_bytes = per_step ? 16u << 20 : 0,
                             .h2d_ns = 3 * MS, .h2d_pageable = 1, .kernels = 3,
                             .kernel_ns = 300 * US, .launch_ns = 5 * US, .item = 1};
            synth_loop(&s, &L);
            struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
            synth_free(&s);
            struct an_findings out = {0};
            const struct an_finding *f = synth_rule(m, an_rule_pageable_h2d, &out, 8);
            assert_true(m->steps.steady > 20);
            assert_int_equal(m->steady.h2d_blocked_calls, per_step ? m->steady.uploads : 0);
            if (per_step)
                assert_non_null(f);
            else
                assert_null(f);
            an_findings_free(&out);
            an_model_free(m);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(startup_copies_are_one_offs),
        cmocka_unit_test(pageable_copies),
        cmocka_unit_test(pinned_async_copies),
        cmocka_unit_test(small_copies),
        cmocka_unit_test(share_around_threshold),
        cmocka_unit_test(offloaded_optimizer),
        cmocka_unit_test(download_after_other_streams),
        cmocka_unit_test(periodic_state_download),
        cmocka_unit_test(downloads_claim_their_own_time),
        cmocka_unit_test(state_read_every_so_many_steps),
        cmocka_unit_test(pinned_upload_waited_for),
        cmocka_unit_test(downloads_after_unproven_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
