/*
 * Test helper for test_cli.sh: writes a known trace with the shim's encoder.
 *
 *   make_sample_trace OUT.gwt [--damage] [--gpu]
 *   make_sample_trace OUT.gwt --events N [--gpu]
 *
 * Two threads, chunks of at most 4 KiB interleaved, every family the CLI prints. The
 * counts below are what test_cli.sh expects:
 *   tid 100: cuInit, cuGetProcAddress_v2, cuCtxCreate_v4, cuDevicePrimaryCtxRetain,
 *            cuMemGetInfo_v2,
 *            10 cuMemAlloc_v2 (the last fails with CUDA_ERROR_OUT_OF_MEMORY),
 *            1000 cuLaunchKernel (600 forward_300us, 400 backward_600us), 4000 ns each,
 *            500 cuLaunchKernel_ptsz ("optimizer step \"adam\""), 50 cuMemcpyHtoDAsync_v2
 *            (pageable), 50 cuMemcpyDtoH_v2 (pinned), 20 cuStreamSynchronize,
 *            10 cuMemFree_v2, then a LOST record of 7
 *   tid 101: 200 cuLaunchKernelEx (forward_300us), cuCtxSynchronize
 * --damage flips one payload byte of the third chunk written and prints
 * "damaged OFFSET CALLS" (the chunk's offset and the calls it held) on stdout.
 *
 * --gpu adds the GPU timeline of those calls (header: CUPTI active), written by a third
 * thread (tid 102, "the CUPTI drainer") after the host calls and not in time order, with
 * a CORRELATION record (correlation id 1000, 1001... in launch order -> call id) before
 * each GPU record of a launch or copy. G0 = start_ns + 200 us; all on device 0 unless said:
 *   stream 1 (CUPTI id 13): the 1000 cuLaunchKernel kernels back to back from G0
 *       (forward 300 us, backward 600 us): busy [G0, G0 + 420 ms)
 *   stream 2 (CUPTI id 14): the 200 cuLaunchKernelEx kernels (300 us) back to back from
 *       G0 + 50 us (inside stream 1's busy time);
 *       the 500 optimizer kernels, 100 us each, one every 120 us from G0 + 419 ms (the
 *       first nine overlap stream 1's tail)
 *   memcpy HtoD pageable -> device, 4096 bytes in 2048 ns (2 GB/s), stream 1, one every
 *       5 us from G0 + 478.9 ms (the first 16 inside the last optimizer kernel)
 *   memcpy DtoH device -> pinned, 1 MiB in 65536 ns (16 GB/s), the legacy stream (CUPTI id
 *       7, which no STREAM definition names), one every 100 us from G0 + 480 ms
 *   device 1: 10 memsets of 1 MiB in 10 us, one every 20 us from G0 (correlation 0)
 *   one GPU_LOST record of 3
 *   NVTX on tid 100 during its launches: 10 "step" ranges with a nested "forward" range
 *   each (push/pop, default domain), a mark "checkpoint", and a range "load" in domain "io"
 *   started on tid 100 and ended on tid 101.
 * Device 0 is busy 472506432 ns of a 484965536 ns span; device 1 100000 ns of 190000.
 *
 * --events N writes a large synthetic trace instead (for timing the tools): N calls over
 * four threads (80 % launches, 10 % copies, 5 % syncs, 5 % allocs and frees), and with
 * --gpu a GPU record and a correlation for every launch and copy.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_reader_tracewriter.h"

#define CHUNK_LIMIT 4096

struct thread {
    uint32_t tid;
    uint32_t seq;
    uint64_t now;
    struct tw_chunk chunk;
    unsigned calls_in_chunk;
    uint64_t calls;         /* call number of the next call (trace_format.h: call ids) */
};

static FILE *out;
static size_t chunk_limit = CHUNK_LIMIT;
static long chunks_written;
static long damage_offset = -1;
static unsigned damage_calls;

static void flush(struct thread *t)
{
    if (t->chunk.len == 0)
        return;
    long at = tw_write_chunk(out, &t->chunk, t->tid, GW_CHUNK_EVENTS, t->seq++);
    if (++chunks_written == 3) {
        damage_offset = at;
        damage_calls = t->calls_in_chunk;
    }
    tw_begin(&t->chunk, t->now);
    t->calls_in_chunk = 0;
}

