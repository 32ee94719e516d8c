/* The recorder on its own: what goes in through gw_rec_* comes out of the reader exactly,
 * from one thread or eight, and a full ring drops events only into counted LOST records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "recorder.h"
#include "recorder_internal.h"
#include "trace_reader.h"

static char trace_dir[64];

/* Every byte the recorder (and this test) asks malloc and its kin for: linked with
 * --wrap, so the count is exact on any machine, whatever its speed. */
static uint64_t allocated_bytes;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);

void *__wrap_malloc(size_t n)
{
    __atomic_add_fetch(&allocated_bytes, n, __ATOMIC_RELAXED);
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    __atomic_add_fetch(&allocated_bytes, n * size, __ATOMIC_RELAXED);
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    __atomic_add_fetch(&allocated_bytes, n, __ATOMIC_RELAXED);
    return __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    __atomic_add_fetch(&allocated_bytes, n, __ATOMIC_RELAXED);
    return __real_aligned_alloc(align, n);
}

/* The host's memcpy rate and wake-up latency the next start() is handed
 * (GPUWATCH_HOST_COPY_BPS, GPUWATCH_WAKE_NS; 0: none). */
static unsigned long start_host_copy_bps, start_wake_ns;

static void start(size_t ring_bytes, unsigned flush_ms)
{
    struct gw_config cfg = {0};
    cfg.host_copy_bps = start_host_copy_bps;
    cfg.wake_ns = start_wake_ns;
    snprintf(trace_dir, sizeof trace_dir, "/tmp/gw-rec-XXXXXX");
    assert_non_null(mkdtemp(trace_dir));
    snprintf(cfg.output_dir, sizeof cfg.output_dir, "%s", trace_dir);
    cfg.flush_ms = flush_ms;
    cfg.thread_buffer_bytes = ring_bytes;
    assert_int_equal(gw_recorder_start(&cfg), 0);
}

static struct gw_reader *open_trace(void)
{
    struct gw_reader *reader;
    char err[512];
    int rc = gw_reader_open(gw_recorder_path(), &reader, err, sizeof err);
    if (rc != 0)
        fail_msg("%s", err);
    gw_reader_load_defs(reader);
    return reader;
}

static void cleanup(void)
{
    unlink(gw_recorder_path());
    rmdir(trace_dir);
}

static void test_round_trip_every_family(void **state)
{
    (void)state;
    start(1 << 20, 10);
    uint64_t stream = gw_rec_stream(0x7f00aa, 17);
    uint64_t name = gw_rec_string("gemm_kernel");
    assert_int_equal(gw_rec_string("gemm_kernel"), name); /* interned once */
    const uint32_t dims[6] = {128, 2, 1, 256, 1, 1};
    uint64_t shape = gw_rec_shape(0xF00D, name, dims, 4096, 0, 0);
    assert_int_equal(gw_rec_shape(0xF00D, name, dims, 4096, 0, 0), shape);

    uint64_t alloc[4] = {0x7f0000001000, 1 << 20, 0, 0};
    uint64_t launch[2] = {shape, stream};
    uint64_t copy[5] = {4096, GW_COPY_HTOD | GW_HOST_PAGEABLE << 4, stream, 0x7f0000001000, 0x55};
    uint64_t oom[4] = {0, 1ull << 40, 0, 0};
    gw_rec_call(GW_API_cuMemAlloc_v2, 1000000, 1000500, 0, alloc, 4);
    gw_rec_call(GW_API_cuLaunchKernel_ptsz, 1002000, 1002300, 0, launch, 2);
    gw_rec_call(GW_API_cuMemcpyHtoDAsync_v2, 1001000, 1009000, 0, copy, 5); /* earlier start */
    gw_rec_call(GW_API_cuMemAlloc_v2, 2000000, 2000100, 2, oom, 4);
    gw_recorder_stop();

    struct gw_reader *reader = open_trace();
    struct gw_event ev;
    unsigned calls = 0;
    while (gw_reader_next(reader, &ev) > 0) {
        if (ev.kind != GW_EV_CALL)
            continue;
        switch (calls++) {
        case 0:
            assert_int_equal(ev.api_id, GW_API_cuMemAlloc_v2);
            assert_int_equal(ev.ts_ns, 1000000);
            assert_int_equal(ev.dur_ns, 500);
            assert_true(ev.u.alloc.ptr == 0x7f0000001000);
            assert_int_equal(ev.u.alloc.bytes, 1 << 20);
            break;
        case 1:
            assert_int_equal(ev.api_id, GW_API_cuLaunchKernel_ptsz);
            assert_int_equal(ev.ts_ns, 1002000);
            assert_int_equal(ev.u.launch.shape_id, shape);
            assert_string_equal(gw_reader_kernel_name(reader, shape), "gemm_kernel");
            assert_int_equal(gw_reader_shape(reader, shape)->grid[0], 128);
            assert_int_equal(gw_reader_shape(reader, shape)->shared_mem, 4096);
            uint64_t handle;
            assert_int_equal(gw_reader_stream_handle(reader, ev.u.launch.stream_id, &handle), 0);
            assert_int_equal(handle, 0x7f00aa);
            break;
        case 2:
            assert_int_equal(ev.ts_ns, 1001000); /* negative dt survives */
            assert_int_equal(ev.dur_ns, 8000);
            assert_int_equal(ev.u.copy.dir, GW_COPY_HTOD);
            assert_int_equal(ev.u.copy.host_kind, GW_HOST_PAGEABLE);
            assert_int_equal(ev.u.copy.bytes, 4096);
            break;
        case 3:
            assert_int_equal(ev.result, 2);
            assert_true(ev.u.alloc.bytes == 1ull << 40);
            break;
        }
    }
    assert_int_equal(calls, 4);
    assert_int_equal(gw_reader_stats(reader)->damage_reports, 0);
    gw_reader_close(reader);
    cleanup();
}

