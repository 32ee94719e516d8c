/*
 * Reader tests: traces built from the shim's own encoder (test_reader_tracewriter.h),
 * read back through the gwtrace API; damaged copies check the damage reports and that
 * everything intact around the damage is still read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_reader_tracewriter.h"
#include "trace_reader.h"

static char tmpdir[256];

static int make_tmpdir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/test_reader.XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Rotates over a few buffers so that several paths can be alive at once. */
static const char *tmp_path(const char *name)
{
    static char paths[8][512];
    static unsigned next;
    char *path = paths[next++ % 8];
    snprintf(path, sizeof paths[0], "%s/%s", tmpdir, name);
    return path;
}

static FILE *create(const char *path)
{
    FILE *f = fopen(path, "w+b");
    assert_non_null(f);
    return f;
}

/* ---- reading helpers ---- */

struct read_result {
    size_t events, calls, defs, lost;
    size_t damage_callbacks;
    struct gw_reader_stats stats;
    size_t ndamage;
    struct gw_damage damage[8];
};

static void count_damage(const struct gw_damage *d, void *user)
{
    (void)d;
    ((struct read_result *)user)->damage_callbacks++;
}

/* Opens (must succeed) and reads everything. */
static struct read_result read_all(const char *path)
{
    struct read_result res;
    memset(&res, 0, sizeof res);
    struct gw_reader *r;
    char err[512];
    int rc = gw_reader_open(path, &r, err, sizeof err);
    if (rc != 0)
        fail_msg("open failed: %s", err);
    gw_reader_on_damage(r, count_damage, &res);
    struct gw_event ev;
    while (gw_reader_next(r, &ev) > 0) {
        res.events++;
        res.calls += ev.kind == GW_EV_CALL;
        res.lost += ev.kind == GW_EV_LOST;
        res.defs += ev.kind != GW_EV_CALL && ev.kind != GW_EV_LOST;
    }
    res.stats = *gw_reader_stats(r);
    const struct gw_damage *list;
    size_t n = gw_reader_damage(r, &list);
    res.ndamage = n;
    for (size_t i = 0; i < n && i < 8; i++)
        res.damage[i] = list[i];
    gw_reader_close(r);
    assert_int_equal(res.damage_callbacks, res.stats.damage_reports);
    return res;
}

/* Opens and expects failure; returns the message. */
static const char *open_error(const char *path)
{
    static char err[512];
    struct gw_reader *r = NULL;
    err[0] = 0;
    assert_int_equal(gw_reader_open(path, &r, err, sizeof err), -1);
    assert_null(r);
    assert_true(err[0] != 0);
    return err;
}

static void assert_contains(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle))
        fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

/* ---- a standard multi-chunk file ---- */

#define CALLS_PER_CHUNK 10

struct layout {
    long chunk_off[8];
    long chunk_end[8];
    long file_size;
};

/* n event chunks of tid 77 (seq 0..n-1, unless seqs given), CALLS_PER_CHUNK launches
 * each, chunk i's payload padded by i * 37 bytes of launches so sizes differ. */
static struct layout write_chunks(const char *path, int n, const uint32_t *seqs)
{
    struct layout lay;
    memset(&lay, 0, sizeof lay);
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    uint64_t ts = 2000000000ull;
    for (int i = 0; i < n; i++) {
        tw_begin(&c, ts);
        for (int k = 0; k < CALLS_PER_CHUNK; k++) {
            uint64_t w[2] = {1, (uint64_t)(i * 100 + k)};
            tw_call(&c, ts, GW_API_cuLaunchKernel, 3000, 0, w, 2);
            ts += 5000;
        }
        lay.chunk_off[i] = tw_write_chunk(f, &c, 77, GW_CHUNK_EVENTS, seqs ? seqs[i] : (uint32_t)i);
        lay.chunk_end[i] = ftell(f);
    }
    lay.file_size = ftell(f);
    fclose(f);
    tw_free(&c);
    return lay;
}

static void copy_prefix(const char *from, const char *to, long len)
{
    FILE *in = fopen(from, "rb"), *out = create(to);
    assert_non_null(in);
    char buf[4096];
    while (len > 0) {
        size_t n = fread(buf, 1, len < (long)sizeof buf ? (size_t)len : sizeof buf, in);
        assert_true(n > 0);
        fwrite(buf, 1, n, out);
        len -= (long)n;
    }
    fclose(in);
    fclose(out);
}

static void poke(const char *path, long offset, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, offset, SEEK_SET), 0);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    fclose(f);
}

static void append_bytes(const char *path, int value, size_t len)
{
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    for (size_t i = 0; i < len; i++)
        fputc(value, f);
    fclose(f);
}

/* ---- tests ---- */

static void test_api_names(void **state)
{
    (void)state;
    assert_string_equal(gw_api_name(GW_API_cuLaunchKernel_ptsz), "cuLaunchKernel_ptsz");
    assert_string_equal(gw_api_name(11), "cuMemAlloc_v2");
    assert_int_equal(gw_api_family(33), GW_FAM_LAUNCH);
    assert_int_equal(gw_api_family(GW_API_cuMemcpyBatchAsync_v2), GW_FAM_COPY);
    assert_null(gw_api_name(0));
    assert_null(gw_api_name(GW_API_ID_LIMIT - 1));
    assert_null(gw_api_name(100000));
    assert_int_equal(gw_api_family(0), -1);
    assert_string_equal(gw_copy_dir_name(GW_COPY_HTOD), "HtoD");
    assert_string_equal(gw_copy_dir_name(99), "unknown");
    assert_string_equal(gw_host_kind_name(GW_HOST_PAGEABLE), "pageable");
    assert_string_equal(gw_family_name(GW_FAM_COPY), "copy");
    assert_string_equal(gw_cu_result_name(2), "CUDA_ERROR_OUT_OF_MEMORY");
    assert_null(gw_cu_result_name(123456));
}

