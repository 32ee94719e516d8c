/* The analyzer's model underneath the rules: reorder window, allocation table, time bins,
 * attribution of idle intervals, steps and warm-up, GPU records read late. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "feeder.h"
#include "history.h"
#include "ptrmap.h"
#include "reorder.h"
#include "synth.h"
#include "timebins.h"

/* ---- reorder ---- */

struct collected {
    uint64_t ts[4096];
    size_t n;
};

static void collect(void *user, const struct an_ev *ev)
{
    struct collected *c = user;
    if (c->n < 4096)
        c->ts[c->n++] = ev->ts;
}

/* Three threads, their chunks written in turns as a writer flushing every 50 ms does:
 * each chunk holds 50 ms of one thread, so the file is only roughly in time order. */
static void reorder_interleaved_chunks(void **state)
{
    (void)state;
    static struct collected c;
    c.n = 0;
    struct an_reorder *r = an_reorder_new(200 * MS, 200 * MS, 1u << 20, collect, &c);
    assert_non_null(r);
    for (uint64_t chunk = 0; chunk < 20; chunk++)
        for (uint32_t tid = 1; tid <= 3; tid++)
            for (uint64_t i = 0; i < 50; i++) {
                struct an_ev e = {.ts = chunk * 50 * MS + i * MS + tid, .tid = tid};
                e.end = e.ts;
                an_reorder_push(r, tid, &e);
            }
    an_reorder_flush(r);
    assert_int_equal(c.n, 3000);
    for (size_t i = 1; i < c.n; i++)
        assert_true(c.ts[i - 1] <= c.ts[i]);
    assert_int_equal(an_reorder_stats(r)->late, 0);
    an_reorder_free(r);
}

/* An event older than the window is still released, and counted late. */
static void reorder_late_event(void **state)
{
    (void)state;
    static struct collected c;
    c.n = 0;
    struct an_reorder *r = an_reorder_new(10 * MS, 10 * MS, 1u << 20, collect, &c);
    for (uint64_t i = 0; i < 100; i++) {
        struct an_ev e = {.ts = 1000 * MS + i * MS};
        an_reorder_push(r, 1, &e);
    }
    struct an_ev old = {.ts = 1000 * MS + 5 * MS};
    an_reorder_push(r, 2, &old);
    an_reorder_flush(r);
    assert_int_equal(c.n, 101);
    assert_int_equal(an_reorder_stats(r)->late, 1);
    an_reorder_free(r);
}

/* One source delivering sorted runs out of order (CUPTI buffers): still time order. */
static void reorder_runs_of_one_source(void **state)
{
    (void)state;
    static struct collected c;
    c.n = 0;
    struct an_reorder *r = an_reorder_new(100 * MS, 100 * MS, 1u << 20, collect, &c);
    for (int buffer = 3; buffer >= 0; buffer--)  /* the last buffer first */
        for (uint64_t i = 0; i < 500; i++) {
            struct an_ev e = {.ts = 1000 * MS + (uint64_t)buffer * 500 * 10 * US + i * 10 * US};
            an_reorder_push(r, 7, &e);
        }
    an_reorder_flush(r);
    assert_int_equal(c.n, 2000);
    for (size_t i = 1; i < c.n; i++)
        assert_true(c.ts[i - 1] <= c.ts[i]);
    assert_int_equal(an_reorder_stats(r)->late, 0);
    an_reorder_free(r);
}

/* The cap on waiting events releases early rather than growing. */
static void reorder_cap(void **state)
{
    (void)state;
    static struct collected c;
    c.n = 0;
    struct an_reorder *r = an_reorder_new(UINT64_MAX / 4, UINT64_MAX / 4, 100, collect, &c);
    for (uint64_t i = 0; i < 1000; i++) {
        struct an_ev e = {.ts = i};
        an_reorder_push(r, i % 3, &e);
    }
    assert_true(an_reorder_stats(r)->max_waiting <= 101);
    an_reorder_flush(r);
    assert_int_equal(c.n, 1000);
    an_reorder_free(r);
}

/* The inline path (an_reorder_insert, then an_reorder_next until NULL) releases exactly
 * what an_reorder_push emits, in the same order, with the same accounting: sources in and
 * out of order, sorted runs of one source, late events that widen the window, and releases
 * forced by the cap. */
static void reorder_inline_path_same_as_push(void **state)
{
    (void)state;
    static struct collected a, b;
    a.n = b.n = 0;
    struct an_reorder *ra = an_reorder_new(2 * MS, 16 * MS, 500, collect, &a);
    struct an_reorder *rb = an_reorder_new(2 * MS, 16 * MS, 500, collect, &b);
    assert_non_null(ra);
    assert_non_null(rb);
    uint64_t seed = 12345, t[5] = {100 * MS, 100 * MS, 100 * MS, 100 * MS, 100 * MS};
    for (uint64_t i = 0; i < 4000; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t x = seed >> 33, s = x % 5;
        uint64_t ts = x % 10 < 7  ? (t[s] += x % (50 * US))   /* in order */
                      : x % 10 < 9 ? t[s] + MS - x % (2 * MS)  /* a little off */
                                   : t[s] - 5 * MS;            /* a late run */
        struct an_ev e = {.ts = ts, .end = ts, .tid = (uint32_t)s, .bytes = i};
        an_reorder_push(ra, s, &e);
        assert_int_equal(an_reorder_insert(rb, s, &e), 1);
        const struct an_ev *due;
        while ((due = an_reorder_next(rb, 0)) != NULL)
            collect(&b, due);
        assert_int_equal(a.n, b.n);
    }
    an_reorder_flush(ra);
    const struct an_ev *due;
    while ((due = an_reorder_next(rb, 1)) != NULL)
        collect(&b, due);
    assert_int_equal(a.n, 4000);
    assert_int_equal(b.n, 4000);
    assert_memory_equal(a.ts, b.ts, sizeof a.ts);
    const struct an_reorder_stats *sa = an_reorder_stats(ra), *sb = an_reorder_stats(rb);
    assert_int_equal(sa->pushed, 4000);
    assert_int_equal(sa->emitted, 4000);
    assert_true(sa->late > 0);
    assert_true(sa->forced > 0);
    assert_true(sa->sources > 5);  /* late runs of a source became rings of their own */
    assert_memory_equal(sa, sb, sizeof *sa);
    an_reorder_free(ra);
    an_reorder_free(rb);
}