#define THREADS 8
#define PER_THREAD 10000

static void *emit_many(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg * 1000000000ull;
    for (uint64_t i = 0; i < PER_THREAD; i++) {
        uint64_t words[2] = {1, 0};
        gw_rec_call(GW_API_cuLaunchKernel, base + i * 1000, base + i * 1000 + 200, 0, words, 2);
    }
    return NULL;
}

static void test_eight_threads_no_loss(void **state)
{
    (void)state;
    start(1 << 20, 10);
    pthread_t ids[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&ids[i], NULL, emit_many, (void *)(i + 1));
    for (int i = 0; i < THREADS; i++)
        pthread_join(ids[i], NULL);
    gw_recorder_stop();
    struct gw_recorder_stats stats;
    memset(&stats, 0xff, sizeof stats);
    gw_recorder_get_stats(&stats);
    assert_int_equal(stats.lost, 0);
    /* the records committed, which the sampled timeline's rate reads: every call */
    assert_int_equal(stats.events, (uint64_t)THREADS * PER_THREAD);

    struct gw_reader *reader = open_trace();
    struct gw_event ev;
    uint64_t per_tid_last[THREADS] = {0};
    uint32_t tids[THREADS] = {0};
    unsigned launches = 0;
    while (gw_reader_next(reader, &ev) > 0) {
        if (ev.kind != GW_EV_CALL)
            continue;
        launches++;
        /* Each thread's timestamps come back exactly, in its own order. */
        for (int i = 0; i < THREADS; i++) {
            if (tids[i] == 0)
                tids[i] = ev.tid;
            if (tids[i] == ev.tid) {
                assert_true(ev.ts_ns > per_tid_last[i]);
                assert_int_equal(ev.ts_ns % 1000, 0);
                per_tid_last[i] = ev.ts_ns;
                break;
            }
        }
    }
    assert_int_equal(launches, THREADS * PER_THREAD);
    assert_int_equal(gw_reader_stats(reader)->lost_events, 0);
    assert_int_equal(gw_reader_stats(reader)->damage_reports, 0);
    gw_reader_close(reader);
    cleanup();
}

static const uint64_t launch_words[2] = {1, 0};

/* A launch, then `burst` rounds of emit(i) with the writer held out so that the 64 KiB ring
 * overflows, then, once the writer drained it, a launch at 900000 ns unless `then_stop`;
 * stops the recorder and returns its stats. */