/* One call of every family (and the special forms), definitions of every kind. */
static void test_roundtrip_every_family(void **state)
{
    (void)state;
    const char *path = tmp_path("roundtrip.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);

    struct tw_chunk c = {0};
    tw_begin(&c, 0);
    tw_string(&c, 1, "forward_300us");
    tw_string(&c, 2, "cuMemAlloc");
    tw_string(&c, 3, "main thread");
    tw_string(&c, 4, "NVIDIA Test GPU");
    tw_string(&c, 5, "");
    uint64_t shape[10] = {7, 1, 0xF00D, 64, 2, 3, 256, 4, 1, 1024};
    tw_record(&c, GW_REC_SHAPE, shape, 10, NULL, 0);
    uint64_t stream[2] = {3, 0x5500AA};
    tw_record(&c, GW_REC_STREAM, stream, 2, NULL, 0);
    uint64_t device[4] = {0, 4, 85899345920ull, 80000000000ull};
    tw_record(&c, GW_REC_DEVICE, device, 4, NULL, 0);
    uint64_t clock[3] = {1000, 1700000000000001000ull, 1000};
    tw_record(&c, GW_REC_CLOCK, clock, 3, NULL, 0);
    uint64_t thread[2] = {1234, 3};
    tw_record(&c, GW_REC_THREAD, thread, 2, NULL, 0);
    tw_write_chunk(f, &c, 0, GW_CHUNK_DEFS, 0);

    const uint64_t big = UINT64_MAX, ptr = 0x7F0000001000ull;
    struct {
        unsigned api;
        int result;
        unsigned n;
        uint64_t w[5];
    } calls[] = {
        {GW_API_cuInit, 0, 0, {0}},
        {GW_API_cuGetProcAddress_v2, 0, 4, {2, 12000, 2, GW_PROC_SUBSTITUTED}},
        {GW_API_cuCtxCreate_v4, 0, 2, {1, 0x7F00AA}},
        {GW_API_cuMemGetInfo_v2, 0, 2, {1ull << 33, 1ull << 34}},
        {GW_API_cuMemAllocPitch_v2, 0, 4, {ptr, 1 << 20, 0, 512}},
        {GW_API_cuMemAllocFromPoolAsync_ptsz, 0, 4, {ptr + 4096, 8192, 3, 0xB00L}},
        {GW_API_cuMemFreeAsync, 0, 2, {ptr + 4096, 3}},
        {GW_API_cuMemAddressReserve, 0, 3, {ptr << 4, 1ull << 36, 1 << 21}},
        {GW_API_cuMemAddressFree, 0, 3, {ptr << 4, 1ull << 36, 0}},
        {GW_API_cuMemCreate, 0, 3, {0xC0FFEE, 1 << 21, 1}},
        {GW_API_cuMemRelease, 0, 3, {0xC0FFEE, 0, 0}},
        {GW_API_cuMemMap, 0, 3, {ptr << 4, 1 << 21, 0xC0FFEE}},
        {GW_API_cuMemUnmap, 0, 3, {ptr << 4, 1 << 21, 0}},
        {GW_API_cuMemHostAlloc, 0, 3, {0x55550000, 65536, 0x1}},
        {GW_API_cuLaunchKernel_ptsz, 0, 2, {7, 3}},
        {GW_API_cuGraphLaunch, 0, 3, {0, 3, 0x6A6A}},
        {GW_API_cuMemcpyHtoDAsync_v2, 0, 5,
         {4096, GW_COPY_HTOD | GW_HOST_PINNED << 4, 3, ptr, 0x55550000}},
        {GW_API_cuMemcpyBatchAsync_v2, 0, 5,
         {1 << 20, GW_COPY_DTOH | GW_HOST_PAGEABLE << 4, 3, 5, 0}},
        {GW_API_cuMemsetD32Async, 0, 3, {ptr, 4096, 3}},
        {GW_API_cuStreamSynchronize, 0, 2, {3, 0}},
        {GW_API_cuEventSynchronize, 0, 2, {0, 0xE7E7}},
        {GW_API_cuModuleGetFunction, 0, 2, {0xF00D, 1}},
        {GW_API_cuMemAlloc_v2, 2, 4, {0, 1ull << 40, 0, 0}},
        {GW_API_cuMemFree_v2, 0, 2, {big, 0}},
    };
    size_t ncalls = sizeof calls / sizeof calls[0];
    uint64_t t0 = 5000000000ull;
    tw_begin(&c, t0 - 100);
    for (size_t i = 0; i < ncalls; i++) {
        /* times go backwards once (zigzag dt) */
        uint64_t ts = i == 5 ? t0 + 4 * 1000 - 250 : t0 + i * 1000;
        tw_call(&c, ts, calls[i].api, 100 + i, calls[i].result, calls[i].w, calls[i].n);
    }
    tw_lost(&c, t0 + ncalls * 1000, 42);
    tw_write_chunk(f, &c, 1234, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r;
    char err[256];
    assert_int_equal(gw_reader_open(path, &r, err, sizeof err), 0);
    assert_int_equal(gw_reader_header(r)->pid, 4242);
    struct gw_event ev;
    /* definitions, in order */
    const char *texts[] = {"forward_300us", "cuMemAlloc", "main thread", "NVIDIA Test GPU", ""};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(gw_reader_next(r, &ev), 1);
        assert_int_equal(ev.kind, GW_EV_STRING);
        assert_int_equal(ev.u.string.id, i + 1);
        assert_int_equal(ev.u.string.len, strlen(texts[i]));
        assert_string_equal(ev.u.string.text, texts[i]);
    }
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_SHAPE);
    assert_int_equal(ev.u.shape.id, 7);
    assert_int_equal(ev.u.shape.func, 0xF00D);
    assert_int_equal(ev.u.shape.grid[1], 2);
    assert_int_equal(ev.u.shape.block[0], 256);
    assert_int_equal(ev.u.shape.shared_mem, 1024);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_STREAM);
    assert_int_equal(ev.u.stream.handle, 0x5500AA);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_DEVICE);
    assert_int_equal(ev.u.device.free_at_first_context, 80000000000ull);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_CLOCK);
    assert_int_equal(ev.u.clock.realtime_ns, 1700000000000001000ull);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_THREAD);
    assert_int_equal(ev.u.thread.tid, 1234);

    /* the calls: exact values back */
    for (size_t i = 0; i < ncalls; i++) {
        assert_int_equal(gw_reader_next(r, &ev), 1);
        assert_int_equal(ev.kind, GW_EV_CALL);
        assert_int_equal(ev.tid, 1234);
        assert_int_equal(ev.api_id, calls[i].api);
        assert_int_equal(ev.ts_ns, i == 5 ? t0 + 4 * 1000 - 250 : t0 + i * 1000);
        assert_int_equal(ev.dur_ns, 100 + i);
        assert_int_equal(ev.result, calls[i].result);
        assert_int_equal(ev.family, gw_api_family(calls[i].api));
        assert_int_equal(ev.nwords, calls[i].n);
        for (unsigned k = 0; k < calls[i].n; k++)
            assert_int_equal(ev.words[k], calls[i].w[k]);
        const uint64_t *w = calls[i].w;
        switch (calls[i].api) {
        case GW_API_cuGetProcAddress_v2:
            assert_int_equal(ev.u.proc.symbol_id, 2);
            assert_int_equal(ev.u.proc.cuda_version, 12000);
            assert_int_equal(ev.u.proc.flags, 2);
            assert_int_equal(ev.u.proc.outcome, GW_PROC_SUBSTITUTED);
            assert_string_equal(gw_reader_string(r, ev.u.proc.symbol_id, NULL), "cuMemAlloc");
            break;
        case GW_API_cuCtxCreate_v4:
            assert_int_equal(ev.u.ctx.device, 1);
            assert_int_equal(ev.u.ctx.ctx, 0x7F00AA);
            break;
        case GW_API_cuMemGetInfo_v2:
            assert_int_equal(ev.u.meminfo.free_bytes, 1ull << 33);
            assert_int_equal(ev.u.meminfo.total_bytes, 1ull << 34);
            break;
        case GW_API_cuMemAllocPitch_v2:
        case GW_API_cuMemAllocFromPoolAsync_ptsz:
        case GW_API_cuMemAlloc_v2:
            assert_int_equal(ev.u.alloc.ptr, w[0]);
            assert_int_equal(ev.u.alloc.bytes, w[1]);
            assert_int_equal(ev.u.alloc.stream_id, w[2]);
            assert_int_equal(ev.u.alloc.aux, w[3]);
            break;
        case GW_API_cuMemFreeAsync:
        case GW_API_cuMemFree_v2:
            assert_int_equal(ev.u.memfree.ptr, w[0]);
            assert_int_equal(ev.u.memfree.stream_id, w[1]);
            break;
        case GW_API_cuMemAddressReserve:
            assert_int_equal(ev.u.vmm.ptr, w[0]);
            assert_int_equal(ev.u.vmm.size, w[1]);
            assert_int_equal(ev.u.vmm.alignment, w[2]);
            break;
        case GW_API_cuMemAddressFree:
        case GW_API_cuMemUnmap:
            assert_int_equal(ev.u.vmm.ptr, w[0]);
            assert_int_equal(ev.u.vmm.size, w[1]);
            assert_int_equal(ev.u.vmm.handle, 0);
            break;
        case GW_API_cuMemCreate:
            assert_int_equal(ev.u.vmm.handle, 0xC0FFEE);
            assert_int_equal(ev.u.vmm.size, 1 << 21);
            assert_int_equal(ev.u.vmm.device, 1);
            break;
        case GW_API_cuMemRelease:
            assert_int_equal(ev.u.vmm.handle, 0xC0FFEE);
            break;
        case GW_API_cuMemMap:
            assert_int_equal(ev.u.vmm.ptr, w[0]);
            assert_int_equal(ev.u.vmm.size, w[1]);
            assert_int_equal(ev.u.vmm.handle, 0xC0FFEE);
            break;
        case GW_API_cuMemHostAlloc:
            assert_int_equal(ev.u.hostmem.ptr, 0x55550000);
            assert_int_equal(ev.u.hostmem.bytes, 65536);
            assert_int_equal(ev.u.hostmem.flags, 1);
            break;
        case GW_API_cuLaunchKernel_ptsz: {
            assert_int_equal(ev.u.launch.shape_id, 7);
            assert_int_equal(ev.u.launch.stream_id, 3);
            assert_int_equal(ev.u.launch.handle, 0);
            assert_string_equal(gw_reader_kernel_name(r, ev.u.launch.shape_id),
                                "forward_300us");
            uint64_t handle;
            assert_int_equal(gw_reader_stream_handle(r, ev.u.launch.stream_id, &handle), 0);
            assert_int_equal(handle, 0x5500AA);
            const struct gw_shape *s = gw_reader_shape(r, 7);
            assert_non_null(s);
            assert_int_equal(s->grid[0], 64);
            assert_int_equal(s->grid[2], 3);
            assert_int_equal(s->block[1], 4);
            break;
        }
        case GW_API_cuGraphLaunch:
            assert_int_equal(ev.u.launch.shape_id, 0);
            assert_int_equal(ev.u.launch.handle, 0x6A6A);
            break;
        case GW_API_cuMemcpyHtoDAsync_v2:
            assert_int_equal(ev.u.copy.bytes, 4096);
            assert_int_equal(ev.u.copy.dir, GW_COPY_HTOD);
            assert_int_equal(ev.u.copy.host_kind, GW_HOST_PINNED);
            assert_int_equal(ev.u.copy.stream_id, 3);
            assert_int_equal(ev.u.copy.dst, ptr);
            assert_int_equal(ev.u.copy.src, 0x55550000);
            assert_int_equal(ev.u.copy.batch, 0);
            break;
        case GW_API_cuMemcpyBatchAsync_v2:
            assert_int_equal(ev.u.copy.batch, 1);
            assert_int_equal(ev.u.copy.count, 5);
            assert_int_equal(ev.u.copy.dir, GW_COPY_DTOH);
            assert_int_equal(ev.u.copy.host_kind, GW_HOST_PAGEABLE);
            assert_int_equal(ev.u.copy.dst, 0);
            break;
        case GW_API_cuMemsetD32Async:
            assert_int_equal(ev.u.set.ptr, ptr);
            assert_int_equal(ev.u.set.bytes, 4096);
            assert_int_equal(ev.u.set.stream_id, 3);
            break;
        case GW_API_cuStreamSynchronize:
        case GW_API_cuEventSynchronize:
            assert_int_equal(ev.u.sync.stream_id, w[0]);
            assert_int_equal(ev.u.sync.event, w[1]);
            break;
        case GW_API_cuModuleGetFunction:
            assert_int_equal(ev.u.name.handle, 0xF00D);
            assert_int_equal(ev.u.name.string_id, 1);
            break;
        }
    }
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_LOST);
    assert_int_equal(ev.u.lost.count, 42);
    assert_int_equal(ev.ts_ns, t0 + ncalls * 1000);
    assert_int_equal(gw_reader_next(r, &ev), 0);
    assert_int_equal(gw_reader_next(r, &ev), 0);

    /* tables */
    size_t len;
    assert_string_equal(gw_reader_string(r, 4, &len), "NVIDIA Test GPU");
    assert_int_equal(len, 15);
    assert_null(gw_reader_string(r, 99, NULL));
    assert_string_equal(gw_reader_thread_name(r, 1234), "main thread");
    const struct gw_device_def *dev = gw_reader_device(r, 0);
    assert_non_null(dev);
    assert_int_equal(dev->total_bytes, 85899345920ull);
    const struct gw_clock_point *clocks;
    assert_int_equal(gw_reader_clocks(r, &clocks), 1);
    assert_int_equal(clocks[0].trace_ns, 1000);
    const struct gw_reader_stats *s = gw_reader_stats(r);
    assert_int_equal(s->calls, ncalls);
    assert_int_equal(s->call_errors, 1);
    assert_int_equal(s->lost_events, 42);
    assert_int_equal(s->lost_records, 1);
    assert_int_equal(s->definitions, 10);
    assert_int_equal(s->chunks, 2);
    assert_int_equal(s->damage_reports, 0);
    assert_int_equal(s->first_ts_ns, t0);
    assert_int_equal(s->last_ts_ns, t0 + ncalls * 1000);

    /* rewind gives the same again */
    gw_reader_rewind(r);
    size_t n = 0;
    while (gw_reader_next(r, &ev) > 0)
        n++;
    assert_int_equal(n, 10 + ncalls + 1);
    gw_reader_close(r);
}