/* ---- allocation table ---- */

/* The analysis loop's path (an_feeder_slot, the event written there, an_feeder_push_slot)
 * gives the model exactly what an_feeder_push of a copy does: host calls of several
 * threads and GPU records of several streams, in order, a little off, late past the
 * window, releases forced by the cap, and slots handed out but never pushed. */
static void feeder_slot_path_same_as_push(void **state)
{
    (void)state;
    struct an_model *ma = an_model_new(NULL, NULL), *mb = an_model_new(NULL, NULL);
    assert_non_null(ma);
    assert_non_null(mb);
    struct an_feeder fa, fb;
    assert_int_equal(an_feeder_init(&fa, ma, AN_FEEDER_MAX_WINDOW_NS, 300), 0);
    assert_int_equal(an_feeder_init(&fb, mb, AN_FEEDER_MAX_WINDOW_NS, 300), 0);
    uint64_t seed = 777, t[6], in_place = 0;
    for (int s = 0; s < 6; s++)
        t[s] = 1000 * MS;
    for (uint64_t i = 0; i < 20000; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t x = seed >> 33, s = x % 6, run = (x >> 8) % 64 < 60;
        if (run)  /* mostly long runs of one source, as chunks are */
            s = (i / 200) % 6;
        uint64_t ts = x % 10 < 8  ? (t[s] += x % (40 * US))   /* in order */
                      : x % 10 < 9 ? t[s] + MS - x % (2 * MS)  /* a little off */
                                   : t[s] - 400 * MS;          /* late past the window */
        struct an_ev e = {.ts = ts, .end = ts + 3 * US, .bytes = i};
        if (s < 3) {  /* host threads 1-3 */
            e.tid = (uint32_t)s + 1;
            e.stream = 7;
            e.kind = x % 50 ? AN_LAUNCH : AN_SYNC;
            e.flags = e.kind == AN_SYNC ? AN_F_DRAINS : AN_F_KERNEL;
            e.key = 1 + x % 3;
            e.api = 1;
        } else {      /* device 0, streams 1-3 */
            e.tid = 0;
            e.stream = s - 2;
            e.kind = AN_GPU_KERNEL;
            e.key = 1 + x % 3;
        }
        struct an_ev *slot = an_feeder_slot(&fb);
        in_place += slot != &fb.scratch;
        if (x % 97 == 0) {  /* written, then not an event for the analysis */
            *slot = (struct an_ev){.ts = 1};
            continue;
        }
        an_feeder_push(&fa, &e);
        *slot = e;
        an_feeder_push_slot(&fb, slot);
    }
    assert_true(in_place > 10000);
    assert_true(an_feeder_late(&fa) > 0);
    assert_int_equal(an_feeder_late(&fa), an_feeder_late(&fb));
    const struct an_reorder_stats *ha = an_reorder_stats(fa.host), *hb = an_reorder_stats(fb.host);
    const struct an_reorder_stats *ga = an_reorder_stats(fa.gpu), *gb = an_reorder_stats(fb.gpu);
    assert_true(ha->forced > 0);
    assert_memory_equal(ha, hb, sizeof *ha);
    assert_memory_equal(ga, gb, sizeof *ga);
    an_feeder_finish(&fa);
    an_feeder_finish(&fb);
    assert_memory_equal(&ma->total, &mb->total, sizeof ma->total);
    assert_int_equal(ma->late_events, mb->late_events);
    assert_int_equal(ma->first_ts, mb->first_ts);
    assert_int_equal(ma->last_ts, mb->last_ts);
    assert_int_equal(ma->gpu_records, mb->gpu_records);
    assert_int_equal(ma->host_calls, mb->host_calls);
    assert_int_equal(ma->nlargest, mb->nlargest);
    assert_memory_equal(ma->largest, mb->largest, sizeof ma->largest);
    assert_true(ma->gpu_records > 5000);
    an_model_free(ma);
    an_model_free(mb);
}

static void ptrmap_put_take(void **state)
{
    (void)state;
    struct an_ptrmap m = {0};
    for (uint64_t i = 1; i <= 20000; i++) {
        struct an_alloc a = {.key = i * 0x200000, .bytes = i};
        assert_int_equal(an_ptrmap_put(&m, &a), 0);
    }
    for (uint64_t i = 1; i <= 20000; i += 2) {
        struct an_alloc a;
        assert_int_equal(an_ptrmap_take(&m, i * 0x200000, &a), 1);
        assert_int_equal(a.bytes, i);
    }
    assert_int_equal(m.count, 10000);
    for (uint64_t i = 1; i <= 20000; i++) {
        const struct an_alloc *a = an_ptrmap_get(&m, i * 0x200000);
        if (i % 2)
            assert_null(a);
        else
            assert_true(a && a->bytes == i);
    }
    assert_int_equal(an_ptrmap_take(&m, 12345, NULL), 0);
    an_ptrmap_free(&m);
}

/* ---- time bins ---- */