static struct gw_recorder_stats overflow_ring_then(void (*emit)(uint64_t i), uint64_t burst,
                                                   int then_stop)
{
    start(64 * 1024, 1000);
    gw_rec_call(GW_API_cuLaunchKernel, 4000, 4001, 0, launch_words, 2); /* registers it */
    pthread_mutex_lock(&gw_rec.rings_lock);
    for (uint64_t i = 0; i < burst; i++)
        emit(i);
    pthread_mutex_unlock(&gw_rec.rings_lock);
    /* the writer has drained the ring once the round this asks for is done (the timeout
     * only bounds a hang: it is a minute, not a guess at the writer's speed) */
    gw_recorder_flush_now(60000);
    assert_int_equal(__atomic_load_n(&gw_rec.rings->tail, __ATOMIC_ACQUIRE),
                     __atomic_load_n(&gw_rec.rings->slot->head, __ATOMIC_ACQUIRE));
    if (!then_stop)
        gw_rec_call(GW_API_cuLaunchKernel, 900000, 900001, 0, launch_words, 2);
    struct gw_recorder_stats rec;
    gw_recorder_get_stats(&rec);
    gw_recorder_stop();
    return rec;
}

static struct gw_recorder_stats overflow_ring(void (*emit)(uint64_t i), uint64_t burst)
{
    return overflow_ring_then(emit, burst, 0);
}

static void emit_launch(uint64_t i)
{
    gw_rec_call(GW_API_cuLaunchKernel, 5000 + i, 5000 + i + 1, 0, launch_words, 2);
}

/* Drops that no record followed: the ring overflowed, the writer drained it, and the thread
 * made no call before the stop. The LOST record is written by the stop's last drain, once,
 * at the time of the last record kept, and the reader counts every dropped call. */
static void test_drops_pending_at_stop_reach_the_trace(void **state)
{
    (void)state;
    const uint64_t burst = 20000;
    struct gw_recorder_stats rec = overflow_ring_then(emit_launch, burst, 1);

    struct gw_reader *reader = open_trace();
    struct gw_event ev;
    uint64_t read = 0, lost_records = 0, lost_calls = 0, last_call_ts = 0;
    while (gw_reader_next(reader, &ev) > 0) {
        if (ev.kind == GW_EV_CALL) {
            read++;
            last_call_ts = ev.ts_ns;
        }
        if (ev.kind == GW_EV_LOST) {
            lost_records++;
            lost_calls += ev.u.lost.calls;
            assert_int_equal(ev.u.lost.calls, ev.u.lost.count);
            assert_int_equal(ev.ts_ns, last_call_ts);  /* after the last call kept */
        }
    }
    const struct gw_reader_stats *stats = gw_reader_stats(reader);
    assert_true(rec.lost > 0);
    assert_int_equal(lost_records, 1);
    assert_int_equal(lost_calls, rec.lost);
    assert_int_equal(stats->lost_events, rec.lost);
    assert_int_equal(read + stats->lost_events, burst + 1);
    assert_int_equal(stats->damage_reports, 0);
    gw_reader_close(reader);
    cleanup();
}

/* The call observer (call_sites.c's Python stacks) is told of the calls it asked for and
 * of no other: after a stretch of GW_PY_STRETCH_NS without calls, the gap measured from the
 * previous call's end; after a wait (gw_rec_wait), with the gap from before it; and every
 * call of an api it named. One compare in the call path decides all three. */
struct told { unsigned api; int waited; uint64_t gap; };
static struct told told[16];
static unsigned ntold;

static void observe(unsigned api_id, uint64_t start_ns, uint64_t end_ns, int result, int waited,
                    uint64_t gap_ns, uint64_t call_number)
{
    (void)start_ns, (void)end_ns, (void)result, (void)call_number;
    if (ntold < 16)
        told[ntold++] = (struct told){api_id, waited, gap_ns};
}

