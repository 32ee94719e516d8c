/*
 * Writes a large, realistic trace for bench/bench_analyze.sh, with the shim's encoder:
 * a training loop on NTHREADS threads (the main one launches; the others allocate and
 * copy now and then), each step an H2D copy, KERNELS launches, a D2H .item() copy; the
 * DataLoader leaves 2 ms without calls every 10th step. Chunks of 64 KiB per thread,
 * interleaved as the writer thread flushes them.
 *
 *   gen_big_trace OUT.gwt EVENTS [--gpu] [--rank R --world N] [--comm]
 *
 * --gpu adds the CUPTI records of every kernel and copy (on a thread of their own,
 * flushed every 32 steps, as the shim's CUPTI thread does), counted in EVENTS.
 * --rank R --world N: one rank of N (bench/bench_ranks.sh writes a run directory of them).
 * --comm: each step ends with an all-reduce (an NCCL kernel); the last rank arrives last,
 * so the others' last 50 us longer.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_reader_tracewriter.h"

#define CHUNK_BYTES (64u << 10)
#define KERNELS 96
#define MAIN_TID 1000
#define HELPER_TID 1001
#define CUPTI_TID 1002

struct thread {
    uint32_t tid, seq;
    struct tw_chunk chunk;
};

static FILE *out;
static uint64_t written;

static void flush(struct thread *t, uint64_t now)
{
    if (!t->chunk.len)
        return;
    tw_write_chunk(out, &t->chunk, t->tid, GW_CHUNK_EVENTS, t->seq++);
    tw_begin(&t->chunk, now);
}

static void call(struct thread *t, uint64_t ts, unsigned api, uint64_t dur,
                 const uint64_t *w, unsigned n)
{
    if (t->chunk.len + GW_MAX_CALL_RECORD > CHUNK_BYTES)
        flush(t, ts);
    tw_call(&t->chunk, ts, api, dur, 0, w, n);
    written++;
}

static void gpu_record(struct thread *t, uint8_t type, uint64_t ts, const uint64_t *w,
                       unsigned n)
{
    if (t->chunk.len + 96 > CHUNK_BYTES)
        flush(t, ts);
    tw_timed(&t->chunk, type, ts, w, n);
    written++;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"gpu", no_argument, NULL, 'g'},
                                         {"rank", required_argument, NULL, 'r'},
                                         {"world", required_argument, NULL, 'w'},
                                         {"comm", no_argument, NULL, 'c'},
                                         {0}};
    int gpu = 0, comm = 0;
    long rank = -1, world = -1;
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (c == 'g')
            gpu = 1;
        else if (c == 'r')
            rank = strtol(optarg, NULL, 10);
        else if (c == 'w')
            world = strtol(optarg, NULL, 10);
        else if (c == 'c')
            comm = 1;
        else
            optind = argc + 1;  /* (a usage error) */
    }
    if (optind + 2 != argc || (rank >= 0) != (world > rank)) {
        fprintf(stderr, "usage: gen_big_trace OUT.gwt EVENTS [--gpu] [--rank R --world N] "
                        "[--comm]\n");
        return 2;
    }
    const char *path = argv[optind];
    uint64_t target = strtoull(argv[optind + 1], NULL, 10);
    out = fopen(path, "wb");
    if (!out) {
        perror(path);
        return 1;
    }
    static char buf[1 << 20];
    setvbuf(out, buf, _IOFBF, sizeof buf);
    struct gw_file_header h = tw_header();
    h.device_total_mem = 80ull << 30;
    h.device_free_at_start = 79ull << 30;
    if (gpu) {
        h.feature_flags |= GW_FEAT_GPU_ACTIVITY;
        h.cupti_status = GW_CUPTI_ACTIVE;
    }
    h.rank = (int32_t)rank;
    h.world_size = (int32_t)world;
    h.local_rank = (int32_t)(rank >= 0 ? rank % 8 : -1);
    tw_write_header(out, &h);
    struct tw_chunk defs = {0};
    tw_begin(&defs, 0);
    char name[32];
    for (uint64_t k = 1; k <= 8; k++) {
        snprintf(name, sizeof name, "layer%llu_kernel", (unsigned long long)k);
        tw_string(&defs, k, name);
        uint64_t shape[10] = {k, k, 0xA000 + k, 128, 1, 1, 256, 1, 1, 0};
        tw_record(&defs, GW_REC_SHAPE, shape, 10, NULL, 0);
    }
    tw_string(&defs, 9, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    tw_record(&defs, GW_REC_SHAPE, (uint64_t[]){9, 9, 0xA009, 32, 1, 1, 256, 1, 1, 0}, 10,
              NULL, 0);
    /* the loop's stream (host id 1) is CUPTI's stream 7: the records meet their calls */
    tw_record(&defs, GW_REC_STREAM, (uint64_t[]){1, 0x5500AA, 7}, 3, NULL, 0);
    tw_write_chunk(out, &defs, 0, GW_CHUNK_DEFS, 0);
    tw_free(&defs);

    static struct thread main_t = {.tid = MAIN_TID}, helper = {.tid = HELPER_TID},
                         cupti = {.tid = CUPTI_TID};
    uint64_t now = h.start_ns, gpu_end = now, flushed = now, corr = 0;
    tw_begin(&main_t.chunk, now);
    tw_begin(&helper.chunk, now);
    tw_begin(&cupti.chunk, now);
    uint64_t weights = 0x7f0000000000ull;
    call(&main_t, now, GW_API_cuMemAlloc_v2, 30000, (uint64_t[]){weights, 4ull << 30, 0, 0}, 4);
    for (uint64_t step = 0; written < target; step++) {
        if (step % 10 == 0)
            now += 2000000;  /* the DataLoader */
        uint64_t issued = now;
        call(&main_t, now, GW_API_cuMemcpyHtoDAsync_v2, 3000,
             (uint64_t[]){8 << 20, GW_COPY_HTOD | GW_HOST_PINNED << 4, 1, weights, 0x5500000}, 5);
        now += 3000;
        uint64_t start = issued > gpu_end ? issued : gpu_end;
        gpu_end = start + 400000;
        if (gpu)
            gpu_record(&cupti, GW_REC_GPU_MEMCPY, start,
                       (uint64_t[]){400000, ++corr, 0, 7, 8 << 20, 1, 2, 3, 0}, 9);
        for (uint64_t k = 0; k < KERNELS && written < target; k++) {
            issued = now;
            call(&main_t, now, GW_API_cuLaunchKernel, 4000, (uint64_t[]){1 + k % 8, 1}, 2);
            now += 4000 + (k % 7) * 300;
            start = issued + 4000 > gpu_end ? issued + 4000 : gpu_end;
            gpu_end = start + 20000 + (k % 5) * 3000;
            if (gpu)
                gpu_record(&cupti, GW_REC_GPU_KERNEL, start,
                           (uint64_t[]){gpu_end - start, ++corr, 0, 7, 1 + k % 8, 0}, 6);
        }
        if (step % 4 == 0) {  /* the helper thread: a pinned staging buffer now and then */
            uint64_t p = 0x60000000ull + (step % 64) * 0x100000;
            call(&helper, now - 2000, GW_API_cuMemHostAlloc, 5000,
                 (uint64_t[]){p, 1 << 20, 0}, 3);
            call(&helper, now + 4000, GW_API_cuMemFreeHost, 5000, (uint64_t[]){p, 1 << 20, 0},
                 3);
        }
        if (comm) {  /* the all-reduce: the others wait 50 us for the last rank */
            issued = now;
            call(&main_t, now, GW_API_cuLaunchKernel, 4000, (uint64_t[]){9, 1}, 2);
            now += 4000;
            start = issued + 4000 > gpu_end ? issued + 4000 : gpu_end;
            gpu_end = start + 100000 + (rank == world - 1 ? 0 : 50000);
            if (gpu)
                gpu_record(&cupti, GW_REC_GPU_KERNEL, start,
                           (uint64_t[]){gpu_end - start, ++corr, 0, 7, 9, 0}, 6);
        }
        issued = now;
        start = issued > gpu_end ? issued : gpu_end;
        gpu_end = start + 2000;
        if (gpu)
            gpu_record(&cupti, GW_REC_GPU_MEMCPY, start,
                       (uint64_t[]){2000, ++corr, 0, 7, 4, 2, 3, 1, 0}, 9);
        call(&main_t, now, GW_API_cuMemcpyDtoHAsync_v2, gpu_end - issued + 3000,
             (uint64_t[]){4, GW_COPY_DTOH | GW_HOST_PAGEABLE << 4, 1, 0x56000000, weights}, 5);
        now = gpu_end + 3000 + 20000;
        if (now - flushed > 50000000) {  /* the writer: every 50 ms, each thread's ring */
            flush(&main_t, now);
            flush(&helper, now);
            flushed = now;
        }
        if (gpu && step % 32 == 31)
            flush(&cupti, now);
    }
    flush(&main_t, now);
    flush(&helper, now);
    flush(&cupti, now);
    tw_free(&main_t.chunk);
    tw_free(&helper.chunk);
    tw_free(&cupti.chunk);
    if (fclose(out) != 0) {
        perror(path);
        return 1;
    }
    printf("%llu events\n", (unsigned long long)written);
    return 0;
}