static void timebins_sum(void **state)
{
    (void)state;
    static struct an_timebins tb;
    memset(&tb, 0, sizeof tb);
    /* 10 s of 1 ms busy every 2 ms, far past the first width (doublings) */
    for (uint64_t t = 0; t < 10000; t += 2)
        an_bins_add(&tb, AN_BIN_BUSY, 5 * MS + t * MS, 6 * MS + t * MS, (double)MS);
    double all = an_bins_sum(&tb, AN_BIN_BUSY, 0, UINT64_MAX / 2);
    assert_true(all > 4999.0 * MS && all < 5001.0 * MS);
    double half = an_bins_sum(&tb, AN_BIN_BUSY, 5 * MS, 5005 * MS);
    assert_true(half > 2490.0 * MS && half < 2510.0 * MS);
    /* time before the first one given (an interval added at its end, a late record): the
     * bins reach back to it instead of piling it at their start */
    memset(&tb, 0, sizeof tb);
    an_bins_add(&tb, AN_BIN_BUSY, 1000 * MS, 1000 * MS + 1, 1.0);
    an_bins_add(&tb, AN_BIN_IDLE_HOST, 400 * MS, 1000 * MS, (double)(600 * MS));
    assert_true(tb.origin <= 400 * MS);
    double before = an_bins_sum(&tb, AN_BIN_IDLE_HOST, 0, 700 * MS);
    double after = an_bins_sum(&tb, AN_BIN_IDLE_HOST, 1000 * MS, 2000 * MS);
    assert_true(before > 299.0 * MS && before < 301.0 * MS);
    assert_true(after < 1.0 * MS);
    assert_true(an_bins_sum(&tb, AN_BIN_BUSY, 999 * MS, 1001 * MS) == 1.0);
}

/* ---- attribution of one idle interval ---- */

static void call(struct an_history *h, uint8_t kind, uint64_t ts, uint64_t dur, uint8_t flags,
                 uint8_t dir)
{
    struct an_ev e = {.ts = ts, .end = ts + dur, .kind = kind, .flags = flags, .dir = dir};
    an_history_call(h, &e);
}

static void attribution(void **state)
{
    (void)state;
    struct an_thresholds th = AN_THRESHOLDS_DEFAULT;
    struct an_history h;
    an_history_init(&h, th.host_gap_min_ns, 1024);
    /* a sync returning at 10 ms, 3 ms without a call, a 2 ms blocking H2D, a launch */
    call(&h, AN_SYNC, 5 * MS, 5 * MS, AN_F_DRAINS, 0);
    call(&h, AN_COPY, 13 * MS, 2 * MS, AN_F_BLOCKING, GW_COPY_HTOD);
    call(&h, AN_LAUNCH, 15 * MS + 10 * US, 5 * US, AN_F_KERNEL, 0);
    struct an_split split;
    an_history_attribute(&h, &th, 10 * MS, 15 * MS + 20 * US, 16 * MS, &split);
    assert_int_equal(split.ns[AN_CAUSE_INPUT], 3 * MS);
    assert_int_equal(split.ns[AN_CAUSE_H2D], 2 * MS);
    assert_int_equal(split.ns[AN_CAUSE_SYNC], 20 * US);  /* drained by the sync */
    /* a short gap inside a run of launches: launch-bound */
    for (uint64_t t = 20 * MS; t < 21 * MS; t += 4 * US)
        call(&h, AN_LAUNCH, t, 3 * US, AN_F_KERNEL, 0);
    an_history_attribute(&h, &th, 20 * MS + 100 * US, 20 * MS + 103 * US, 21 * MS, &split);
    assert_int_equal(split.ns[AN_CAUSE_LAUNCH], 3 * US);
    an_history_free(&h);
}

/* ---- steps ---- */

/* Three slow warm-up steps, then steady ones; the sync that ends each step marks them, so
 * the first step is before the first boundary (start-up) and two slow intervals remain. */
static void steps_and_warmup(void **state)
{
    (void)state;
    struct synth s = {0};
    struct loop slow = {.steps = 3, .kernels = 3, .kernel_ns = 5 * MS, .launch_ns = 5 * US,
                        .item = 1};
    struct loop fast = {.steps = 30, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                        .item = 1};
    synth_loop(&s, &slow);
    synth_loop(&s, &fast);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_int_equal(m->steps.source, AN_STEPS_AUTO);
    assert_int_equal(m->steps.count, 32);
    assert_int_equal(m->steps.warmup, 2);
    assert_true(m->steps.median_ns > 3 * MS && m->steps.median_ns < 3100 * US);
    assert_string_equal(m->steps.marker, "cuMemcpyDtoHAsync_v2");
    an_model_free(m);
    synth_free(&s);
}

/* 300 ms of start-up that issues no work (context, modules, allocations), then 100 steps of
 * 1.4 ms: the loop spans a third of the run but all of its work, and is the step. */
static void found_steps_after_long_startup(void **state)
{
    (void)state;
    struct synth s = {.gpu_records = 1};
    s.now = 1000 * MS;
    for (int i = 0; i < 30; i++) {
        synth_call(&s, AN_CALL, GW_API_cuModuleGetFunction, 9 * MS, 0);
        synth_idle(&s, 1 * MS);
    }
    struct loop L = {.steps = 100, .h2d_bytes = 1u << 20, .h2d_ns = 50 * US, .kernels = 10,
                     .kernel_ns = 100 * US, .launch_ns = 5 * US, .item = 1,
                     .after_item_ns = 400 * US};
    synth_loop(&s, &L);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_true(m->wall_ns > 400 * MS);
    assert_int_equal(m->steps.source, AN_STEPS_AUTO);
    assert_int_equal(m->steps.count, 99);
    assert_true(m->steps.median_ns > 1350 * US && m->steps.median_ns < 1500 * US);
    an_model_free(m);
    synth_free(&s);
}

/* A PyTorch loop without NVTX, as the H100 showed it: model uploads, 3 s of start-up with no
 * work (imports, compilation), then a loop whose host runs ahead for its first 50 steps
 * (1 ms apart: the launch queue filling) and then at the GPU's pace (6 ms). The loop spans
 * 14 % of the time since the first upload but holds 94 % of the work; its later half is
 * regular. */