static void test_observer_told_of_stretches_waits_and_named_apis(void **state)
{
    (void)state;
    start(1u << 16, 50);
    uint8_t apis[GW_API_ID_LIMIT] = {0};
    apis[GW_API_cuMemAlloc_v2] = 1;
    gw_rec_set_call_observer(observe, apis);
    ntold = 0;
    const uint64_t ms = 1000000, words[2] = {1, 2};
    uint64_t t = 10 * GW_PY_STRETCH_NS;
    gw_rec_call(GW_API_cuLaunchKernel, t, t + 10, 0, words, 2);          /* first: none */
    t += 20;
    gw_rec_call(GW_API_cuLaunchKernel, t, t + 10, 0, words, 2);          /* 10 ns gap */
    t += 10 + GW_PY_STRETCH_NS - 1;
    gw_rec_call(GW_API_cuLaunchKernel, t, t + 10, 0, words, 2);          /* 1 ns short */
    t += 10 + 3 * ms;
    gw_rec_call(GW_API_cuLaunchKernel, t, t + 10, 0, words, 2);          /* told: 3 ms */
    t += 20;
    gw_rec_wait(500, 400);
    gw_rec_call(GW_API_cuStreamSynchronize, t, t + 500, 0, words, 1);    /* told: waited */
    t += 510;
    gw_rec_call(GW_API_cuLaunchKernel, t, t + 10, 0, words, 2);          /* none */
    t += 20;
    gw_rec_call(GW_API_cuMemAlloc_v2, t, t + 10, 0, words, 2);           /* told: named */
    t += 20;
    gw_rec_call(GW_API_cuMemAlloc_v2, t, t + 10, 0, words, 2);           /* told: named */
    t += 20;
    gw_rec_wait(2 * ms, 0);
    t += 2 * ms;  /* (a wait 2 ms long, begun 10 ns after the last call: no stretch) */
    gw_rec_call(GW_API_cuCtxSynchronize, t - 2 * ms, t, 0, words, 0);    /* told: waited */
    t += 10;
    gw_rec_call(GW_API_cuLaunchKernel, t, t + 10, 0, words, 2);          /* none */
    gw_rec_set_call_observer(NULL, NULL);
    gw_recorder_stop();
    assert_int_equal(ntold, 5);
    assert_int_equal(told[0].api, GW_API_cuLaunchKernel);
    assert_int_equal(told[0].waited, 0);
    assert_int_equal(told[0].gap, 3 * ms);
    assert_int_equal(told[1].api, GW_API_cuStreamSynchronize);
    assert_int_equal(told[1].waited, 1);
    assert_int_equal(told[1].gap, 10);  /* from the end of the call before the wait */
    assert_int_equal(told[2].api, GW_API_cuMemAlloc_v2);
    assert_int_equal(told[3].api, GW_API_cuMemAlloc_v2);
    assert_int_equal(told[2].waited + told[3].waited, 0);
    assert_int_equal(told[4].api, GW_API_cuCtxSynchronize);
    assert_int_equal(told[4].waited, 1);
    assert_int_equal(told[4].gap, 10);
    cleanup();
}

static void test_full_ring_counts_every_drop(void **state)
{
    (void)state;
    /* 20000 launches of ~9 bytes cannot fit in 64 KiB */
    const uint64_t burst = 20000;
    struct gw_recorder_stats rec = overflow_ring(emit_launch, burst);

    struct gw_reader *reader = open_trace();
    struct gw_event ev;
    uint64_t read = 0, lost_records = 0, lost_calls = 0;
    uint64_t first_id = 0, prev_id = 0, last_id = 0;
    int jumps = 0;
    while (gw_reader_next(reader, &ev) > 0) {
        if (ev.kind == GW_EV_CALL) {
            /* call ids number every call, dropped ones too: a GPU record's correlation
             * names the right call after a drop */
            if (!read)
                first_id = ev.call_id;
            else if (ev.call_id != prev_id + 1) {
                jumps++;
                assert_int_equal(ev.call_id, prev_id + 1 + lost_calls);
            }
            assert_int_equal(ev.call_id_unsure, 0);
            prev_id = last_id = ev.call_id;
            read++;
        }
        if (ev.kind == GW_EV_LOST) {
            lost_records++;
            lost_calls += ev.u.lost.calls;
            assert_int_equal(ev.u.lost.calls, ev.u.lost.count);  /* only calls were dropped */
            assert_int_equal(ev.ts_ns, 900000); /* reported where tracing resumed */
        }
    }
    const struct gw_reader_stats *stats = gw_reader_stats(reader);
    assert_true(rec.lost > 0);
    assert_int_equal(lost_records, 1);
    assert_int_equal(lost_calls, rec.lost);
    assert_int_equal(jumps, 1);
    assert_int_equal(last_id - first_id, burst + 1);  /* burst + 2 calls, numbered in a row */
    assert_int_equal(first_id >> 32, last_id >> 32);  /* one thread */
    assert_int_equal(stats->lost_events, rec.lost);
    assert_int_equal(read + stats->lost_events, burst + 2);
    assert_int_equal(stats->damage_reports, 0);
    gw_reader_close(reader);
    cleanup();
}