/* Returns the call's id. */
static uint64_t call(struct thread *t, unsigned api, uint64_t dur, int result,
                     const uint64_t *words, unsigned n)
{
    if (t->chunk.len + GW_MAX_CALL_RECORD > chunk_limit)
        flush(t);
    t->now += 10000;
    tw_call(&t->chunk, t->now, api, dur, result, words, n);
    t->calls_in_chunk++;
    return (uint64_t)t->tid << 32 | t->calls++;
}

#define MAX_RECORD (2 + 12 * GW_VARINT_MAX)

/* A timed record (GPU, NVTX) at absolute time ts on thread t. */
static void timed(struct thread *t, uint8_t type, uint64_t ts, const uint64_t *words,
                  unsigned n)
{
    if (t->chunk.len + MAX_RECORD > chunk_limit)
        flush(t);
    tw_timed(&t->chunk, type, ts, words, n);
}

static void untimed(struct thread *t, uint8_t type, const uint64_t *words, unsigned n)
{
    if (t->chunk.len + MAX_RECORD > chunk_limit)
        flush(t);
    tw_record(&t->chunk, type, words, n, NULL, 0);
}

/* NVTX on a host thread, 1 ns after its last call. */
static void nvtx(struct thread *t, uint8_t type, uint64_t a, uint64_t b, uint64_t c,
                 unsigned n)
{
    uint64_t w[3] = {a, b, c};
    timed(t, type, t->now + 1, w, n);
}

#define CALL(t, api, dur, ...) call_words(t, api, dur, (uint64_t[]){__VA_ARGS__}, \
                                         sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

static uint64_t call_words(struct thread *t, unsigned api, uint64_t dur, const uint64_t *w,
                           unsigned n)
{
    return call(t, api, dur, 0, w, n);
}

static void defs(int gpu)
{
    struct tw_chunk c = {0};
    tw_begin(&c, 0);
    tw_string(&c, 1, "forward_300us");
    tw_string(&c, 2, "backward_600us");
    tw_string(&c, 3, "optimizer step \"adam\"");
    tw_string(&c, 4, "main");
    tw_string(&c, 5, "NVIDIA Simulated GPU");
    tw_string(&c, 6, "cuLaunchKernel");
    uint64_t shapes[3][10] = {
        {1, 1, 0xA000, 64, 1, 1, 256, 1, 1, 0},
        {2, 2, 0xB000, 128, 1, 1, 128, 1, 1, 4096},
        {3, 3, 0xC000, 1, 1, 1, 32, 1, 1, 0},
    };
    for (int i = 0; i < 3; i++)
        tw_record(&c, GW_REC_SHAPE, shapes[i], 10, NULL, 0);
    uint64_t streams[2][3] = {{1, 0x5000, 13}, {2, 0x6000, 14}};
    for (int i = 0; i < 2; i++)
        tw_record(&c, GW_REC_STREAM, streams[i], gpu ? 3 : 2, NULL, 0);
    if (gpu) {
        tw_string(&c, 7, "step");
        tw_string(&c, 8, "forward");
        tw_string(&c, 9, "io");
        tw_string(&c, 10, "load");
        tw_string(&c, 11, "checkpoint");
        /* GPU shapes: func 0, registers and static shared memory appended */
        uint64_t gpu_shapes[3][12] = {
            {11, 1, 0, 64, 1, 1, 256, 1, 1, 0, 32, 1024},
            {12, 2, 0, 128, 1, 1, 128, 1, 1, 4096, 64, 0},
            {13, 3, 0, 1, 1, 1, 32, 1, 1, 0, 16, 256},
        };
        for (int i = 0; i < 3; i++)
            tw_record(&c, GW_REC_SHAPE, gpu_shapes[i], 12, NULL, 0);
    }
    uint64_t device[4] = {0, 5, 85899345920ull, 84000000000ull};
    tw_record(&c, GW_REC_DEVICE, device, 4, NULL, 0);
    uint64_t thread[2] = {100, 4};
    tw_record(&c, GW_REC_THREAD, thread, 2, NULL, 0);
    uint64_t clock[3] = {1000000000ull, 1700000001000000000ull, 1000000000ull};
    tw_record(&c, GW_REC_CLOCK, clock, 3, NULL, 0);
    tw_write_chunk(out, &c, 0, GW_CHUNK_DEFS, 0);
    chunks_written++;
    tw_free(&c);
}