static void found_steps_host_ahead_first(void **state)
{
    (void)state;
    struct synth s = {0};
    for (int i = 0; i < 8; i++)
        synth_h2d(&s, 1u << 20, 50 * US, 0);
    synth_idle(&s, 3000 * MS);
    for (int i = 0; i < 120; i++) {
        synth_launch(&s, 5 * US, 100 * US);
        synth_idle(&s, (i < 50 ? 1 : 6) * MS);
    }
    synth_stream_sync(&s);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_int_equal(m->steps.source, AN_STEPS_AUTO);
    assert_int_equal(m->steps.count, 119);
    assert_true(m->steps.median_ns > 5900 * US && m->steps.median_ns < 6100 * US);
    an_model_free(m);
    synth_free(&s);
}

/* One kernel a step, at the given host interval: `intervals` of them (intervals + 1 launches). */
static struct an_model *paced_loop(const uint64_t *intervals, size_t n)
{
    struct synth s = {0};
    for (size_t i = 0; i <= n; i++) {
        synth_launch(&s, 5 * US, 100 * US);
        if (i < n)
            synth_idle(&s, intervals[i] - 5 * US);
    }
    synth_stream_sync(&s);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return m;
}

/* As a PyTorch loop that holds more memory each step showed on an H100: 100 steps of about
 * 1.2 ms, then 49 of 2.7 ms. A third of the intervals are far from the median (1.2 ms) and
 * the later half's median is not the series', but each interval keeps the pace of its
 * neighbours: the steps are found. */
static void found_steps_that_change_pace(void **state)
{
    (void)state;
    uint64_t iv[149];
    for (size_t i = 0; i < 149; i++)
        iv[i] = (i < 100 ? 1200 * US : 2700 * US) + (i % 5) * 30 * US;
    struct an_model *m = paced_loop(iv, 149);
    assert_int_equal(m->steps.source, AN_STEPS_AUTO);
    assert_int_equal(m->steps.count, 149);
    assert_true(m->steps.median_ns >= 1200 * US && m->steps.median_ns <= 1320 * US);
    an_model_free(m);
}

/* Epochs as the H100 showed them: a 250 ms pause (the DataLoader's workers start), 12 steps
 * of 6 ms through the prefetched batches, then 38 of 25 ms at the GPU's pace; four times.
 * Two paces that come back are steps. */
static void found_steps_in_epochs(void **state)
{
    (void)state;
    uint64_t iv[199];
    for (size_t i = 0; i < 199; i++) {
        size_t in_epoch = (i + 1) % 50;
        iv[i] = in_epoch == 0 ? 250 * MS : in_epoch <= 12 ? 6 * MS : 25 * MS;
    }
    struct an_model *m = paced_loop(iv, 199);
    assert_int_equal(m->steps.source, AN_STEPS_AUTO);
    assert_int_equal(m->steps.count, 199);
    assert_int_equal(m->steps.median_ns, 25 * MS);
    an_model_free(m);
}

/* 20 steps of 10 launches and a .item(), 1.45 ms each, on a 2-CPU machine another
 * process loads: 10 of the 19 intervals are stretched 1.3-5x by time off the CPU (as a
 * CPU hog made them, 1.45-7.2 ms). Each does the same work: steps, of the unstretched
 * pace. The same loop (one launch a step) whose wait grows each step (1-100 ms) is no step
 * pattern. */
static struct an_model *item_loop(const uint64_t *stretch_us, size_t steps, int launches)
{
    struct synth s = {0};
    for (size_t i = 0; i < steps; i++) {
        for (int k = 0; k < launches; k++)
            synth_launch(&s, 5 * US, 1400 * US / (uint64_t)launches);
        synth_item(&s);
        synth_idle(&s, stretch_us[i] * US);
    }
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return m;
}

static void found_steps_stretched_off_cpu(void **state)
{
    (void)state;
    static const uint64_t stretch_us[20] = {50, 0, 460, 3100, 0, 4700, 0, 4900, 10, 0,
                                            10, 2340, 2560, 0, 1350, 2250, 5800, 0, 0, 0};
    struct an_model *m = item_loop(stretch_us, 20, 10);
    assert_int_equal(m->steps.source, AN_STEPS_AUTO);
    assert_string_equal(m->steps.marker, "cuMemcpyDtoHAsync_v2");
    assert_int_equal(m->steps.count, 19);
    an_model_free(m);
    uint64_t growing_us[60];
    double v = 1000;
    for (size_t i = 0; i < 60; i++, v *= 1.08)
        growing_us[i] = (uint64_t)v;
    m = item_loop(growing_us, 60, 1);
    assert_int_equal(m->steps.source, AN_STEPS_NONE);
    an_model_free(m);
}

/* Intervals that grow by 4 % each time (1 ms to 110 ms) are a trend: each stretch of them
 * is regular around its own median, but their paces never stop changing. No steps. */
static void trend_is_not_steps(void **state)
{
    (void)state;
    uint64_t iv[120];
    double v = 1e6;
    for (size_t i = 0; i < 120; i++, v *= 1.04)
        iv[i] = (uint64_t)v;
    struct an_model *m = paced_loop(iv, 120);
    assert_int_equal(m->steps.source, AN_STEPS_NONE);
    assert_int_equal(m->steps.count, 0);
    an_model_free(m);
}

/* A launch of kernel `shape`, 5 us of host time, 100 us on the GPU. */
static void launch_shape(struct synth *s, uint64_t shape)
{
    synth_launch(s, 5 * US, 100 * US);
    s->ev[s->n - (s->gpu_records ? 2 : 1)].key = shape;
}

/* torch.compile(mode="max-autotune") before the loop, as on an H100: 5 bursts of 50 timed
 * runs (a launch and a cuStreamSynchronize that waits for its kernel, 127 us apart) between
 * 2 s of compiling, then `steps` steps of 6 kernels every 2 ms, and one synchronize at the
 * end. */
