/*
 * Writes small, deterministic traces for the analyzer's golden tests, with the shim's own
 * encoder (test_reader_tracewriter.h): a training loop whose every step waits 4 ms for its
 * input and then reads the loss back with a blocking copy.
 *
 *   make_analyze_trace OUT.gwt [--gpu] [--damage] [--rank R] [--leak] [--cpus N]
 *                              [--input-us U] [--comm] [--comm-wait-us W]
 *
 *   --gpu     CUPTI records too (kernels, copies), written by another thread at the end
 *             of the file as the shim's CUPTI thread does
 *   --damage  flips a byte in the payload of the third chunk (a CRC mismatch)
 *   --rank R  the header's rank (several processes of one run)
 *   --leak    keeps 8 MiB more device memory every step
 *   --cpus N  the header records N CPUs usable (of 2N online), as the shim does
 *   --input-us U  each step waits U us for its input (default 4000): a shorter wait is the
 *             same program with its input pipeline fixed (gpuwatch diff's golden test)
 *   --comm    an all-reduce each step (an NCCL kernel, 1.5 ms on a stream of its own) that
 *             starts 1 ms into the 2 ms backward kernel: 1 ms beside compute, 0.5 ms exposed
 *   --comm-wait-us W  the all-reduce lasts W us longer: this rank waits in it for a slower
 *             one (a straggler's ranks: W = the straggler's extra input time)
 *   --host NAME --boot-ns D --clock-error-ns E  written on another host: its monotonic
 *             clock (the trace's) reads D later than samplehost's at the same instant, and
 *             its wall clock E ahead of true time (what aligning on collectives corrects)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_reader_tracewriter.h"

#define CHUNK_LIMIT 512
#define MS 1000000ull
#define US 1000ull
#define STEPS 24
#define MAIN_TID 100
#define CUPTI_TID 101

struct writer {
    FILE *out;
    uint32_t tid, seq;
    uint64_t now;
    struct tw_chunk chunk;
};

static long chunks_written;
static long damage_chunk = -1;

static void flush(struct writer *w)
{
    if (!w->chunk.len)
        return;
    long at = tw_write_chunk(w->out, &w->chunk, w->tid, GW_CHUNK_EVENTS, w->seq++);
    if (++chunks_written == 3)
        damage_chunk = at;
    tw_begin(&w->chunk, w->now);
}

static void call(struct writer *w, unsigned api, uint64_t dur, const uint64_t *words,
                 unsigned n)
{
    if (w->chunk.len + GW_MAX_CALL_RECORD > CHUNK_LIMIT)
        flush(w);
    tw_call(&w->chunk, w->now, api, dur, 0, words, n);
    w->now += dur;
}

static void gpu(struct writer *g, uint8_t type, uint64_t start, const uint64_t *words,
                unsigned n)
{
    if (g->chunk.len + 64 > CHUNK_LIMIT)
        flush(g);
    tw_timed(&g->chunk, type, start, words, n);
}

int main(int argc, char **argv)
{
    int with_gpu = 0, damage = 0, leak = 0, rank = -1, cpus = 0;
    uint64_t input_ns = 4 * MS;
    int comm = 0;
    uint64_t comm_wait_ns = 0;
    const char *path = NULL, *host = NULL;
    int64_t boot_ns = 0, clock_error_ns = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gpu"))
            with_gpu = 1;
        else if (!strcmp(argv[i], "--damage"))
            damage = 1;
        else if (!strcmp(argv[i], "--leak"))
            leak = 1;
        else if (!strcmp(argv[i], "--rank") && i + 1 < argc)
            rank = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpus") && i + 1 < argc)
            cpus = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--comm"))
            comm = 1;
        else if (!strcmp(argv[i], "--comm-wait-us") && i + 1 < argc)
            comm_wait_ns = (uint64_t)atoll(argv[++i]) * US;
        else if (!strcmp(argv[i], "--host") && i + 1 < argc)
            host = argv[++i];
        else if (!strcmp(argv[i], "--boot-ns") && i + 1 < argc)
            boot_ns = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--clock-error-ns") && i + 1 < argc)
            clock_error_ns = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--input-us") && i + 1 < argc)
            input_ns = (uint64_t)atoll(argv[++i]) * US;
        else if (!path)
            path = argv[i];
        else
            path = NULL, i = argc;
    }
    if (!path) {
        fprintf(stderr, "usage: make_analyze_trace OUT.gwt [--gpu] [--damage] [--rank R] "
                        "[--leak] [--cpus N] [--input-us U] [--comm] [--comm-wait-us W] "
                        "[--host NAME --boot-ns D --clock-error-ns E]\n");
        return 2;
    }
    FILE *out = fopen(path, "w+b");
    if (!out) {
        perror(path);
        return 1;
    }
    struct gw_file_header h = tw_header();
    h.device_total_mem = 16ull << 30;
    h.device_free_at_start = 16ull << 30;
    h.pid = 4242 + (uint32_t)(rank > 0 ? rank : 0);
    h.rank = h.local_rank = rank;
    h.world_size = rank >= 0 ? 2 : -1;
    if (host) {
        snprintf(h.hostname, sizeof h.hostname, "%s", host);
        h.start_ns += (uint64_t)boot_ns;
        h.realtime_minus_trace_ns += clock_error_ns - boot_ns;
    }
    if (cpus > 0) {  /* as the shim records them: all online, these usable */
        h.feature_flags |= GW_FEAT_CPU_COUNT;
        h.cpus_online = 2 * (uint32_t)cpus;
        h.cpus_usable = (uint32_t)cpus;
    }
    if (with_gpu) {
        h.feature_flags |= GW_FEAT_GPU_ACTIVITY;
        h.cupti_status = GW_CUPTI_ACTIVE;
        snprintf(h.cupti_reason, sizeof h.cupti_reason, "CUPTI 13.0");
    }
    tw_write_header(out, &h);

    struct tw_chunk defs = {0};
    tw_begin(&defs, 0);
    tw_string(&defs, 1, "forward_1ms");
    tw_string(&defs, 2, "backward_2ms");
    if (comm)
        tw_string(&defs, 3, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    uint64_t shapes[3][10] = {{1, 1, 0xA000, 64, 1, 1, 256, 1, 1, 0},
                              {2, 2, 0xB000, 64, 1, 1, 256, 1, 1, 0},
                              {3, 3, 0xC000, 32, 1, 1, 512, 1, 1, 0}};
    for (int i = 0; i < 2 + comm; i++)
        tw_record(&defs, GW_REC_SHAPE, shapes[i], 10, NULL, 0);
    uint64_t stream[3] = {1, 0x5000, 7};
    tw_record(&defs, GW_REC_STREAM, stream, 3, NULL, 0);
    if (comm) {  /* NCCL's own stream */
        uint64_t nccl_stream[3] = {2, 0x6000, 8};
        tw_record(&defs, GW_REC_STREAM, nccl_stream, 3, NULL, 0);
    }
    tw_write_chunk(out, &defs, 0, GW_CHUNK_DEFS, 0);
    tw_free(&defs);

    static struct writer m, g;
    m = (struct writer){.out = out, .tid = MAIN_TID, .now = h.start_ns};
    g = (struct writer){.out = out, .tid = CUPTI_TID, .now = h.start_ns};
    tw_begin(&m.chunk, m.now);
    tw_begin(&g.chunk, g.now);

    call(&m, GW_API_cuInit, 50 * US, NULL, 0);
    call(&m, GW_API_cuDevicePrimaryCtxRetain, 200 * US, (uint64_t[]){0, 0xC7C7}, 2);
    call(&m, GW_API_cuMemAlloc_v2, 20 * US, (uint64_t[]){0x7f0000000000ull, 256ull << 20, 0, 0}, 4);
    call(&m, GW_API_cuMemAlloc_v2, 20 * US, (uint64_t[]){0x7f0010000000ull, 8ull << 20, 0, 0}, 4);
    uint64_t gpu_end = 0, corr = 1, leaked = 0x7f1000000000ull;
    for (int s = 0; s < STEPS; s++) {
        m.now += input_ns;  /* the DataLoader: no call */
        uint64_t issued = m.now;
        call(&m, GW_API_cuMemcpyHtoDAsync_v2, 3 * US,
             (uint64_t[]){8ull << 20, GW_COPY_HTOD | GW_HOST_PINNED << 4, 1, 0x7f0010000000ull,
                          0x55000000ull}, 5);
        uint64_t start = issued > gpu_end ? issued : gpu_end;
        gpu_end = start + 400 * US;
        if (with_gpu)
            gpu(&g, GW_REC_GPU_MEMCPY, start,
                (uint64_t[]){400 * US, corr++, 0, 7, 8ull << 20, 1, 2, 3, 0}, 9);
        for (int k = 0; k < 2; k++) {
            issued = m.now;
            call(&m, GW_API_cuLaunchKernel, 5 * US, (uint64_t[]){(uint64_t)k + 1, 1}, 2);
            start = issued + 5 * US > gpu_end ? issued + 5 * US : gpu_end;
            gpu_end = start + (k ? 2 : 1) * MS;
            if (with_gpu)
                gpu(&g, GW_REC_GPU_KERNEL, start,
                    (uint64_t[]){(k ? 2 : 1) * MS, corr++, 0, 7, (uint64_t)k + 1, 0}, 6);
            if (comm && k == 1) {  /* the all-reduce of the gradients, from 1 ms in */
                call(&m, GW_API_cuLaunchKernel, 5 * US, (uint64_t[]){3, 2}, 2);
                if (with_gpu)
                    gpu(&g, GW_REC_GPU_KERNEL, start + 1 * MS,
                        (uint64_t[]){1500 * US + comm_wait_ns, corr++, 0, 8, 3, 0}, 6);
            }
        }
        if (leak)
            call(&m, GW_API_cuMemAlloc_v2, 20 * US,
                 (uint64_t[]){leaked += 8ull << 20, 8ull << 20, 0, 0}, 4);
        /* loss.item(): to pageable memory, waits for the step */
        issued = m.now;
        start = issued > gpu_end ? issued : gpu_end;
        gpu_end = start + 2 * US;
        if (with_gpu)
            gpu(&g, GW_REC_GPU_MEMCPY, start, (uint64_t[]){2 * US, corr++, 0, 7, 4, 2, 3, 1, 0},
                9);
        call(&m, GW_API_cuMemcpyDtoHAsync_v2, gpu_end - issued + 3 * US,
             (uint64_t[]){4, GW_COPY_DTOH | GW_HOST_PAGEABLE << 4, 1, 0x56000000ull,
                          0x7f0010000000ull}, 5);
    }
    call(&m, GW_API_cuMemFree_v2, 30 * US, (uint64_t[]){0x7f0010000000ull, 0}, 2);
    flush(&m);
    g.now = m.now;
    flush(&g);  /* the CUPTI thread's records reach the file last */

    if (damage) {
        if (damage_chunk < 0 || fseek(out, damage_chunk + 32 + 7, SEEK_SET) != 0)
            return 1;
        int byte = fgetc(out);
        fseek(out, damage_chunk + 32 + 7, SEEK_SET);
        fputc(byte ^ 0x5A, out);
    }
    tw_free(&m.chunk);
    tw_free(&g.chunk);
    return fclose(out) == 0 ? 0 : 1;
}