/* GPU-side records of the sample, by the "drainer" thread d. */
struct launch_links {
    uint64_t fwd_a[1000], fwd_b[200], opt[500], htod[50], dtoh[50];  /* call ids */
};

static uint64_t next_corr = 1000;

static void gpu_op(struct thread *d, uint8_t type, uint64_t call_id, uint64_t start,
                   uint64_t *words, unsigned n)
{
    uint64_t corr = 0;
    if (call_id) {
        corr = next_corr++;
        uint64_t link[2] = {corr, call_id};
        untimed(d, GW_REC_CORRELATION, link, 2);
    }
    words[1] = corr;
    timed(d, type, start, words, n);
}

static void gpu_timeline(struct thread *d, const struct launch_links *l, uint64_t start_ns)
{
    const uint64_t g0 = start_ns + 200000;
    /* stream 1's kernels, with stream 2's forward kernels interleaved as CUPTI might
     * deliver them */
    uint64_t a = g0;
    for (int i = 0; i < 1000; i++) {
        int fwd = i % 5 < 3;
        uint64_t dur = fwd ? 300000 : 600000;
        uint64_t w[6] = {dur, 0, 0, 13, fwd ? 11 : 12, 0};
        gpu_op(d, GW_REC_GPU_KERNEL, l->fwd_a[i], a, w, 6);
        a += dur;
        if (i % 5 == 0) {
            uint64_t k = (uint64_t)i / 5;
            uint64_t wb[6] = {300000, 0, 0, 14, 11, 0};
            gpu_op(d, GW_REC_GPU_KERNEL, l->fwd_b[k], g0 + 50000 + k * 300000, wb, 6);
        }
    }
    for (int k = 0; k < 500; k++) {
        uint64_t w[6] = {100000, 0, 0, 14, 13, 0};
        gpu_op(d, GW_REC_GPU_KERNEL, l->opt[k], g0 + 419000000 + (uint64_t)k * 120000, w, 6);
    }
    for (int k = 0; k < 50; k++) {
        uint64_t w[9] = {2048, 0, 0, 13, 4096, GW_GPU_COPY_HTOD, GW_GPU_MEM_PAGEABLE,
                         GW_GPU_MEM_DEVICE, 0};
        gpu_op(d, GW_REC_GPU_MEMCPY, l->htod[k], g0 + 478900000 + (uint64_t)k * 5000, w, 9);
    }
    for (int k = 0; k < 50; k++) {
        uint64_t w[9] = {65536, 0, 0, 7, 1 << 20, GW_GPU_COPY_DTOH, GW_GPU_MEM_DEVICE,
                         GW_GPU_MEM_PINNED, 0};
        gpu_op(d, GW_REC_GPU_MEMCPY, l->dtoh[k], g0 + 480000000 + (uint64_t)k * 100000, w, 9);
    }
    for (int k = 0; k < 10; k++) {  /* device 1, early: dt goes back */
        uint64_t w[7] = {10000, 0, 1, 21, 1 << 20, GW_GPU_MEM_DEVICE, 0};
        gpu_op(d, GW_REC_GPU_MEMSET, 0, g0 + (uint64_t)k * 20000, w, 7);
    }
    uint64_t lost = 3;
    timed(d, GW_REC_GPU_LOST, g0 + 490000000, &lost, 1);
}