/* A burst of calls and NVTX marks, one after the other, overflows the ring: the LOST record
 * counts the dropped records and, apart, the dropped calls, and the call ids after the drop
 * skip exactly the dropped calls (a mark counted as a call would shift every GPU record's
 * link after it). */
static void emit_launch_and_mark(uint64_t i)
{
    static const uint64_t mark_words[2] = {0, 7};
    emit_launch(2 * i);
    gw_rec_timed(GW_REC_MARK, 5000 + 2 * i + 1, mark_words, 2);
}

static void test_full_ring_counts_calls_apart(void **state)
{
    (void)state;
    const uint64_t pairs = 12000;
    struct gw_recorder_stats rec = overflow_ring(emit_launch_and_mark, pairs);

    struct gw_reader *reader = open_trace();
    struct gw_event ev;
    uint64_t calls = 0, marks = 0, lost = 0, lost_calls = 0, prev_id = 0;
    while (gw_reader_next(reader, &ev) > 0) {
        if (ev.kind == GW_EV_CALL) {
            if (calls && ev.call_id != prev_id + 1)
                assert_int_equal(ev.call_id, prev_id + 1 + lost_calls);
            prev_id = ev.call_id;
            calls++;
        }
        marks += ev.kind == GW_EV_MARK;
        if (ev.kind == GW_EV_LOST) {
            lost += ev.u.lost.count;
            lost_calls += ev.u.lost.calls;
        }
    }
    assert_true(rec.lost > 0);
    assert_int_equal(lost, rec.lost);
    assert_int_equal(calls + lost_calls, pairs + 2);
    assert_int_equal(marks + (lost - lost_calls), pairs);
    assert_true(lost_calls > 0 && lost_calls < lost);
    gw_reader_close(reader);
    cleanup();
}

/* GPU records that name their calls, in several chunks (a drain between them): each reads
 * back linked to its own call, whatever chunk it is in, and needs no CORRELATION record. */
static void test_gpu_links_across_chunks(void **state)
{
    (void)state;
    start(1 << 20, 1000);
    uint64_t launch[2] = {0, 0};
    uint64_t calls[12];
    for (int i = 0; i < 12; i++) {
        calls[i] = gw_rec_next_call_id();
        gw_rec_call(GW_API_cuLaunchKernel, 1000000 + 1000 * (uint64_t)i, 1000100 + 1000 * (uint64_t)i,
                    0, launch, 2);
    }
    /* in an order of their own (as CUPTI delivers them), one unlinked, a drain after every
     * third: four chunks; every other record all one-byte words (its `call` word within
     * its first eight bytes), the others longer */
    const int order[12] = {0, 2, 1, 5, 4, 3, 6, 7, 11, 10, 9, 8};
    for (int k = 0; k < 12; k++) {
        int i = order[k];
        uint64_t words[6] = {i % 2 ? 1 : 500, 100 + (uint64_t)i, 0, 3, 0, 0};
        gw_rec_gpu(GW_REC_GPU_KERNEL, i % 2 ? 2000000 : 2000000 + 70000 * (uint64_t)i, words, 6,
                   i == 7 ? 0 : calls[i]);
        if (k % 3 == 2)
            gw_writer_drain_all();
    }
    gw_recorder_stop();

    struct gw_reader *reader = open_trace();
    struct gw_event ev;
    uint64_t linked_to = 0;
    unsigned links = 0, kernels = 0, unlinked = 0;
    while (gw_reader_next(reader, &ev) > 0) {
        if (ev.kind == GW_EV_CORRELATION) {
            linked_to = ev.u.correlation.call_id;
            links++;
        } else if (ev.kind == GW_EV_GPU_KERNEL) {
            int i = (int)(ev.u.gpu_kernel.correlation_id - 100);
            assert_in_range(i, 0, 11);
            if (i == 7) {
                unlinked++;
            } else {
                assert_int_equal(linked_to, calls[i]);  /* the event just before named it */
            }
            linked_to = 0;
            kernels++;
        }
    }
    assert_int_equal(kernels, 12);
    assert_int_equal(links, 11);
    assert_int_equal(unlinked, 1);
    assert_int_equal(gw_reader_stats(reader)->links_unreadable, 0);
    assert_true(gw_reader_stats(reader)->chunks >= 4);
    gw_reader_close(reader);
    cleanup();
}