static struct an_model *timed_runs_then_loop(unsigned steps)
{
    struct synth s = {0};
    s.now = 1000 * MS;
    for (int burst = 0; burst < 5; burst++) {
        for (int i = 0; i < 50; i++) {
            launch_shape(&s, 5);
            synth_stream_sync(&s);
            synth_idle(&s, 20 * US);
        }
        synth_idle(&s, 2000 * MS);
    }
    for (unsigned i = 0; i < steps; i++) {
        for (uint64_t shape = 10; shape < 16; shape++)
            launch_shape(&s, shape);
        synth_idle(&s, 2 * MS - 30 * US);
    }
    synth_stream_sync(&s);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return m;
}

/* The synchronizes span the run and most of their intervals are even, but those hold
 * under 1 % of the time and, with 300 steps of the loop in one of the others, 245 of 2049
 * work calls (12 %, under step_work_share): not steps; the loop's kernels are. With 100
 * steps, they hold 245 of 849 (29 %): the synchronizes (251) pass for steps. */
static void compile_timing_is_no_step(void **state)
{
    (void)state;
    struct an_model *m = timed_runs_then_loop(300);
    assert_int_equal(m->steps.source, AN_STEPS_AUTO);
    assert_string_equal(m->steps.marker, "launch of one kernel");
    assert_int_equal(m->steps.count, 299);
    assert_int_equal(m->steps.median_ns, 2 * MS);
    an_model_free(m);
    m = timed_runs_then_loop(100);
    assert_string_equal(m->steps.marker, "cuStreamSynchronize");
    assert_int_equal(m->steps.count, 250);
    an_model_free(m);
}

/* Variable shapes, as a loop near its memory cap showed on an H100: kernels 2 to 4 in each
 * of 120 steps of 10 ms, and kernel 9 only with a rare input shape, in 6 steps 17 to 28
 * steps apart: even enough in time, but not once every so many steps. The steps are the
 * loop's; the rare kernel is no coarser step. */
static void rare_shape_kernel_is_no_step(void **state)
{
    (void)state;
    static const int rare[] = {5, 30, 47, 75, 92, 115};
    struct synth s = {0};
    for (int i = 0, r = 0; i < 120; i++) {
        for (uint64_t shape = 2; shape <= 4; shape++)
            launch_shape(&s, shape);
        if (r < 6 && rare[r] == i) {
            launch_shape(&s, 9);
            r++;
        }
        synth_idle(&s, 10 * MS);
    }
    synth_stream_sync(&s);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_int_equal(m->steps.source, AN_STEPS_AUTO);
    assert_int_equal(m->steps.count, 119);
    an_model_free(m);
    synth_free(&s);
}

/* Gradient accumulation: kernels 2 and 3 in each of 200 micro-batches, the optimizer's
 * kernel 7 after every 4th. The optimizer's launches mark the steps: each holds exactly 4
 * of the finer ones. */
static void accumulation_steps_are_the_optimizers(void **state)
{
    (void)state;
    struct synth s = {0};
    for (int i = 0; i < 200; i++) {
        launch_shape(&s, 2);
        launch_shape(&s, 3);
        if (i % 4 == 3)
            launch_shape(&s, 7);
        synth_idle(&s, 3 * MS + (uint64_t)(i % 3) * 200 * US);
    }
    synth_stream_sync(&s);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_int_equal(m->steps.source, AN_STEPS_AUTO);
    assert_int_equal(m->steps.count, 49);
    assert_true(m->steps.median_ns > 12 * MS && m->steps.median_ns < 14 * MS);
    an_model_free(m);
    synth_free(&s);
}

/* NVTX ranges named like steps win over any other pattern, whatever their counter; each
 * range is a step, the last one too (it ends at its pop: no push follows it). */
static void nvtx_steps(void **state)
{
    (void)state;
    struct synth s = {0};
    struct loop one = {.steps = 1, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                       .item = 1};
    for (int i = 0; i < 20; i++) {
        struct an_ev *e = synth_call(&s, AN_RANGE_PUSH, 0, 0, AN_F_STEP_NAME);
        e->key = 0xABC;  /* what event_convert gives "ProfilerStep#N" for any N */
        synth_loop(&s, &one);
        synth_call(&s, AN_RANGE_POP, 0, 0, 0);
    }
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_int_equal(m->steps.source, AN_STEPS_NVTX);
    assert_int_equal(m->steps.count, 20);
    an_model_free(m);
    synth_free(&s);
    assert_true(an_is_step_name("ProfilerStep#12", 15));
    assert_true(an_is_step_name("train_step", 10));
    assert_false(an_is_step_name("Optimizer.step#SGD.step", 23));
    assert_false(an_is_step_name("aten::add", 9));
}

/* Step ranges started and ended (nvtxRangeStart/End: any thread may end one) are steps as
 * pushed ones are, the last ending at its end; a range nested inside closes no step, and
 * the steady window ends where the last step ended, its work counted. */
static void nvtx_started_steps(void **state)
{
    (void)state;
    struct synth s = {0};
    struct loop one = {.steps = 1, .kernels = 3, .kernel_ns = 1 * MS, .launch_ns = 5 * US,
                       .item = 1};
    uint64_t last_end = 0;
    for (int i = 0; i < 12; i++) {
        struct an_ev *e = synth_call(&s, AN_RANGE_START, 0, 0, AN_F_STEP_NAME);
        e->key = 0xABC;
        e->ptr = 100 + (uint64_t)i;
        synth_call(&s, AN_RANGE_START, 0, 0, 0)->ptr = 900 + (uint64_t)i;  /* "forward" */
        synth_loop(&s, &one);
        synth_call(&s, AN_RANGE_END, 0, 0, 0)->ptr = 900 + (uint64_t)i;
        e = synth_call(&s, AN_RANGE_END, 0, 0, 0);
        e->ptr = 100 + (uint64_t)i;
        last_end = e->ts;
    }
    synth_idle(&s, 50 * MS);  /* teardown after the last step: not the steady state's */
    synth_launch(&s, 5 * US, 1 * MS);
    synth_stream_sync(&s);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_int_equal(m->steps.source, AN_STEPS_NVTX);
    assert_int_equal(m->steps.count, 12);
    assert_int_equal(m->steady_end, last_end);
    assert_int_equal(m->steady.launches, 3 * m->steps.steady);
    an_model_free(m);
    synth_free(&s);
}