/* --events N: a large synthetic trace. */
static int big_trace(uint64_t n, int gpu)
{
    enum { NT = 4 };
    chunk_limit = 60000;
    struct gw_file_header h = tw_header();
    if (gpu) {
        h.feature_flags |= GW_FEAT_GPU_ACTIVITY;
        h.cupti_status = GW_CUPTI_ACTIVE;
        h.cupti_reason[0] = 0;
    }
    tw_write_header(out, &h);
    defs(gpu);
    struct thread t[NT], d = {.tid = 299, .now = h.start_ns};
    for (int i = 0; i < NT; i++) {
        t[i] = (struct thread){.tid = 200 + (uint32_t)i, .now = h.start_ns + (uint64_t)i};
        tw_begin(&t[i].chunk, t[i].now);
    }
    tw_begin(&d.chunk, d.now);
    uint64_t corr = 1;
    for (uint64_t i = 0; i < n; i++) {
        struct thread *th = &t[i % NT];
        unsigned kind = (unsigned)(i / NT % 20);
        uint64_t id;
        if (kind < 16) {
            uint64_t shape = 1 + i % 3;
            id = CALL(th, GW_API_cuLaunchKernel, 4000, shape, 1 + i % 2);
            if (gpu) {
                uint64_t link[2] = {corr, id};
                untimed(&d, GW_REC_CORRELATION, link, 2);
                uint64_t w[6] = {3000 + i % 7, corr++, 0, 13 + i % 2, 10 + shape, 0};
                timed(&d, GW_REC_GPU_KERNEL, th->now + 5000, w, 6);
            }
        } else if (kind < 18) {
            id = CALL(th, GW_API_cuMemcpyHtoDAsync_v2, 2000, 4096,
                      GW_COPY_HTOD | GW_HOST_PINNED << 4, 1, 0x7F0000000000ull,
                      0x55000000ull + i % 64 * 4096);
            if (gpu) {
                uint64_t link[2] = {corr, id};
                untimed(&d, GW_REC_CORRELATION, link, 2);
                uint64_t w[9] = {1000, corr++, 0, 13, 4096, GW_GPU_COPY_HTOD,
                                 GW_GPU_MEM_PINNED, GW_GPU_MEM_DEVICE, 0};
                timed(&d, GW_REC_GPU_MEMCPY, th->now + 5000, w, 9);
            }
        } else if (kind == 18) {
            CALL(th, GW_API_cuStreamSynchronize, 50000, 1, 0);
        } else if (i / NT % 40 == 19) {
            CALL(th, GW_API_cuMemAlloc_v2, 20000, 0x7F0000000000ull + i * 256, 1 << 20, 0, 0);
        } else {
            CALL(th, GW_API_cuMemFree_v2, 8000, 0x7F0000000000ull + i * 256, 0);
        }
    }
    for (int i = 0; i < NT; i++) {
        flush(&t[i]);
        tw_free(&t[i].chunk);
    }
    flush(&d);
    tw_free(&d.chunk);
    return fclose(out) == 0 ? 0 : 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: make_sample_trace OUT.gwt [--damage] [--gpu]\n"
                    "       make_sample_trace OUT.gwt --events N [--gpu]\n");
    return 2;
}