/* Timed records that are not GPU records keep their words as given (only a GPU record's
 * correlation id is written relative to the previous one's), and a timed record of more
 * words than the recorder holds (GW_MAX_WORDS_RECORD, with its dt and a GPU record's link)
 * is refused whole, never cut or written past its buffer. */
static void test_timed_words_and_their_limit(void **state)
{
    (void)state;
    start_host_copy_bps = 9876543210ul;
    start_wake_ns = 73456;
    start(1 << 20, 10);
    start_host_copy_bps = start_wake_ns = 0;
    gw_rec_timed(GW_REC_RANGE_PUSH, 7000, (const uint64_t[]){3, 41}, 2);
    gw_rec_timed(GW_REC_CPU_PROC, 7100, (const uint64_t[]){900, 2, 800, 1}, 4);
    uint64_t many[15] = {0};
    gw_rec_timed(GW_REC_CPU_PROC, 7200, many, 15);
    gw_rec_gpu(GW_REC_GPU_KERNEL, 7300, many, 15, gw_rec_next_call_id());
    gw_rec_timed(GW_REC_RANGE_POP, 7400, (const uint64_t[]){3}, 1);
    gw_recorder_stop();

    struct gw_reader *reader = open_trace();
    struct gw_event ev;
    int push = 0, procs = 0, pops = 0, others = 0, host_copy = 0;
    while (gw_reader_next(reader, &ev) > 0) {
        if (ev.kind == GW_EV_HOST_COPY) {
            /* the rate the launcher measured, passed through once as it was given: the
             * shim times nothing of the machine itself */
            host_copy++;
            assert_int_equal(ev.u.host_copy.bytes_per_s, 9876543210ull);
            assert_int_equal(ev.u.host_copy.wake_ns, 73456);
        } else if (ev.kind == GW_EV_RANGE_PUSH) {
            push++;
            assert_int_equal(ev.ts_ns, 7000);
            assert_int_equal(ev.u.nvtx.domain_id, 3);
            assert_int_equal(ev.u.nvtx.name_id, 41);
        } else if (ev.kind == GW_EV_CPU_PROC) {
            procs++;
            assert_int_equal(ev.ts_ns, 7100);
            assert_int_equal(ev.u.cpu_proc.process_cpu_ns, 900);
            assert_int_equal(ev.u.cpu_proc.descendants, 2);
            assert_int_equal(ev.u.cpu_proc.descendants_cpu_ns, 800);
            assert_int_equal(ev.u.cpu_proc.active, 1);
        } else if (ev.kind == GW_EV_RANGE_POP) {
            pops++;
            assert_int_equal(ev.ts_ns, 7400);
        } else if (ev.kind != GW_EV_THREAD && ev.kind != GW_EV_STRING &&
                   ev.kind != GW_EV_CLOCK) {
            others++;
        }
    }
    assert_int_equal(push, 1);
    assert_int_equal(procs, 1);  /* the 15-word one refused */
    assert_int_equal(pops, 1);
    assert_int_equal(others, 0);  /* nor the 15-word GPU record */
    assert_int_equal(host_copy, 1);
    assert_int_equal(gw_reader_wake_ns(reader), 73456);
    assert_int_equal(gw_reader_host_copy_bps(reader), 9876543210ull);
    assert_int_equal(gw_reader_stats(reader)->damage_reports, 0);
    gw_reader_close(reader);
    cleanup();
}