/* As PyTorch on an H100 showed: 5 s of start-up, then 20 steps of 0.2-6 ms as the host runs
 * ahead of the GPU in bursts (a third of the intervals far from the median), 2 % of the run.
 * Ranges the user marked as steps are the steps all the same; the same loop unmarked is no
 * pattern (a guessed one must span half the run and repeat evenly). */
static void nvtx_steps_after_long_startup(void **state)
{
    (void)state;
    for (int marked = 1; marked >= 0; marked--) {
        struct synth s = {0};
        synth_launch(&s, 5 * US, 1 * MS);
        synth_stream_sync(&s);
        synth_idle(&s, 5000 * MS);
        struct loop one = {.steps = 1, .kernels = 3, .kernel_ns = 100 * US,
                           .launch_ns = 5 * US, .item = 1};
        for (int i = 0; i < 21; i++) {
            if (marked) {
                struct an_ev *e = synth_call(&s, AN_RANGE_PUSH, 0, 0, AN_F_STEP_NAME);
                e->key = 0xABC;
            }
            synth_loop(&s, &one);
            synth_idle(&s, i % 3 == 0 ? 6 * MS : 200 * US);
            if (marked)
                synth_call(&s, AN_RANGE_POP, 0, 0, 0);
        }
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        if (marked) {
            assert_int_equal(m->steps.source, AN_STEPS_NVTX);
            assert_int_equal(m->steps.count, 21);
            assert_true(m->steps.warmup_ns >= 5000 * MS);
            assert_true(m->steady_start >= m->first_ts + 5000 * MS);
        } else {
            assert_int_equal(m->steps.source, AN_STEPS_NONE);
        }
        an_model_free(m);
        synth_free(&s);
    }
}

static void no_pattern(void **state)
{
    (void)state;
    struct synth s = {0};
    for (int i = 0; i < 20; i++) {
        synth_launch(&s, 5 * US, 1 * MS);
        synth_idle(&s, (uint64_t)(i * i) * MS);
        synth_stream_sync(&s);
    }
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_int_equal(m->steps.source, AN_STEPS_NONE);
    assert_int_equal(m->steady_start, m->first_ts);
    an_model_free(m);
    synth_free(&s);
}

/* ---- GPU records read after all host events (CUPTI buffers flushed at exit) ---- */