int main(int argc, char **argv)
{
    int damage = 0, gpu = 0;
    uint64_t events = 0;
    if (argc < 2)
        return usage();
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--damage")) {
            damage = 1;
        } else if (!strcmp(argv[i], "--gpu")) {
            gpu = 1;
        } else if (!strcmp(argv[i], "--events") && i + 1 < argc) {
            char *end;
            events = strtoull(argv[++i], &end, 10);
            if (*end || !events)
                return usage();
        } else {
            return usage();
        }
    }
    if (events && damage)
        return usage();
    out = fopen(argv[1], "w+b");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    if (events)
        return big_trace(events, gpu);
    struct gw_file_header h = tw_header();
    if (gpu) {
        h.feature_flags |= GW_FEAT_GPU_ACTIVITY | GW_FEAT_NVTX;
        h.cupti_status = GW_CUPTI_ACTIVE;
        h.cupti_reason[0] = 0;
    }
    tw_write_header(out, &h);
    defs(gpu);

    static struct launch_links links;
    struct thread a = {.tid = 100, .now = h.start_ns}, b = {.tid = 101, .now = h.start_ns + 5};
    tw_begin(&a.chunk, a.now);
    tw_begin(&b.chunk, b.now);
    call(&a, GW_API_cuInit, 100000, 0, NULL, 0);
    CALL(&a, GW_API_cuGetProcAddress_v2, 900, 6, 12000, 0, GW_PROC_SUBSTITUTED);
    CALL(&a, GW_API_cuCtxCreate_v4, 2000000, 0, 0xC7C7);
    CALL(&a, GW_API_cuDevicePrimaryCtxRetain, 3000, 0, 0xC7C8);
    CALL(&a, GW_API_cuMemGetInfo_v2, 1000, 84000000000ull, 85899345920ull);
    for (int i = 0; i < 10; i++) {
        uint64_t w[4] = {i == 9 ? 0 : 0x7F0000000000ull + (uint64_t)i * 0x200000,
                         i == 9 ? 1ull << 40 : 0x200000, 0, 0};
        call(&a, GW_API_cuMemAlloc_v2, 20000, i == 9 ? 2 : 0, w, 4);
    }
    for (int i = 0; i < 1000; i++) {
        links.fwd_a[i] = CALL(&a, GW_API_cuLaunchKernel, 4000, i % 5 < 3 ? 1 : 2, 1);
        if (gpu) {
            if (i % 100 == 0)
                nvtx(&a, GW_REC_RANGE_PUSH, 0, 7, 0, 2);
            if (i % 100 == 1)
                nvtx(&a, GW_REC_RANGE_PUSH, 0, 8, 0, 2);
            if (i % 100 == 60 || i % 100 == 99)
                nvtx(&a, GW_REC_RANGE_POP, 0, 0, 0, 1);
            if (i == 500)
                nvtx(&a, GW_REC_MARK, 0, 11, 0, 2);
            if (i == 0)
                nvtx(&a, GW_REC_RANGE_START, 9, 10, 1, 3);
        }
        if (i % 5 == 0)  /* 200 times */
            links.fwd_b[i / 5] = CALL(&b, GW_API_cuLaunchKernelEx, 5000, 1, 2);
    }
    call(&b, GW_API_cuCtxSynchronize, 70000, 0, (uint64_t[]){0, 0}, 2);
    if (gpu)
        nvtx(&b, GW_REC_RANGE_END, 1, 0, 0, 1);
    flush(&b);
    for (int i = 0; i < 500; i++)
        links.opt[i] = CALL(&a, GW_API_cuLaunchKernel_ptsz, 3000, 3, 2);
    for (int i = 0; i < 50; i++)
        links.htod[i] = CALL(&a, GW_API_cuMemcpyHtoDAsync_v2, 2000, 4096,
                             GW_COPY_HTOD | GW_HOST_PAGEABLE << 4, 1, 0x7F0000000000ull,
                             0x55000000ull + (uint64_t)i * 4096);
    for (int i = 0; i < 50; i++)
        links.dtoh[i] = CALL(&a, GW_API_cuMemcpyDtoH_v2, 100000, 1 << 20,
                             GW_COPY_DTOH | GW_HOST_PINNED << 4, 0, 0x56000000ull,
                             0x7F0000200000ull);
    for (int i = 0; i < 20; i++)
        CALL(&a, GW_API_cuStreamSynchronize, 50000, 1, 0);
    for (int i = 0; i < 9; i++)
        CALL(&a, GW_API_cuMemFree_v2, 8000, 0x7F0000000000ull + (uint64_t)i * 0x200000, 0);
    CALL(&a, GW_API_cuMemFree_v2, 8000, 0, 0);
    a.now += 10000;
    tw_lost(&a.chunk, a.now, 7);
    flush(&a);
    if (gpu) {
        struct thread d = {.tid = 102, .now = h.start_ns};
        tw_begin(&d.chunk, d.now);
        gpu_timeline(&d, &links, h.start_ns);
        flush(&d);
        tw_free(&d.chunk);
    }

    if (damage) {
        if (damage_offset < 0 || fseek(out, damage_offset + 32 + 5, SEEK_SET) != 0)
            return 1;
        int byte = fgetc(out);
        fseek(out, damage_offset + 32 + 5, SEEK_SET);
        fputc(byte ^ 0x5A, out);
        printf("damaged %ld %u\n", damage_offset, damage_calls);
    }
    tw_free(&a.chunk);
    tw_free(&b.chunk);
    return fclose(out) == 0 ? 0 : 1;
}