static void test_bad_magic(void **state)
{
    (void)state;
    const char *path = tmp_path("badmagic.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    memcpy(h.magic, "GPUWATCX", 8);
    tw_write_header(f, &h);
    fclose(f);
    const char *err = open_error(path);
    assert_contains(err, path);
    assert_contains(err, "magic");
    assert_contains(err, "offset 0");

    path = tmp_path("text.txt");
    f = create(path);
    for (int i = 0; i < 200; i++)
        fputs("hello world\n", f);
    fclose(f);
    err = open_error(path);
    assert_contains(err, path);
    assert_contains(err, "magic");
}

static void test_byte_swapped(void **state)
{
    (void)state;
    const char *path = tmp_path("swapped.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    h.endian_mark = 0x04030201u;
    tw_write_header(f, &h);
    fclose(f);
    const char *err = open_error(path);
    assert_contains(err, path);
    assert_contains(err, "big-endian");
}

static void test_short_file(void **state)
{
    (void)state;
    const char *path = tmp_path("short.gwt");
    FILE *f = create(path);
    fwrite("GPUWATCH\1\0\1\0abcde", 1, 17, f);
    fclose(f);
    char want[600];
    snprintf(want, sizeof want, "%s: offset 0: expected a 1024-byte header, file has 17 bytes",
             path);
    assert_string_equal(open_error(path), want);
    assert_contains(open_error(tmp_path("does-not-exist.gwt")), "does-not-exist.gwt");
}

static void test_newer_min_reader_version(void **state)
{
    (void)state;
    const char *path = tmp_path("v3.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    h.version = 3;
    h.min_reader_version = 2;
    tw_write_header(f, &h);
    fclose(f);
    char want[600];
    snprintf(want, sizeof want,
             "%s: written by format v3, needs a reader of v2 or newer; this reader reads v1",
             path);
    assert_string_equal(open_error(path), want);
}

/* A v2 file a v1 reader may read: bigger header, new record types, a new chunk kind,
 * extra payload words. Everything known is read exactly, the rest skipped, no damage. */
static void test_newer_version_readable(void **state)
{
    (void)state;
    const char *path = tmp_path("v2.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    h.version = 2;
    h.min_reader_version = 1;
    h.header_size = 2048;
    tw_write_header(f, &h);
    for (int i = 0; i < 1024; i++)
        fputc(0xEE, f);  /* the v2 header's extra fields */
    struct tw_chunk c = {0};
    tw_begin(&c, 0);
    uint64_t w[6] = {9, 1, 2, 3};
    tw_record(&c, 0x50, w, 3, "new definition", 14);  /* unknown untimed type */
    tw_string(&c, 1, "k");
    tw_write_chunk(f, &c, 0, GW_CHUNK_DEFS, 0);
    tw_begin(&c, 3000);
    tw_write_chunk(f, &c, 0, 9, 0);  /* unknown chunk kind */
    tw_begin(&c, 10000);
    uint64_t launch[4] = {1, 2, 0, 777};  /* + an appended word a v1 reader ignores */
    tw_call(&c, 10100, GW_API_cuLaunchKernel, 50, 0, launch, 4);
    uint64_t nw[2] = {5, 6};
    tw_timed(&c, 0x05, 10400, nw, 2);  /* unknown timed type: its dt still counts */
    tw_call(&c, 10500, GW_API_cuCtxSynchronize, 60, 0, (uint64_t[]){0, 0}, 2);
    uint64_t uw[1] = {0};
    tw_call(&c, 10600, 120, 5, 0, uw, 1);  /* an api id this reader lacks */
    tw_write_chunk(f, &c, 9, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r;
    char err[256];
    assert_int_equal(gw_reader_open(path, &r, err, sizeof err), 0);
    struct gw_event ev;
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_STRING);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_CALL);
    assert_int_equal(ev.api_id, GW_API_cuLaunchKernel);
    assert_int_equal(ev.ts_ns, 10100);
    assert_int_equal(ev.u.launch.shape_id, 1);
    assert_int_equal(ev.u.launch.stream_id, 2);
    assert_int_equal(ev.nwords, 4);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.api_id, GW_API_cuCtxSynchronize);
    assert_int_equal(ev.ts_ns, 10500);
    assert_int_equal(ev.dur_ns, 60);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.api_id, 120);
    assert_int_equal(ev.family, -1);
    assert_int_equal(ev.ts_ns, 10600);
    assert_int_equal(ev.nwords, 1);
    assert_int_equal(gw_reader_next(r, &ev), 0);
    const struct gw_reader_stats *s = gw_reader_stats(r);
    assert_int_equal(s->damage_reports, 0);
    assert_int_equal(s->unknown_records, 2);
    assert_int_equal(s->calls, 3);
    gw_reader_close(r);

    /* the same unknown chunk kind in a v1 file is damage */
    path = tmp_path("v1kind.gwt");
    f = create(path);
    h = tw_header();
    tw_write_header(f, &h);
    tw_begin(&c, 0);
    tw_call(&c, 5, GW_API_cuInit, 1, 0, NULL, 0);
    long at = tw_write_chunk(f, &c, 1, 9, 0);
    tw_write_chunk(f, &c, 1, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);
    struct read_result res = read_all(path);
    assert_int_equal(res.calls, 1);
    assert_int_equal(res.ndamage, 1);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_CHUNK_KIND);
    assert_int_equal(res.damage[0].offset, at);
}