static void gpu_records_late(void **state)
{
    (void)state;
    struct synth a = {.gpu_records = 1};
    struct loop L = {.steps = 30, .input_ns = 2 * MS, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(&a, &L);
    struct an_model *in_order = synth_model(&a, NULL, 1ull << 30, 0);
    /* the same events, GPU records moved to the end */
    struct synth b = {.gpu_records = 1};
    for (size_t i = 0; i < a.n; i++)
        if (!an_is_gpu(&a.ev[i]))
            synth_push(&b, &a.ev[i]);
    for (size_t i = 0; i < a.n; i++)
        if (an_is_gpu(&a.ev[i]))
            synth_push(&b, &a.ev[i]);
    struct an_model *late = synth_model(&b, NULL, 1ull << 30, 0);
    assert_true(in_order->gpu_timeline && late->gpu_timeline);
    for (int c = 0; c < AN_CAUSE_COUNT; c++)
        assert_int_equal(in_order->total.idle_gpu_ns[c], late->total.idle_gpu_ns[c]);
    assert_true(an_steady_share(late, AN_CAUSE_INPUT) > 0.35);  /* 2 of ~5 ms */
    an_model_free(in_order);
    an_model_free(late);
    synth_free(&a);
    synth_free(&b);
}

/* The GPU records' idle time explained so far, all causes. */
static uint64_t idle_gpu(const struct an_model *m)
{
    uint64_t sum = 0;
    for (int c = 0; c < AN_CAUSE_COUNT; c++)
        sum += m->total.idle_gpu_ns[c];
    return sum;
}

/* The GPU timeline's gaps (gpu_timeline.h) wait, in order, until the host side has been
 * seen past their end; one that ends where the host has been seen, with none before it, is
 * explained at once; the host seen never goes back; closing explains every one. */
static void gpu_gaps_wait_for_the_host(void **state)
{
    (void)state;
    struct an_model *m = an_model_new(NULL, NULL);
    assert_non_null(m);
    struct an_gpu_timeline g = {0};
    const struct an_history *h = &m->state->hist;
    an_gpu_push_gap(&g, m, h, 10 * MS, 12 * MS);
    an_gpu_push_gap(&g, m, h, 20 * MS, 25 * MS);
    assert_int_equal(g.npending, 2);
    assert_int_equal(idle_gpu(m), 0);
    assert_int_equal(an_gpu_oldest_wait(&g, 99 * MS), 10 * MS);
    an_gpu_host_seen(&g, m, h, 15 * MS);
    assert_int_equal(g.npending, 1);
    assert_int_equal(idle_gpu(m), 2 * MS);
    assert_int_equal(an_gpu_oldest_wait(&g, 99 * MS), 20 * MS);
    an_gpu_host_seen(&g, m, h, 5 * MS);
    assert_int_equal(g.host_seen, 15 * MS);
    an_gpu_push_gap(&g, m, h, 30 * MS, 31 * MS);
    an_gpu_host_seen(&g, m, h, 40 * MS);
    assert_int_equal(g.npending, 0);
    assert_int_equal(idle_gpu(m), 8 * MS);
    assert_int_equal(an_gpu_oldest_wait(&g, 99 * MS), 99 * MS);
    an_gpu_push_gap(&g, m, h, 36 * MS, 38 * MS);  /* behind the host: at once */
    assert_int_equal(g.npending, 0);
    assert_int_equal(idle_gpu(m), 10 * MS);
    /* more than the ring's first size (256), then the end of the records */
    for (uint64_t i = 0; i < 300; i++)
        an_gpu_push_gap(&g, m, h, 50 * MS + 2 * i * MS, 51 * MS + 2 * i * MS);
    assert_int_equal(g.npending, 300);
    an_gpu_close(&g, m, h, &m->state->bins);
    assert_int_equal(g.npending, 0);
    assert_int_equal(idle_gpu(m), 310 * MS);
    an_gpu_timeline_free(&g);
    an_model_free(m);
}

/* Host-only: a memset on the legacy stream at start-up that nothing ever syncs does not
 * hide the idle time of the loop's own stream for ever. */
static void host_only_two_streams(void **state)
{
    (void)state;
    struct synth s = {0};
    struct an_ev *e = synth_call(&s, AN_SET, GW_API_cuMemsetD8_v2, 5 * US, 0);
    e->stream = 0;
    struct loop L = {.steps = 20, .input_ns = 2 * MS, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_false(m->gpu_timeline);
    assert_true(an_steady_share(m, AN_CAUSE_INPUT) > 0.3);
    an_model_free(m);
    synth_free(&s);
}

/* A side stream (2) copies each batch in; the default stream (1) waits for the copy with
 * cuStreamWaitEvent, computes, and only stream 1 is synchronized. Its sync proves the side
 * stream done too, when nothing was queued there after the event's record: the input wait
 * after it is idle without the two-drains assumption; with more work queued on the side
 * stream after the record, the same sync proves nothing of it. */
static struct an_model *side_stream_run(int work_after_record)
{
    struct synth s = {0};
    s.now = 1000 * MS;
    for (int step = 0; step < 10; step++) {
        synth_idle(&s, 3 * MS);  /* the DataLoader */
        struct an_ev *e = synth_call(&s, AN_COPY, GW_API_cuMemcpyHtoDAsync_v2, 3 * US,
                                     AN_F_ASYNC_API);
        e->stream = 2, e->dir = GW_COPY_HTOD, e->host_kind = GW_HOST_PINNED, e->bytes = 1 << 20;
        e = synth_call(&s, AN_CALL, GW_API_cuEventRecord, US, 0);
        e->stream = 2, e->key = 0xE1;
        if (work_after_record) {
            e = synth_call(&s, AN_LAUNCH, GW_API_cuLaunchKernel, 5 * US, AN_F_KERNEL);
            e->stream = 2, e->key = 9;
        }
        e = synth_call(&s, AN_CALL, GW_API_cuStreamWaitEvent, US, 0);
        e->stream = 1, e->key = 0xE1;
        e = synth_call(&s, AN_LAUNCH, GW_API_cuLaunchKernel, 5 * US, AN_F_KERNEL);
        e->stream = 1, e->key = 1;
        synth_call(&s, AN_SYNC, GW_API_cuStreamSynchronize, 1 * MS, AN_F_DRAINS)->stream = 1;
    }
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    synth_free(&s);
    return m;
}

static void host_only_stream_wait_event(void **state)
{
    (void)state;
    struct an_model *m = side_stream_run(0);
    assert_int_equal(m->assumed_drains, 0);
    /* nine 3 ms waits between a sync and the next step's copy */
    assert_int_equal(m->total.idle_host_ns[AN_CAUSE_INPUT], 9 * 3 * MS);
    an_model_free(m);
    m = side_stream_run(1);
    /* the side stream's kernel after the record is not proven done by stream 1's sync
     * (and it gets work again before a second drain could assume it): nothing is idle */
    assert_int_equal(m->assumed_drains, 0);
    assert_int_equal(m->total.idle_host_ns[AN_CAUSE_INPUT], 0);
    an_model_free(m);
}

/* A training loop whose GPU records stop half way (torch.profiler took CUPTI's buffers)
 * and then continues: len steps with records, then len steps without. */
static uint64_t loop_with_cut(struct synth *s, unsigned len)
{
    s->gpu_records = 1;
    struct loop L = {.steps = len, .input_ns = 2 * MS, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(s, &L);
    uint64_t gpu_end = s->gpu_end;
    s->gpu_records = 0;
    synth_loop(s, &L);
    s->gpu_records = 1;  /* (the header: CUPTI was active) */
    return gpu_end;
}

/* The end of the last call that issued GPU work. */
static uint64_t last_work_end(const struct synth *s)
{
    uint64_t end = 0;
    for (size_t i = 0; i < s->n; i++)
        if (an_is_host(&s->ev[i]) && an_issues_work(&s->ev[i]) && s->ev[i].end > end)
            end = s->ev[i].end;
    return end;
}

/* GPU records that stop long before the host's work: the records after the cut are
 * missing, not idle; the host evidence is used, as for a host-only trace. */
static void gpu_timeline_cut(void **state)
{
    (void)state;
    struct synth s = {0};
    uint64_t gpu_end = loop_with_cut(&s, 400);
    struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_true(m->gpu_records > 0);
    assert_int_equal(m->gpu_records_end, gpu_end);
    assert_int_equal(m->host_work_end, last_work_end(&s));
    assert_int_equal(m->gpu_cut_ns, last_work_end(&s) - gpu_end);
    assert_true(m->gpu_cut_ns > 1900 * MS);  /* the second half of the run */
    assert_false(m->gpu_timeline);
    /* the host's figures: the GPU computes 3 ms of each ~5 ms step, not half as much */
    assert_true(an_gpu_util(m) > 0.55);
    assert_true(an_steady_share(m, AN_CAUSE_INPUT) > 0.3);
    an_model_free(m);

    /* the same run with every record: not cut, the records' timeline */
    synth_free(&s);
    s.gpu_records = 1;
    struct loop L = {.steps = 800, .input_ns = 2 * MS, .kernels = 3, .kernel_ns = 1 * MS,
                     .launch_ns = 5 * US, .item = 1};
    synth_loop(&s, &L);
    m = synth_model(&s, NULL, 1ull << 30, 0);
    assert_int_equal(m->gpu_cut_ns, 0);
    assert_true(m->gpu_timeline);
    /* (the last .item() returns a little after its copy ends) */
    assert_true(m->host_work_end - m->gpu_records_end < 10 * US);
    an_model_free(m);
    synth_free(&s);
}

/* At gpu_cut_min_ns: records that end 999 ms before one last launch are not cut, 1001 ms
 * are; and the cut must be gpu_cut_share of the run too. */
static void gpu_timeline_cut_thresholds(void **state)
{
    (void)state;
    const uint64_t gaps[] = {999 * MS, 1001 * MS, 1500 * MS};
    for (int i = 0; i < 3; i++) {
        struct synth s = {.gpu_records = 1};
        struct loop L = {.steps = 400, .input_ns = 2 * MS, .kernels = 3,
                         .kernel_ns = 1 * MS, .launch_ns = 5 * US, .item = 1};
        synth_loop(&s, &L);
        uint64_t gpu_end = s.gpu_end;
        s.gpu_records = 0;
        s.now = gpu_end + gaps[i] - 5 * US;
        synth_launch(&s, 5 * US, 1 * MS);  /* ends at gpu_end + gap */
        s.gpu_records = 1;
        struct an_thresholds th = AN_THRESHOLDS_DEFAULT;
        if (i == 2)
            th.gpu_cut_share = 0.5;  /* 1.5 s of a ~3.5 s run is under half */
        struct an_model *m = synth_model(&s, &th, 1ull << 30, 0);
        assert_int_equal(m->gpu_records_end, gpu_end);
        assert_int_equal(m->host_work_end, gpu_end + gaps[i]);
        assert_int_equal(m->gpu_cut_ns, i == 1 ? gaps[i] : 0);
        assert_int_equal(m->gpu_timeline, i != 1);
        an_model_free(m);
        synth_free(&s);
    }
}

/* The longest idle intervals, longest first, whatever order they came in: a loop whose
 * input waits are 1 ms but for steps 10 to 13, 2, 9, 5 and 7 ms (all in the steady state,
 * which the list puts first), host-only and with GPU records. */
static void largest_intervals_longest_first(void **state)
{
    (void)state;
    static const uint64_t waits_ms[] = {2, 9, 5, 7};
    for (int gpu = 0; gpu < 2; gpu++) {
        struct synth s = {.gpu_records = gpu, .cpus = 8};
        s.now = 1000 * MS;
        for (int i = 0; i < 30; i++) {
            synth_idle(&s, (i >= 10 && i < 14 ? waits_ms[i - 10] : 1) * MS);
            synth_launch(&s, 5 * US, 500 * US);
            synth_item(&s);
        }
        struct an_model *m = synth_model(&s, NULL, 1ull << 30, 0);
        assert_true(m->nlargest >= 4);
        uint64_t want[] = {9, 7, 5, 2};
        for (size_t k = 0; k < 4; k++) {
            uint64_t len = m->largest[k].end - m->largest[k].start;
            /* (the wait itself, give or take the launch and copy around it) */
            if (len < want[k] * MS - 20 * US || len > want[k] * MS + 20 * US)
                fail_msg("gpu %d: largest[%zu] %llu ns, want %llu ms", gpu, k,
                         (unsigned long long)len, (unsigned long long)want[k]);
            assert_int_equal(m->largest[k].cause, AN_CAUSE_INPUT);
        }
        an_model_free(m);
        synth_free(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reorder_interleaved_chunks),
        cmocka_unit_test(reorder_late_event),
        cmocka_unit_test(reorder_runs_of_one_source),
        cmocka_unit_test(reorder_cap),
        cmocka_unit_test(reorder_inline_path_same_as_push),
        cmocka_unit_test(feeder_slot_path_same_as_push),
        cmocka_unit_test(ptrmap_put_take),
        cmocka_unit_test(timebins_sum),
        cmocka_unit_test(attribution),
        cmocka_unit_test(steps_and_warmup),
        cmocka_unit_test(nvtx_steps),
        cmocka_unit_test(nvtx_steps_after_long_startup),
        cmocka_unit_test(nvtx_started_steps),
        cmocka_unit_test(found_steps_after_long_startup),
        cmocka_unit_test(found_steps_host_ahead_first),
        cmocka_unit_test(found_steps_that_change_pace),
        cmocka_unit_test(found_steps_stretched_off_cpu),
        cmocka_unit_test(found_steps_in_epochs),
        cmocka_unit_test(trend_is_not_steps),
        cmocka_unit_test(compile_timing_is_no_step),
        cmocka_unit_test(rare_shape_kernel_is_no_step),
        cmocka_unit_test(accumulation_steps_are_the_optimizers),
        cmocka_unit_test(no_pattern),
        cmocka_unit_test(largest_intervals_longest_first),
        cmocka_unit_test(gpu_records_late),
        cmocka_unit_test(gpu_gaps_wait_for_the_host),
        cmocka_unit_test(host_only_two_streams),
        cmocka_unit_test(host_only_stream_wait_event),
        cmocka_unit_test(gpu_timeline_cut),
        cmocka_unit_test(gpu_timeline_cut_thresholds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