/* The writer does nothing heavy in the traced process, by count, not by time: from the
 * recorder's start through 40 of its rounds over one thread's 1000 calls, the recorder asks
 * for at most its ring's size twice (the ring itself where the rings file cannot hold it,
 * and the writer's staging) and 64 KiB besides (definitions, the ring's bookkeeping, each
 * round's snapshot of the rings). A benchmark buffer, a copy of the ring per round or a
 * growing table fails it on any machine (the memcpy-rate timing the writer once did asked
 * for 8 MiB). */
static void test_writer_does_no_heavy_work(void **state)
{
    (void)state;
    const size_t ring = 64 * 1024;
    uint64_t before = __atomic_load_n(&allocated_bytes, __ATOMIC_RELAXED);
    start(ring, 1000);
    for (uint64_t i = 0; i < 1000; i++)
        gw_rec_call(GW_API_cuLaunchKernel, 1000 + 10 * i, 1005 + 10 * i, 0, launch_words, 2);
    for (int round = 0; round < 40; round++)
        gw_recorder_flush_now(60000);  /* one round each, acknowledged */
    uint64_t used = __atomic_load_n(&allocated_bytes, __ATOMIC_RELAXED) - before;
    gw_recorder_stop();
    fprintf(stderr, "the recorder asked for %" PRIu64 " bytes over 40 rounds\n", used);
    assert_true(used <= 2 * ring + 64 * 1024);

    /* its own account of it (SHIM_STATS): every round counted once, by lateness too: the
     * 40 asked for, and the stop's (the interval is a second: others are rare) */
    struct gw_reader *reader = open_trace();
    struct gw_event ev;
    uint64_t calls = 0;
    while (gw_reader_next(reader, &ev) > 0)
        calls += ev.kind == GW_EV_CALL;
    const struct gw_shim_stats *shim = &gw_reader_stats(reader)->shim;
    uint64_t bucketed = 0;
    for (unsigned b = 0; b < GW_LATE_BUCKETS; b++)
        bucketed += shim->late_rounds[b];
    assert_int_equal(calls, 1000);
    assert_true(shim->rounds >= 41);
    assert_int_equal(bucketed, shim->rounds);
    assert_int_equal(shim->flush_ns, 1000000000ull);
    assert_true(shim->cpu_ns > 0);
    assert_true(gw_shim_late_quantile_ns(shim, 0.99) <= shim->late_max_ns);
    gw_reader_close(reader);
    cleanup();
}

/* The lateness buckets: a quarter of a doubling each, a value in the bucket whose upper end
 * is above it and whose lower end (the previous bucket's upper end) is not. */
static void test_late_buckets(void **state)
{
    (void)state;
    assert_int_equal(gw_late_bucket(0), 0);
    assert_int_equal(gw_late_bucket(999), 0);
    assert_int_equal(gw_late_bucket(1000), 1);          /* [1, 1.25) us */
    assert_int_equal(gw_late_bucket_upper_ns(1), 1250);
    assert_int_equal(gw_late_bucket(3000), 7);          /* [3, 3.5) us: 2^1, f 2 */
    assert_int_equal(gw_late_bucket_upper_ns(7), 3500);
    for (uint64_t ns = 1000; ns < 60000000000ull; ns = ns * 7 / 5 + 1) {
        unsigned b = gw_late_bucket(ns);
        assert_true(ns < gw_late_bucket_upper_ns(b) + 1000);  /* (us resolution) */
        assert_true(ns >= gw_late_bucket_upper_ns(b - 1) - 1000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_family),
        cmocka_unit_test(test_eight_threads_no_loss),
        cmocka_unit_test(test_drops_pending_at_stop_reach_the_trace),
        cmocka_unit_test(test_writer_does_no_heavy_work),
        cmocka_unit_test(test_late_buckets),
        cmocka_unit_test(test_observer_told_of_stretches_waits_and_named_apis),
        cmocka_unit_test(test_full_ring_counts_every_drop),
        cmocka_unit_test(test_full_ring_counts_calls_apart),
        cmocka_unit_test(test_gpu_links_across_chunks),
        cmocka_unit_test(test_timed_words_and_their_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