static void test_intact_file(void **state)
{
    (void)state;
    const char *path = tmp_path("intact.gwt");
    struct layout lay = write_chunks(path, 4, NULL);
    struct read_result res = read_all(path);
    assert_int_equal(res.calls, 4 * CALLS_PER_CHUNK);
    assert_int_equal(res.stats.chunks, 4);
    assert_int_equal(res.stats.damage_reports, 0);
    assert_int_equal(lay.chunk_off[0], GW_FILE_HEADER_SIZE);

    /* a file that is only a header is an empty, intact trace */
    copy_prefix(path, tmp_path("header-only.gwt"), GW_FILE_HEADER_SIZE);
    res = read_all(tmp_path("header-only.gwt"));
    assert_int_equal(res.events, 0);
    assert_int_equal(res.stats.damage_reports, 0);
}

/* Cut inside the third chunk at several places: two chunks read, one truncation report
 * at the third chunk's offset. */
static void test_truncated(void **state)
{
    (void)state;
    char full[512];
    snprintf(full, sizeof full, "%s", tmp_path("full.gwt"));
    struct layout lay = write_chunks(full, 4, NULL);
    long start = lay.chunk_off[2], end = lay.chunk_end[2];
    long cuts[] = {start + 1, start + 10, start + 31, start + 32, start + 33,
                   (start + end) / 2, end - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        const char *path = tmp_path("cut.gwt");
        copy_prefix(full, path, cuts[i]);
        struct read_result res = read_all(path);
        assert_int_equal(res.calls, 2 * CALLS_PER_CHUNK);
        assert_int_equal(res.stats.chunks, 2);
        assert_int_equal(res.ndamage, 1);
        assert_int_equal(res.damage[0].kind, GW_DAMAGE_TRUNCATED);
        assert_int_equal(res.damage[0].offset, start);
        assert_int_equal(res.damage[0].lost_bytes, cuts[i] - start);
        char want[64];
        snprintf(want, sizeof want, "offset %ld: truncated", start);
        assert_contains(res.damage[0].message, want);
        assert_contains(res.damage[0].message, path);
    }
    /* cut exactly between chunks: nothing is damaged */
    copy_prefix(full, tmp_path("cut.gwt"), end);
    struct read_result res = read_all(tmp_path("cut.gwt"));
    assert_int_equal(res.calls, 3 * CALLS_PER_CHUNK);
    assert_int_equal(res.stats.damage_reports, 0);
}

