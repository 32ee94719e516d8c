/*
 * Test helper for test_cli.sh: writes a known trace with the shim's encoder.
 *
 *   make_sample_trace OUT.gwt [--damage]
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
};

static FILE *out;
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

static void call(struct thread *t, unsigned api, uint64_t dur, int result,
                 const uint64_t *words, unsigned n)
{
    if (t->chunk.len + GW_MAX_CALL_RECORD > CHUNK_LIMIT)
        flush(t);
    t->now += 10000;
    tw_call(&t->chunk, t->now, api, dur, result, words, n);
    t->calls_in_chunk++;
}

#define CALL(t, api, dur, ...)                                                           \
    do {                                                                                 \
        uint64_t w_[] = {__VA_ARGS__};                                                   \
        call(t, api, dur, 0, w_, sizeof w_ / sizeof w_[0]);                              \
    } while (0)

static void defs(void)
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
    uint64_t streams[2][2] = {{1, 0x5000}, {2, 0x6000}};
    for (int i = 0; i < 2; i++)
        tw_record(&c, GW_REC_STREAM, streams[i], 2, NULL, 0);
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

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--damage"))) {
        fprintf(stderr, "usage: make_sample_trace OUT.gwt [--damage]\n");
        return 2;
    }
    out = fopen(argv[1], "w+b");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    struct gw_file_header h = tw_header();
    tw_write_header(out, &h);
    defs();

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
        CALL(&a, GW_API_cuLaunchKernel, 4000, i % 5 < 3 ? 1 : 2, 1);
        if (i % 5 == 0)  /* 200 times */
            CALL(&b, GW_API_cuLaunchKernelEx, 5000, 1, 2);
    }
    call(&b, GW_API_cuCtxSynchronize, 70000, 0, (uint64_t[]){0, 0}, 2);
    flush(&b);
    for (int i = 0; i < 500; i++)
        CALL(&a, GW_API_cuLaunchKernel_ptsz, 3000, 3, 2);
    for (int i = 0; i < 50; i++)
        CALL(&a, GW_API_cuMemcpyHtoDAsync_v2, 2000, 4096, GW_COPY_HTOD | GW_HOST_PAGEABLE << 4,
             1, 0x7F0000000000ull, 0x55000000ull + (uint64_t)i * 4096);
    for (int i = 0; i < 50; i++)
        CALL(&a, GW_API_cuMemcpyDtoH_v2, 100000, 1 << 20, GW_COPY_DTOH | GW_HOST_PINNED << 4, 0,
             0x56000000ull, 0x7F0000200000ull);
    for (int i = 0; i < 20; i++)
        CALL(&a, GW_API_cuStreamSynchronize, 50000, 1, 0);
    for (int i = 0; i < 9; i++)
        CALL(&a, GW_API_cuMemFree_v2, 8000, 0x7F0000000000ull + (uint64_t)i * 0x200000, 0);
    CALL(&a, GW_API_cuMemFree_v2, 8000, 0, 0);
    a.now += 10000;
    tw_lost(&a.chunk, a.now, 7);
    flush(&a);

    if (argc == 3) {
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