/* A corrupted byte in the middle chunk: CRC damage, the chunks before and after read,
 * and the missing sequence number reported as one lost chunk. */
static void test_crc_damage_middle(void **state)
{
    (void)state;
    const char *path = tmp_path("crc.gwt");
    struct layout lay = write_chunks(path, 3, NULL);
    uint8_t bad = 0xFF;
    poke(path, lay.chunk_off[1] + 32 + 7, &bad, 1);
    struct read_result res = read_all(path);
    assert_int_equal(res.calls, 2 * CALLS_PER_CHUNK);
    assert_int_equal(res.stats.chunks, 2);
    assert_int_equal(res.ndamage, 2);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_CHUNK_CRC);
    assert_int_equal(res.damage[0].offset, lay.chunk_off[1]);
    assert_int_equal(res.damage[0].resume_offset, lay.chunk_off[2]);
    assert_int_equal(res.damage[0].lost_bytes, lay.chunk_off[2] - lay.chunk_off[1]);
    char want[128];
    snprintf(want, sizeof want, "offset %ld: chunk (tid 77, seq 1, ", lay.chunk_off[1]);
    assert_contains(res.damage[0].message, want);
    snprintf(want, sizeof want, "skipped %ld bytes to the next chunk at %ld",
             lay.chunk_off[2] - lay.chunk_off[1], lay.chunk_off[2]);
    assert_contains(res.damage[0].message, want);
    assert_int_equal(res.damage[1].kind, GW_DAMAGE_LOST_CHUNKS);
    assert_int_equal(res.damage[1].lost_chunks, 1);
    assert_int_equal(res.damage[1].tid, 77);
    assert_int_equal(res.stats.lost_chunks, 1);
    assert_int_equal(res.stats.damaged_bytes, lay.chunk_off[2] - lay.chunk_off[1]);
}

/* The example from the design: a zeroed chunk (magic 0) in the middle. */
static void test_zeroed_chunk(void **state)
{
    (void)state;
    const char *path = tmp_path("zeroed.gwt");
    struct layout lay = write_chunks(path, 4, NULL);
    size_t len = (size_t)(lay.chunk_end[1] - lay.chunk_off[1]);
    uint8_t *zeros = calloc(1, len);
    poke(path, lay.chunk_off[1], zeros, len);
    free(zeros);
    struct read_result res = read_all(path);
    assert_int_equal(res.calls, 3 * CALLS_PER_CHUNK);
    assert_int_equal(res.ndamage, 2);
    char want[800];
    snprintf(want, sizeof want,
             "%s: offset %ld: expected chunk magic 0x4B435747, found 0x00000000; skipped %zu "
             "bytes to the next chunk at %ld",
             path, lay.chunk_off[1], len, lay.chunk_off[2]);
    assert_string_equal(res.damage[0].message, want);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_CHUNK_MAGIC);
    assert_int_equal(res.damage[1].kind, GW_DAMAGE_LOST_CHUNKS);
}

/* A few stray bytes between two chunks: found by scanning byte by byte, nothing lost. */
static void test_stray_bytes(void **state)
{
    (void)state;
    char clean[512];
    snprintf(clean, sizeof clean, "%s", tmp_path("stray-clean.gwt"));
    struct layout lay = write_chunks(clean, 3, NULL);
    const char *path = tmp_path("stray.gwt");
    copy_prefix(clean, path, lay.chunk_end[0]);
    append_bytes(path, 'x', 7);
    FILE *in = fopen(clean, "rb"), *out = fopen(path, "ab");
    assert_non_null(in);
    assert_non_null(out);
    fseek(in, lay.chunk_end[0], SEEK_SET);
    int ch;
    while ((ch = fgetc(in)) != EOF)
        fputc(ch, out);
    fclose(in);
    fclose(out);
    struct read_result res = read_all(path);
    assert_int_equal(res.calls, 3 * CALLS_PER_CHUNK);
    assert_int_equal(res.stats.lost_chunks, 0);
    assert_int_equal(res.ndamage, 1);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_CHUNK_MAGIC);
    assert_int_equal(res.damage[0].offset, lay.chunk_end[0]);
    assert_int_equal(res.damage[0].lost_bytes, 7);
    char want[128];
    snprintf(want, sizeof want, "found 0x78787878; skipped 7 bytes to the next chunk at %ld",
             lay.chunk_end[0] + 7);
    assert_contains(res.damage[0].message, want);

    /* 65535 stray bytes: the next magic straddles the reader's 64 KiB scan window */
    copy_prefix(clean, path, lay.chunk_end[0]);
    append_bytes(path, 'x', 65535);
    in = fopen(clean, "rb"), out = fopen(path, "ab");
    fseek(in, lay.chunk_end[0], SEEK_SET);
    while ((ch = fgetc(in)) != EOF)
        fputc(ch, out);
    fclose(in);
    fclose(out);
    res = read_all(path);
    assert_int_equal(res.calls, 3 * CALLS_PER_CHUNK);
    assert_int_equal(res.ndamage, 1);
    assert_int_equal(res.damage[0].lost_bytes, 65535);
}

/* Damage followed by a truncated last chunk: two reports, split at that chunk. */
static void test_damage_then_truncation(void **state)
{
    (void)state;
    char full[512];
    snprintf(full, sizeof full, "%s", tmp_path("dt-full.gwt"));
    struct layout lay = write_chunks(full, 3, NULL);
    const char *path = tmp_path("dt.gwt");
    copy_prefix(full, path, lay.chunk_end[2] - 5);
    uint8_t bad = 0xA5;
    poke(path, lay.chunk_off[1] + 40, &bad, 1);
    struct read_result res = read_all(path);
    assert_int_equal(res.calls, CALLS_PER_CHUNK);
    assert_int_equal(res.ndamage, 2);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_CHUNK_CRC);
    assert_int_equal(res.damage[0].resume_offset, lay.chunk_off[2]);
    assert_int_equal(res.damage[1].kind, GW_DAMAGE_TRUNCATED);
    assert_int_equal(res.damage[1].offset, lay.chunk_off[2]);
    assert_int_equal(res.stats.damaged_bytes, lay.chunk_end[2] - 5 - lay.chunk_off[1]);
}

/* Chunks lost between writes leave a sequence gap per thread; a tid that starts again
 * at 0 (a reused thread id) is not a gap. */
static void test_seq_gap(void **state)
{
    (void)state;
    const char *path = tmp_path("gap.gwt");
    uint32_t seqs[6] = {0, 1, 4, 5, 0, 1};
    struct layout lay = write_chunks(path, 6, seqs);
    struct read_result res = read_all(path);
    assert_int_equal(res.calls, 6 * CALLS_PER_CHUNK);
    assert_int_equal(res.ndamage, 1);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_LOST_CHUNKS);
    assert_int_equal(res.damage[0].lost_chunks, 2);
    assert_int_equal(res.damage[0].offset, lay.chunk_off[2]);
    assert_int_equal(res.damage[0].lost_bytes, 0);
    assert_contains(res.damage[0].message, "tid 77");
    assert_contains(res.damage[0].message, "expected event chunk seq 2, found 4");
    assert_int_equal(res.stats.lost_chunks, 2);

    /* the first chunk of a thread that is not seq 0 */
    uint32_t late[2] = {3, 4};
    write_chunks(path, 2, late);
    res = read_all(path);
    assert_int_equal(res.stats.lost_chunks, 3);
}

/* A mapped-file writer that died leaves zeros after its last chunk. */
static void test_zero_tail(void **state)
{
    (void)state;
    const char *path = tmp_path("tail.gwt");
    struct layout lay = write_chunks(path, 2, NULL);
    append_bytes(path, 0, 4096);
    struct read_result res = read_all(path);
    assert_int_equal(res.calls, 2 * CALLS_PER_CHUNK);
    assert_int_equal(res.ndamage, 1);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_TRUNCATED);
    assert_int_equal(res.damage[0].offset, lay.file_size);
    assert_int_equal(res.damage[0].lost_bytes, 4096);
    assert_contains(res.damage[0].message, "found zeros to the end of the file");

    /* fewer zero bytes than a chunk header */
    write_chunks(path, 2, NULL);
    append_bytes(path, 0, 5);
    res = read_all(path);
    assert_int_equal(res.calls, 2 * CALLS_PER_CHUNK);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_TRUNCATED);
    assert_int_equal(res.damage[0].lost_bytes, 5);
}

static void test_bad_lengths(void **state)
{
    (void)state;
    const char *path = tmp_path("len.gwt");
    struct layout lay = write_chunks(path, 3, NULL);
    uint32_t huge = 0xFFFFFFF0u;
    poke(path, lay.chunk_off[1] + 4, &huge, 4);
    struct read_result res = read_all(path);
    assert_int_equal(res.calls, 2 * CALLS_PER_CHUNK);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_CHUNK_LENGTH);
    assert_int_equal(res.damage[0].offset, lay.chunk_off[1]);
    assert_int_equal(res.damage[0].resume_offset, lay.chunk_off[2]);
    assert_contains(res.damage[0].message, "expected a chunk payload_len of at most");

    /* within the limit but past the end of the file, with a good chunk after */
    lay = write_chunks(path, 3, NULL);
    uint32_t past = (uint32_t)(lay.file_size * 2);
    poke(path, lay.chunk_off[1] + 4, &past, 4);
    res = read_all(path);
    assert_int_equal(res.calls, 2 * CALLS_PER_CHUNK);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_CHUNK_LENGTH);
    assert_contains(res.damage[0].message, "runs past the end of the file");

    /* a shorter length lands inside the payload: CRC fails, the scan finds chunk 3 */
    lay = write_chunks(path, 3, NULL);
    uint32_t shorter = 5;
    poke(path, lay.chunk_off[1] + 4, &shorter, 4);
    res = read_all(path);
    assert_int_equal(res.calls, 2 * CALLS_PER_CHUNK);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_CHUNK_CRC);
    assert_int_equal(res.damage[0].resume_offset, lay.chunk_off[2]);
}

/* Records inside a chunk whose CRC is right but whose framing or bodies are wrong (a
 * writer bug): the good records are kept. */
static void test_record_damage(void **state)
{
    (void)state;
    const char *path = tmp_path("records.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 100);
    uint64_t w[4] = {0x1000, 64, 0, 0};
    tw_call(&c, 200, GW_API_cuMemAlloc_v2, 10, 0, w, 4);
    tw_call(&c, 300, GW_API_cuMemAlloc_v2, 10, 0, w, 2);  /* two words short */
    tw_call(&c, 400, GW_API_cuInit, 10, 0, NULL, 0);
    uint8_t no_dur[] = {GW_REC_CALL, 2, 0, GW_API_cuInit};  /* dt and api, no dur */
    size_t no_dur_at = c.len;
    tw_raw(&c, no_dur, sizeof no_dur);
    uint8_t cut[] = {GW_REC_CALL, 40, 1, 2};  /* body length past the chunk's end */
    size_t cut_at = c.len;
    tw_raw(&c, cut, sizeof cut);
    long at = tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 0);
    tw_begin(&c, 1000);
    tw_call(&c, 1000, GW_API_cuInit, 10, 0, NULL, 0);
    tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 1);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r;
    char err[256];
    assert_int_equal(gw_reader_open(path, &r, err, sizeof err), 0);
    struct gw_event ev;
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.u.alloc.bytes, 64);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.nwords, 2);
    assert_int_equal(ev.u.alloc.ptr, 0x1000);
    assert_int_equal(ev.u.alloc.stream_id, 0);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.api_id, GW_API_cuInit);
    assert_int_equal(ev.ts_ns, 400);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.ts_ns, 1000);
    assert_int_equal(gw_reader_next(r, &ev), 0);
    const struct gw_damage *d;
    assert_int_equal(gw_reader_damage(r, &d), 3);
    assert_int_equal(d[0].kind, GW_DAMAGE_RECORD);
    assert_contains(d[0].message, "expected 4 payload words in a cuMemAlloc_v2 record, found 2");
    assert_int_equal(d[1].kind, GW_DAMAGE_RECORD);
    assert_int_equal(d[1].offset, (uint64_t)at + 32 + no_dur_at);
    assert_contains(d[1].message, "expected 3 varints in the 2-byte body of a CALL record, found 2");
    assert_int_equal(d[2].kind, GW_DAMAGE_RECORD);
    assert_int_equal(d[2].lost_bytes, sizeof cut);
    assert_int_equal(d[2].offset, (uint64_t)at + 32 + cut_at);
    assert_int_equal(gw_reader_stats(r)->calls, 4);
    gw_reader_close(r);
}

/* Names defined after their first use resolve once the definitions are loaded first. */
static void test_defs_after_use(void **state)
{
    (void)state;
    const char *path = tmp_path("late-defs.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 100);
    uint64_t w[2] = {4, 0};
    tw_call(&c, 100, GW_API_cuLaunchKernel, 10, 0, w, 2);
    tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 0);
    tw_begin(&c, 0);
    tw_string(&c, 9, "late_kernel");
    uint64_t shape[10] = {4, 9, 0, 1, 1, 1, 32, 1, 1, 0};
    tw_record(&c, GW_REC_SHAPE, shape, 10, NULL, 0);
    tw_write_chunk(f, &c, 0, GW_CHUNK_DEFS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r;
    char err[256];
    struct gw_event ev;
    assert_int_equal(gw_reader_open(path, &r, err, sizeof err), 0);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_null(gw_reader_kernel_name(r, ev.u.launch.shape_id));
    gw_reader_close(r);

    assert_int_equal(gw_reader_open(path, &r, err, sizeof err), 0);
    gw_reader_load_defs(r);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_string_equal(gw_reader_kernel_name(r, ev.u.launch.shape_id), "late_kernel");
    size_t n = 1;
    while (gw_reader_next(r, &ev) > 0)
        n++;
    assert_int_equal(n, 3);  /* the launch and both definitions, once each */
    assert_int_equal(gw_reader_stats(r)->definitions, 2);
    assert_int_equal(gw_reader_stats(r)->first_ts_ns, 100);
    assert_int_equal(gw_reader_stats(r)->last_ts_ns, 110);  /* the launch's end */
    gw_reader_close(r);
}

/* Random damage never crashes the reader and never loses a chunk it did not touch. */
static void test_random_damage(void **state)
{
    (void)state;
    const char *clean = tmp_path("clean.gwt");
    struct layout lay = write_chunks(clean, 8, NULL);
    FILE *f = fopen(clean, "rb");
    assert_non_null(f);
    uint8_t *orig = malloc((size_t)lay.file_size);
    assert_int_equal(fread(orig, 1, (size_t)lay.file_size, f), (size_t)lay.file_size);
    fclose(f);
    uint8_t *bytes = malloc((size_t)lay.file_size);
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (int iter = 0; iter < 400; iter++) {
        memcpy(bytes, orig, (size_t)lay.file_size);
        int hits = 1 + iter % 4;
        int touched[8] = {0}, must_damage = 0;
        for (int k = 0; k < hits; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            long at = GW_FILE_HEADER_SIZE +
                      (long)((seed >> 20) % (uint64_t)(lay.file_size - GW_FILE_HEADER_SIZE));
            bytes[at] ^= (uint8_t)(1 + (seed >> 8) % 255);
            for (int ch = 0; ch < 8; ch++) {
                if (at < lay.chunk_off[ch] || at >= lay.chunk_end[ch])
                    continue;
                touched[ch] = 1;
                /* magic, payload_len, crc32 and payload are checked; tid, kind, flags,
                 * base_ts and seq are not covered by the CRC */
                long field = at - lay.chunk_off[ch];
                must_damage |= field < 8 || field >= 28;
            }
        }
        const char *path = tmp_path("mutant.gwt");
        f = create(path);
        fwrite(bytes, 1, (size_t)lay.file_size, f);
        fclose(f);
        struct read_result res = read_all(path);
        int untouched = 0;
        for (int ch = 0; ch < 8; ch++)
            untouched += !touched[ch];
        assert_true(res.stats.chunks >= (uint64_t)untouched);
        assert_true(res.calls >= (size_t)untouched * CALLS_PER_CHUNK);
        if (must_damage)
            assert_true(res.stats.damage_reports >= 1);
    }
    free(bytes);
    free(orig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_names),
        cmocka_unit_test(test_roundtrip_every_family),
        cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_byte_swapped),
        cmocka_unit_test(test_short_file),
        cmocka_unit_test(test_newer_min_reader_version),
        cmocka_unit_test(test_newer_version_readable),
        cmocka_unit_test(test_intact_file),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_crc_damage_middle),
        cmocka_unit_test(test_zeroed_chunk),
        cmocka_unit_test(test_stray_bytes),
        cmocka_unit_test(test_damage_then_truncation),
        cmocka_unit_test(test_seq_gap),
        cmocka_unit_test(test_zero_tail),
        cmocka_unit_test(test_bad_lengths),
        cmocka_unit_test(test_record_damage),
        cmocka_unit_test(test_defs_after_use),
        cmocka_unit_test(test_random_damage),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
