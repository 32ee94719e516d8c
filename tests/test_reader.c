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

#include "demangle.h"
#include "gw_busy.h"
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
    uint64_t last_call_ts;
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
        if (ev.kind == GW_EV_CALL)
            res.last_call_ts = ev.ts_ns;
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
    /* an abrupt end is reported like damage and counted apart */
    assert_int_equal(res.damage_callbacks, res.stats.damage_reports + res.stats.ended_abruptly);
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
/* write_chunks in a file of format `version` (its header says so, its CRCs are that
 * version's). */
static struct layout write_chunks_v(const char *path, int n, const uint32_t *seqs,
                                    unsigned version)
{
    struct layout lay;
    memset(&lay, 0, sizeof lay);
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    h.version = (uint16_t)version;
    h.min_reader_version = (uint16_t)(version < GW_MIN_READER_VERSION ? version
                                                                      : GW_MIN_READER_VERSION);
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
        lay.chunk_off[i] = tw_write_chunk_v(f, &c, 77, GW_CHUNK_EVENTS,
                                            seqs ? seqs[i] : (uint32_t)i, version);
        lay.chunk_end[i] = ftell(f);
    }
    lay.file_size = ftell(f);
    fclose(f);
    tw_free(&c);
    return lay;
}

static struct layout write_chunks(const char *path, int n, const uint32_t *seqs)
{
    return write_chunks_v(path, n, seqs, GW_FORMAT_VERSION);
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

/* Opens path (must succeed). */
static struct gw_reader *open_ok(const char *path)
{
    struct gw_reader *r;
    char err[512];
    if (gw_reader_open(path, &r, err, sizeof err) != 0)
        fail_msg("open failed: %s", err);
    return r;
}

/* The next event, which must be there and of this kind. */
static struct gw_event next_of(struct gw_reader *r, enum gw_event_kind kind)
{
    struct gw_event ev;
    assert_int_equal(gw_reader_next(r, &ev), 1);
    if (ev.kind != kind)
        fail_msg("expected a %s event, got %s (offset %" PRIu64 ")", gw_event_kind_name(kind),
                 gw_event_kind_name(ev.kind), ev.offset);
    return ev;
}

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
    /* every event kind has its own name */
    static const char *const kinds[] = {
        [GW_EV_CALL] = "call", [GW_EV_LOST] = "lost", [GW_EV_STRING] = "string",
        [GW_EV_SHAPE] = "shape", [GW_EV_STREAM] = "stream", [GW_EV_DEVICE] = "device",
        [GW_EV_CLOCK] = "clock", [GW_EV_THREAD] = "thread", [GW_EV_GPU_KERNEL] = "gpu_kernel",
        [GW_EV_GPU_MEMCPY] = "gpu_memcpy", [GW_EV_GPU_MEMSET] = "gpu_memset",
        [GW_EV_GPU_LOST] = "gpu_lost", [GW_EV_CORRELATION] = "correlation",
        [GW_EV_RANGE_PUSH] = "range_push", [GW_EV_RANGE_POP] = "range_pop",
        [GW_EV_MARK] = "mark", [GW_EV_RANGE_START] = "range_start",
        [GW_EV_RANGE_END] = "range_end", [GW_EV_STACK] = "stack",
        [GW_EV_CPU_THREAD] = "cpu_thread", [GW_EV_CPU_PROC] = "cpu_proc",
        [GW_EV_PYSTACK] = "pystack", [GW_EV_PYSITE] = "pysite", [GW_EV_PYTHON] = "python",
        [GW_EV_STACKSITE] = "stacksite", [GW_EV_GPU_WINDOW] = "gpu_window",
        [GW_EV_MEM_BLOCK] = "mem_block", [GW_EV_HOST_COPY] = "host_copy",
    };
    for (int k = GW_EV_CALL; k <= GW_EV_HOST_COPY; k++) {
        assert_string_equal(gw_event_kind_name((enum gw_event_kind)k), kinds[k]);
        assert_int_equal(gw_event_kind_is_def((enum gw_event_kind)k),
                         (k >= GW_EV_STRING && k <= GW_EV_THREAD) || k == GW_EV_STACK ||
                             k == GW_EV_PYSTACK || k == GW_EV_PYTHON || k == GW_EV_HOST_COPY);
    }
    assert_string_equal(gw_event_kind_name((enum gw_event_kind)99), "unknown");
    assert_string_equal(gw_gpu_copy_kind_name(GW_GPU_COPY_HTOD), "HtoD");
    assert_string_equal(gw_gpu_copy_kind_name(GW_GPU_COPY_DTOH), "DtoH");
    assert_string_equal(gw_gpu_copy_kind_name(GW_GPU_COPY_DTOD), "DtoD");
    assert_string_equal(gw_gpu_copy_kind_name(GW_GPU_COPY_PTOP), "PtoP");
    assert_string_equal(gw_gpu_copy_kind_name(0), "unknown");
    assert_string_equal(gw_gpu_copy_kind_name(11), "unknown");
    assert_string_equal(gw_gpu_memory_kind_name(GW_GPU_MEM_PAGEABLE), "pageable");
    assert_string_equal(gw_gpu_memory_kind_name(GW_GPU_MEM_PINNED), "pinned");
    assert_string_equal(gw_gpu_memory_kind_name(GW_GPU_MEM_MANAGED), "managed");
    assert_string_equal(gw_gpu_memory_kind_name(1000), "unknown");
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
        assert_int_equal(ev.call_id, (uint64_t)1234 << 32 | i);
        assert_int_equal(ev.call_id_unsure, 0);
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
    assert_int_equal(ev.u.lost.calls, 42);  /* no calls word: all of them */
    assert_int_equal(ev.call_id, 0);
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
    const char *path = tmp_path("v4.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    h.version = 4;
    h.min_reader_version = 3;
    tw_write_header(f, &h);
    fclose(f);
    char want[600];
    snprintf(want, sizeof want,
             "%s: written by format v4, needs a reader of v3 or newer; this reader reads v2",
             path);
    assert_string_equal(open_error(path), want);
}

/* A v3 file a v2 reader may read: bigger header, new record types, a new chunk kind,
 * extra payload words. Everything known is read exactly, the rest skipped, no damage. */
static void test_newer_version_readable(void **state)
{
    (void)state;
    const char *path = tmp_path("v3.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    h.version = 3;
    h.min_reader_version = 2;
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

    /* the same unknown chunk kind in a file of this reader's version is damage */
    path = tmp_path("v2kind.gwt");
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
        snprintf(want, sizeof want, "offset %ld: ended abruptly", start);
        assert_contains(res.damage[0].message, want);
        assert_contains(res.damage[0].message, path);
        /* a killed writer's file: an abrupt end, not damage */
        assert_int_equal(res.stats.damage_reports, 0);
        assert_int_equal(res.stats.ended_abruptly, 1);
        assert_int_equal(res.stats.ended_at, start);
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

/* Damage to a chunk header's own fields (thread, kind, flags, base time, sequence
 * number) fails the chunk's CRC like damage to its payload: a base time off by one bit
 * would otherwise move every event of the chunk without a word. */
static void test_header_field_damage(void **state)
{
    (void)state;
    const long fields[] = {8, 11, 12, 14, 16, 19, 23, 24, 27};  /* tid kind flags ts seq */
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const char *path = tmp_path("hdr.gwt");
        struct layout lay = write_chunks(path, 3, NULL);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        uint8_t byte;
        assert_int_equal(fseek(f, lay.chunk_off[1] + fields[i], SEEK_SET), 0);
        assert_int_equal(fread(&byte, 1, 1, f), 1);
        fclose(f);
        byte ^= 0x04;
        poke(path, lay.chunk_off[1] + fields[i], &byte, 1);
        struct read_result res = read_all(path);
        assert_int_equal(res.calls, 2 * CALLS_PER_CHUNK);
        assert_int_equal(res.stats.chunks, 2);
        assert_int_equal(res.damage[0].kind, GW_DAMAGE_CHUNK_CRC);
        assert_int_equal(res.damage[0].offset, lay.chunk_off[1]);
        assert_int_equal(res.damage[0].resume_offset, lay.chunk_off[2]);
        assert_int_equal(res.damage[0].lost_bytes, lay.chunk_off[2] - lay.chunk_off[1]);
        assert_contains(res.damage[0].message, "of its header and payload");
        assert_int_equal(res.stats.damaged_bytes, lay.chunk_off[2] - lay.chunk_off[1]);
        /* the chunk after it is read at its own times */
        assert_int_equal(res.last_call_ts, 2000000000ull + (3 * CALLS_PER_CHUNK - 1) * 5000);
    }
}

/* v1 files (CRC of the payload alone) still read: intact, payload damage caught, header
 * fields as they are. */
static void test_v1_file(void **state)
{
    (void)state;
    const char *path = tmp_path("v1.gwt");
    struct layout lay = write_chunks_v(path, 3, NULL, 1);
    struct read_result res = read_all(path);
    assert_int_equal(res.calls, 3 * CALLS_PER_CHUNK);
    assert_int_equal(res.stats.damage_reports, 0);

    uint8_t bad = 0xFF;
    poke(path, lay.chunk_off[1] + 32 + 7, &bad, 1);
    res = read_all(path);
    assert_int_equal(res.calls, 2 * CALLS_PER_CHUNK);
    assert_int_equal(res.damage[0].kind, GW_DAMAGE_CHUNK_CRC);
    assert_int_equal(res.damage[0].offset, lay.chunk_off[1]);
    assert_contains(res.damage[0].message, "of its payload,");

    lay = write_chunks_v(path, 3, NULL, 1);
    uint8_t late = 0x7F;  /* the base time's top byte: v1 cannot tell */
    poke(path, lay.chunk_off[1] + 23, &late, 1);
    res = read_all(path);
    assert_int_equal(res.calls, 3 * CALLS_PER_CHUNK);
    assert_int_equal(res.stats.damage_reports, 0);
    assert_int_equal(res.last_call_ts, 2000000000ull + (3 * CALLS_PER_CHUNK - 1) * 5000);
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
    /* graph and host-function launches carry a third word (the handle): one short each */
    const unsigned handle_launches[4] = {GW_API_cuGraphLaunch, GW_API_cuGraphLaunch_ptsz,
                                         GW_API_cuLaunchHostFunc, GW_API_cuLaunchHostFunc_ptsz};
    for (int i = 0; i < 4; i++)
        tw_call(&c, 310 + (uint64_t)i, handle_launches[i], 10, 0, w, 2);
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
    for (int i = 0; i < 4; i++) {
        assert_int_equal(gw_reader_next(r, &ev), 1);
        assert_int_equal(ev.api_id, handle_launches[i]);
        assert_int_equal(ev.nwords, 2);
        assert_int_equal(ev.u.launch.handle, 0);
    }
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.api_id, GW_API_cuInit);
    assert_int_equal(ev.ts_ns, 400);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.ts_ns, 1000);
    assert_int_equal(gw_reader_next(r, &ev), 0);
    const struct gw_damage *d;
    assert_int_equal(gw_reader_damage(r, &d), 7);
    assert_int_equal(d[0].kind, GW_DAMAGE_RECORD);
    assert_contains(d[0].message, "expected 4 payload words in a cuMemAlloc_v2 record, found 2");
    for (int i = 0; i < 4; i++) {
        char expected[96];
        snprintf(expected, sizeof expected, "expected 3 payload words in a %s record, found 2",
                 gw_api_name(handle_launches[i]));
        assert_contains(d[1 + i].message, expected);
        assert_int_equal(d[1 + i].lost_bytes, 0);  /* the call is kept */
    }
    assert_int_equal(d[5].kind, GW_DAMAGE_RECORD);
    assert_int_equal(d[5].offset, (uint64_t)at + 32 + no_dur_at);
    assert_contains(d[5].message, "expected 3 varints in the 2-byte body of a CALL record, found 2");
    assert_int_equal(d[5].lost_bytes, 0);  /* its bytes are skipped whole, as its length says */
    assert_int_equal(d[6].kind, GW_DAMAGE_RECORD);
    assert_int_equal(d[6].lost_bytes, sizeof cut);
    assert_int_equal(d[6].offset, (uint64_t)at + 32 + cut_at);
    assert_int_equal(gw_reader_stats(r)->calls, 8);
    gw_reader_close(r);

    /* call numbers: the undecodable CALL record (no dur) still had number 3; the cut
     * record's bytes may have held calls, so the next chunk's numbers are unsure */
    assert_int_equal(gw_reader_open(path, &r, err, sizeof err), 0);
    uint64_t ids[8];
    unsigned unsure[8];
    for (int i = 0; i < 8; i++) {
        assert_int_equal(gw_reader_next(r, &ev), 1);
        ids[i] = ev.call_id;
        unsure[i] = ev.call_id_unsure;
    }
    assert_int_equal(ids[0], (uint64_t)5 << 32 | 0);
    assert_int_equal(ids[6], (uint64_t)5 << 32 | 6);
    assert_int_equal(unsure[6], 0);
    assert_int_equal(ids[7], (uint64_t)5 << 32 | 8);
    assert_int_equal(unsure[7], 1);
    assert_int_equal(gw_reader_stats(r)->calls_unsure, 1);
    gw_reader_close(r);
}

/* A varint of more than 10 bytes in a call's dt, api, dur or result, or in a kernel
 * record's words: the record is damage, reported where it starts, never read with the bytes
 * skipped; in a payload word: the call is kept, the word missing and reported. The records
 * around them read as written. */
static void test_overlong_varints(void **state)
{
    (void)state;
    const char *path = tmp_path("overlong.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 100);
    enum { LONG = 11 };  /* 0x80 x 10 then 0x01: one byte past the longest uint64 varint */
    size_t at[6];
    for (int field = 0; field < 6; field++) {
        tw_call(&c, 200 + 100 * (uint64_t)field, GW_API_cuInit, 10, 0, NULL, 0);
        /* field 0-2: dt, api, dur of a CALL; 3: a CALL_ERR's result; 4: a payload word;
         * 5: a GPU_KERNEL's first word */
        uint8_t body[64];
        size_t n = 0;
        unsigned words = field == 5 ? 7 : field == 3 ? 4 : field == 4 ? 4 : 3;
        for (unsigned w = 0; w < words; w++) {
            int is_long = (field <= 2 && w == (unsigned)field) || (field == 3 && w == 3) ||
                          (field == 4 && w == 3) || (field == 5 && w == 1);
            if (is_long) {
                memset(body + n, 0x80, LONG - 1);
                body[n + LONG - 1] = 0x01;
                n += LONG;
            } else {
                body[n++] = w == 1 && field != 5 ? GW_API_cuMemFree_v2 : 2;
            }
        }
        uint8_t type = field == 5 ? GW_REC_GPU_KERNEL : field == 3 ? GW_REC_CALL_ERR
                                                                     : GW_REC_CALL;
        uint8_t head[2] = {type, (uint8_t)n};
        at[field] = c.len;
        tw_raw(&c, head, 2);
        tw_raw(&c, body, n);
    }
    tw_call(&c, 900, GW_API_cuInit, 10, 0, NULL, 0);
    long chunk = tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r = open_ok(path);
    struct gw_event ev;
    /* the calls around each, and the one whose payload word is bad: its call kept, the
     * word missing (reported twice: the word, then the words short) */
    const unsigned apis[8] = {GW_API_cuInit, GW_API_cuInit, GW_API_cuInit, GW_API_cuInit,
                              GW_API_cuInit, GW_API_cuMemFree_v2, GW_API_cuInit, GW_API_cuInit};
    for (int i = 0; i < 8; i++) {
        assert_int_equal(gw_reader_next(r, &ev), 1);
        assert_int_equal(ev.kind, GW_EV_CALL);
        assert_int_equal(ev.api_id, apis[i]);
    }
    assert_int_equal(ev.ts_ns % 100, 5);  /* (the damaged records' dt counted: 900 + 5) */
    assert_int_equal(gw_reader_next(r, &ev), 0);
    const struct gw_damage *d;
    assert_int_equal(gw_reader_damage(r, &d), 7);
    const int field_of[7] = {0, 1, 2, 3, 4, 4, 5};
    for (int i = 0; i < 7; i++) {
        assert_int_equal(d[i].kind, GW_DAMAGE_RECORD);
        assert_int_equal(d[i].offset, (uint64_t)chunk + 32 + at[field_of[i]]);
    }
    assert_contains(d[4].message, "payload word 1 of a CALL record");
    assert_int_equal(gw_reader_stats(r)->calls, 8);
    assert_int_equal(gw_reader_stats(r)->gpu_kernels, 0);
    gw_reader_close(r);
}

/* Names defined after their first use resolve once the definitions are loaded first. */
/* A call record of more payload words than an event holds (a newer writer's): the first
 * GW_EVENT_MAX_WORDS are kept, the others counted and dropped, never stored past the
 * event's words; the call and the one after it read as written, with no damage. */
static void test_more_words_than_an_event_holds(void **state)
{
    (void)state;
    const char *path = tmp_path("many_words.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 100);
    tw_call(&c, 150, GW_API_cuInit, 10, 0, NULL, 0);
    uint8_t rec[2 + 2 * GW_VARINT_MAX + 60];
    size_t n = 2;
    rec[n++] = 100;  /* dt 50, zigzag */
    n += gw_put_uvarint(rec + n, GW_API_cuMemAlloc_v2);
    rec[n++] = 7;    /* dur */
    for (int i = 0; i < 60; i++)
        rec[n++] = (uint8_t)(i + 1);
    rec[0] = GW_REC_CALL;
    rec[1] = (uint8_t)(n - 2);
    tw_raw(&c, rec, n);
    c.last_ts = 200;
    tw_call(&c, 300, GW_API_cuInit, 10, 0, NULL, 0);
    tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r = open_ok(path);
    struct gw_event ev;
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.ts_ns, 150);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.api_id, GW_API_cuMemAlloc_v2);
    assert_int_equal(ev.ts_ns, 200);
    assert_int_equal(ev.dur_ns, 7);
    assert_int_equal(ev.call_id, (uint64_t)5 << 32 | 1);
    assert_int_equal(ev.nwords, GW_EVENT_MAX_WORDS);
    for (unsigned i = 0; i < GW_EVENT_MAX_WORDS; i++)
        assert_int_equal(ev.words[i], i + 1);
    assert_int_equal(ev.u.alloc.ptr, 1);
    assert_int_equal(ev.u.alloc.stack_id, 5);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.api_id, GW_API_cuInit);
    assert_int_equal(ev.ts_ns, 300);
    assert_int_equal(ev.call_id, (uint64_t)5 << 32 | 2);
    assert_int_equal(gw_reader_next(r, &ev), 0);
    assert_int_equal(gw_reader_stats(r)->damage_reports, 0);
    gw_reader_close(r);
}

/* A kernel record whose optional `call` word is over-long: the record is read, linked to
 * no call, and the word reported where the record starts. */
static void test_overlong_call_word(void **state)
{
    (void)state;
    const char *path = tmp_path("overlong_call.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    h.feature_flags |= GW_FEAT_GPU_ACTIVITY;
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 100);
    tw_call(&c, 150, GW_API_cuLaunchKernel, 10, 0, (const uint64_t[]){1, 0}, 2);
    uint8_t rec[2 + 7 + 11];
    size_t n = 2;
    rec[n++] = 100;  /* dt 50, zigzag */
    const uint8_t words[6] = {20, 1, 0, 0, 0, 0};  /* dur, correlation, device, stream... */
    for (int i = 0; i < 6; i++)
        rec[n++] = words[i];
    memset(rec + n, 0xFF, 10);  /* the call word: 11 bytes, one past the longest varint */
    rec[n + 10] = 0x01;
    n += 11;
    rec[0] = GW_REC_GPU_KERNEL;
    rec[1] = (uint8_t)(n - 2);
    size_t kernel_at = c.len;
    tw_raw(&c, rec, n);
    c.last_ts = 200;
    tw_call(&c, 300, GW_API_cuInit, 10, 0, NULL, 0);
    long chunk = tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r = open_ok(path);
    struct gw_event ev;
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_CALL);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_GPU_KERNEL);  /* no CORRELATION before it */
    assert_int_equal(ev.ts_ns, 200);
    assert_int_equal(ev.dur_ns, 20);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, GW_EV_CALL);
    assert_int_equal(ev.ts_ns, 300);
    assert_int_equal(gw_reader_next(r, &ev), 0);
    const struct gw_damage *d;
    assert_int_equal(gw_reader_damage(r, &d), 1);
    assert_int_equal(d[0].kind, GW_DAMAGE_RECORD);
    assert_int_equal(d[0].offset, (uint64_t)chunk + 32 + kernel_at);
    assert_int_equal(gw_reader_stats(r)->correlations, 0);
    gw_reader_close(r);
}

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

/* STACK definitions (written after the allocations that name them) round-trip through the
 * definitions pass; allocating calls carry the optional stack id word, older 4-word
 * allocations read as stack 0 without damage; a STACK cut short keeps its whole frames. */
static void test_stack_roundtrip(void **state)
{
    (void)state;
    const char *path = tmp_path("stacks.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 100);
    const uint64_t ptr = 0x7F0000200000ull;
    uint64_t alloc[5] = {ptr, 4096, 0, 0, 5};
    tw_call(&c, 100, GW_API_cuMemAlloc_v2, 10, 0, alloc, 5);
    uint64_t old_alloc[4] = {ptr + 4096, 4096, 0, 0};
    tw_call(&c, 200, GW_API_cuMemAlloc_v2, 10, 0, old_alloc, 4);
    uint64_t host[4] = {0x10000, 64, 0, 6};
    tw_call(&c, 300, GW_API_cuMemHostAlloc, 10, 0, host, 4);
    uint64_t create_words[4] = {0xAB, 2 << 20, 0, 5};
    tw_call(&c, 400, GW_API_cuMemCreate, 10, 0, create_words, 4);
    tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 0);

    tw_begin(&c, 0);
    tw_string(&c, 1, "/opt/app/train");
    tw_string(&c, 2, "leak_step");
    tw_string(&c, 3, "main");
    uint64_t stack5[2 + 3 * GW_STACK_FRAME_WORDS] = {
        5, 3, 1, 0x1234, 2, 0x34, 1, 0x1500, 3, 0x20, 1, 0x99, 0, 0};
    tw_record(&c, GW_REC_STACK, stack5, 2 + 3 * GW_STACK_FRAME_WORDS, NULL, 0);
    uint64_t stack6[2 + GW_STACK_FRAME_WORDS] = {6, 2, 1, 0x777, 0, 0};  /* 1 of 2 frames */
    tw_record(&c, GW_REC_STACK, stack6, 2 + GW_STACK_FRAME_WORDS, NULL, 0);
    tw_write_chunk(f, &c, 0, GW_CHUNK_DEFS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r;
    char err[256];
    struct gw_event ev;
    assert_int_equal(gw_reader_open(path, &r, err, sizeof err), 0);
    gw_reader_load_defs(r);
    const struct gw_stack *st = gw_reader_stack(r, 5);
    assert_non_null(st);
    assert_int_equal(st->id, 5);
    assert_int_equal(st->nframes, 3);
    assert_int_equal(st->frames[0].module_id, 1);
    assert_int_equal(st->frames[0].module_offset, 0x1234);
    assert_string_equal(gw_reader_string(r, st->frames[0].symbol_id, NULL), "leak_step");
    assert_int_equal(st->frames[0].symbol_offset, 0x34);
    assert_string_equal(gw_reader_string(r, st->frames[1].symbol_id, NULL), "main");
    assert_int_equal(st->frames[2].module_offset, 0x99);
    assert_int_equal(st->frames[2].symbol_id, 0);
    assert_null(gw_reader_stack(r, 7));

    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.api_id, GW_API_cuMemAlloc_v2);
    assert_int_equal(ev.u.alloc.ptr, ptr);
    assert_int_equal(ev.u.alloc.stack_id, 5);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.u.alloc.bytes, 4096);
    assert_int_equal(ev.u.alloc.stack_id, 0);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.api_id, GW_API_cuMemHostAlloc);
    assert_int_equal(ev.u.hostmem.bytes, 64);
    assert_int_equal(ev.u.hostmem.stack_id, 6);
    assert_int_equal(gw_reader_next(r, &ev), 1);
    assert_int_equal(ev.api_id, GW_API_cuMemCreate);
    assert_int_equal(ev.u.vmm.handle, 0xAB);
    assert_int_equal(ev.u.vmm.stack_id, 5);
    assert_int_equal(gw_reader_damage(r, &(const struct gw_damage *){NULL}), 0);

    int stacks = 0;
    while (gw_reader_next(r, &ev) > 0) {
        if (ev.kind != GW_EV_STACK)
            continue;
        assert_true(gw_event_kind_is_def(ev.kind));
        assert_string_equal(gw_event_kind_name(ev.kind), "stack");
        if (ev.u.stack.id == 5) {
            assert_int_equal(ev.u.stack.nframes, 3);
            /* the second pass keeps the entry of the first: frames stay where they were */
            assert_ptr_equal(ev.u.stack.frames, st->frames);
        } else {
            assert_int_equal(ev.u.stack.id, 6);
            assert_int_equal(ev.u.stack.nframes, 1);
            assert_int_equal(ev.u.stack.frames[0].module_offset, 0x777);
        }
        stacks++;
    }
    assert_int_equal(stacks, 2);
    const struct gw_damage *damage;
    assert_int_equal(gw_reader_damage(r, &damage), 1);  /* STACK 6 is short */
    assert_int_equal(damage[0].kind, GW_DAMAGE_RECORD);
    assert_non_null(strstr(damage[0].message, "STACK 6"));
    assert_int_equal(gw_reader_stats(r)->definitions, 5);
    assert_int_equal(gw_reader_stats(r)->unknown_records, 0);
    gw_reader_close(r);
}

/* C++ names read as people write them; other names, and a mangled-looking name that is
 * not one, stay as they are; the result is cut to the buffer. */
static void test_demangle(void **state)
{
    (void)state;
    char out[128];
    assert_string_equal(gw_demangle("_ZN2at6native19_local_scalar_denseERKNS_6TensorE", out,
                                    sizeof out),
                        "at::native::_local_scalar_dense(at::Tensor const&)");
    assert_string_equal(gw_demangle("cuMemAlloc_v2", out, sizeof out), "cuMemAlloc_v2");
    assert_string_equal(gw_demangle("_Znot a name", out, sizeof out), "_Znot a name");
    char small[8];
    assert_string_equal(gw_demangle("_ZN2at6native4itemEv", small, sizeof small), "at::nat");
    assert_string_equal(gw_demangle(NULL, out, sizeof out), "");
}

/* Python stacks: PYTHON and PYSTACK definitions, and a PYSITE naming calls of its thread by
 * number (ids from the chunk's CALL_BASE serial); a PYSITE with a count of 0, or cut
 * short, is damage and names nothing. */
static void test_pystack_roundtrip(void **state)
{
    (void)state;
    const char *path = tmp_path("pystacks.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 0);
    tw_string(&c, 1, "/home/u/train.py");
    tw_string(&c, 2, "train_step");
    tw_string(&c, 3, "<module>");
    tw_string(&c, 4, "3.12.1 (main) [GCC]");
    uint64_t python[2] = {4, 1};
    tw_record(&c, GW_REC_PYTHON, python, 2, NULL, 0);
    uint64_t stack[2 + 2 * GW_PYSTACK_FRAME_WORDS] = {7, 2, 1, 87, 2, 1, 120, 3};
    tw_record(&c, GW_REC_PYSTACK, stack, 2 + 2 * GW_PYSTACK_FRAME_WORDS, NULL, 0);
    tw_write_chunk(f, &c, 0, GW_CHUNK_DEFS, 0);

    tw_begin(&c, 100);
    uint64_t base[2] = {3, 10};
    tw_record(&c, GW_REC_CALL_BASE, base, 2, NULL, 0);
    uint64_t sync[2] = {0, 0};
    tw_call(&c, 100, GW_API_cuStreamSynchronize, 10, 0, sync, 2);
    tw_call(&c, 200, GW_API_cuStreamSynchronize, 10, 0, sync, 2);
    tw_call(&c, 300, GW_API_cuStreamSynchronize, 10, 0, sync, 2);
    uint64_t site[3] = {7, 11, 2};
    tw_record(&c, GW_REC_PYSITE, site, 3, NULL, 0);
    uint64_t empty[3] = {7, 13, 0};
    tw_record(&c, GW_REC_PYSITE, empty, 3, NULL, 0);
    tw_record(&c, GW_REC_PYSITE, site, 2, NULL, 0);
    tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r;
    char err[256];
    struct gw_event ev;
    assert_int_equal(gw_reader_open(path, &r, err, sizeof err), 0);
    int pythons = 0, stacks = 0, sites = 0, calls = 0;
    uint64_t call_ids[3] = {0};
    while (gw_reader_next(r, &ev) > 0) {
        switch (ev.kind) {
        case GW_EV_PYTHON:
            pythons++;
            assert_true(gw_event_kind_is_def(ev.kind));
            assert_string_equal(gw_event_kind_name(ev.kind), "python");
            assert_int_equal(ev.u.python.version_id, 4);
            assert_int_equal(ev.u.python.follows_releases, 1);
            break;
        case GW_EV_PYSTACK:
            stacks++;
            assert_true(gw_event_kind_is_def(ev.kind));
            assert_int_equal(ev.u.pystack.id, 7);
            assert_int_equal(ev.u.pystack.nframes, 2);
            assert_int_equal(ev.u.pystack.frames[0].line, 87);
            assert_string_equal(gw_reader_string(r, ev.u.pystack.frames[0].function_id, NULL),
                                "train_step");
            assert_int_equal(ev.u.pystack.frames[1].line, 120);
            assert_int_equal(ev.u.pystack.frames[1].function_id, 3);
            break;
        case GW_EV_CALL:
            call_ids[calls++] = ev.call_id;
            break;
        case GW_EV_PYSITE:
            sites++;
            assert_false(gw_event_kind_is_def(ev.kind));
            assert_int_equal(ev.u.site.stack_id, 7);
            assert_int_equal(ev.u.site.first_call_id, 3ull << 32 | 11);
            assert_int_equal(ev.u.site.last_call_id, 3ull << 32 | 12);
            break;
        default:
            break;
        }
    }
    assert_int_equal(pythons, 1);
    assert_int_equal(stacks, 1);
    assert_int_equal(calls, 3);
    assert_int_equal(sites, 1);
    /* the site names the second and third calls */
    assert_int_equal(call_ids[0], 3ull << 32 | 10);
    assert_int_equal(call_ids[2], 3ull << 32 | 12);
    const struct gw_pystack *st = gw_reader_pystack(r, 7);
    assert_non_null(st);
    assert_string_equal(gw_reader_string(r, st->frames[0].file_id, NULL), "/home/u/train.py");
    assert_null(gw_reader_pystack(r, 8));
    assert_int_equal(gw_reader_pystack_count(r), 1);
    const struct gw_damage *damage;
    assert_int_equal(gw_reader_damage(r, &damage), 2);
    assert_non_null(strstr(damage[0].message, "PYSITE"));
    assert_non_null(strstr(damage[0].message, "count of 0"));
    assert_non_null(strstr(damage[1].message, "found 2 varint"));
    assert_int_equal(gw_reader_stats(r)->unknown_records, 0);
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
                must_damage = 1;  /* every byte of a chunk is checked (v2) */
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
        /* (a flipped length in the last chunk that runs past the end reads as the cut
         * chunk a killed writer leaves: said, as an abrupt end) */
        if (must_damage)
            assert_true(res.stats.damage_reports + res.stats.ended_abruptly >= 1);
    }
    free(bytes);
    free(orig);
}

/* ---- issue 3: GPU timeline, correlation, NVTX ---- */

/* Every new record, with the optional definition words present and absent, words of a
 * newer writer after them, and times going back (GPU records are not in time order). */
static void test_roundtrip_gpu_records(void **state)
{
    (void)state;
    const char *path = tmp_path("gpu.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    h.feature_flags |= GW_FEAT_GPU_ACTIVITY | GW_FEAT_NVTX;
    h.cupti_status = GW_CUPTI_ACTIVE;
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 0);
    tw_string(&c, 1, "gemm_kernel");
    tw_string(&c, 2, "step");
    tw_string(&c, 3, "my domain");
    uint64_t gpu_shape[12] = {9, 1, 0, 128, 2, 1, 256, 1, 1, 8192, 96, 49152};
    tw_record(&c, GW_REC_SHAPE, gpu_shape, 12, NULL, 0);
    uint64_t host_shape[10] = {4, 1, 0xF00D, 1, 1, 1, 32, 1, 1, 0};
    tw_record(&c, GW_REC_SHAPE, host_shape, 10, NULL, 0);
    uint64_t one_more[11] = {5, 1, 0, 1, 1, 1, 1, 1, 1, 0, 40};
    tw_record(&c, GW_REC_SHAPE, one_more, 11, NULL, 0);
    uint64_t stream_cupti[3] = {3, 0x5500AA, 77};
    tw_record(&c, GW_REC_STREAM, stream_cupti, 3, NULL, 0);
    uint64_t stream_plain[2] = {4, 0x5500BB};
    tw_record(&c, GW_REC_STREAM, stream_plain, 2, NULL, 0);
    uint64_t stream_newer[4] = {5, 0x5500CC, 78, 12345};  /* a word we do not know */
    tw_record(&c, GW_REC_STREAM, stream_newer, 4, NULL, 0);
    uint64_t corr_def[2] = {500, (uint64_t)7 << 32 | 1};
    tw_record(&c, GW_REC_CORRELATION, corr_def, 2, NULL, 0);
    tw_write_chunk(f, &c, 0, GW_CHUNK_DEFS, 0);

    const uint64_t t0 = 3000000000ull;
    tw_begin(&c, t0);
    uint64_t kernel[7] = {2500, 501, 1, 77, 9, 0xABCDEF, 999 /* newer word */};
    tw_timed(&c, GW_REC_GPU_KERNEL, t0 + 1000, kernel, 7);
    uint64_t memcpy_w[9] = {800, 502, 0, 78, 1 << 20, GW_GPU_COPY_HTOD, GW_GPU_MEM_PAGEABLE,
                            GW_GPU_MEM_DEVICE, 0};
    tw_timed(&c, GW_REC_GPU_MEMCPY, t0 + 400, memcpy_w, 9);  /* earlier: negative dt */
    uint64_t memset_w[7] = {300, 503, 2, 0, 4096, GW_GPU_MEM_DEVICE, 17};
    tw_timed(&c, GW_REC_GPU_MEMSET, t0 + 5000, memset_w, 7);
    uint64_t lost = 12;
    tw_timed(&c, GW_REC_GPU_LOST, t0 + 6000, &lost, 1);
    uint64_t corr[2] = {501, (uint64_t)7 << 32 | 2};
    tw_record(&c, GW_REC_CORRELATION, corr, 2, NULL, 0);
    uint64_t push[2] = {0, 2}, pop[1] = {0}, mark[2] = {3, 2}, start[3] = {3, 2, 42},
             end[1] = {42};
    tw_timed(&c, GW_REC_RANGE_PUSH, t0 + 7000, push, 2);
    tw_timed(&c, GW_REC_MARK, t0 + 7100, mark, 2);
    tw_timed(&c, GW_REC_RANGE_START, t0 + 7200, start, 3);
    tw_timed(&c, GW_REC_RANGE_POP, t0 + 7300, pop, 1);
    tw_timed(&c, GW_REC_RANGE_END, t0 + 7400, end, 1);
    uint64_t cpu_thread[2] = {4242, 730000000}, cpu_proc[5] = {2100000000, 3, 5400000000, 2,
                                                               77 /* newer word */};
    /* the waits' optional words and the time it waited runnable (runq_ns), then a newer
     * word after them */
    uint64_t cpu_waits[6] = {4243, 910000000, 400000000, 380000000, 5000, 99};
    uint64_t window_open[1] = {1}, window_shut[1] = {0};
    tw_timed(&c, GW_REC_CPU_THREAD, t0 + 7500, cpu_thread, 2);
    tw_timed(&c, GW_REC_CPU_THREAD, t0 + 7500, cpu_waits, 6);
    tw_timed(&c, GW_REC_CPU_PROC, t0 + 7500, cpu_proc, 5);
    tw_timed(&c, GW_REC_GPU_WINDOW, t0 + 7600, window_open, 1);
    tw_timed(&c, GW_REC_GPU_WINDOW, t0 + 7700, window_shut, 1);
    tw_write_chunk(f, &c, 99, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r = open_ok(path);
    struct gw_event ev;
    for (int i = 0; i < 3; i++)
        next_of(r, GW_EV_STRING);
    ev = next_of(r, GW_EV_SHAPE);
    assert_int_equal(ev.u.shape.id, 9);
    assert_int_equal(ev.u.shape.func, 0);
    assert_int_equal(ev.u.shape.grid[1], 2);
    assert_int_equal(ev.u.shape.shared_mem, 8192);
    assert_int_equal(ev.u.shape.registers, 96);
    assert_int_equal(ev.u.shape.static_shared_mem, 49152);
    ev = next_of(r, GW_EV_SHAPE);
    assert_int_equal(ev.u.shape.registers, 0);
    assert_int_equal(ev.u.shape.static_shared_mem, 0);
    ev = next_of(r, GW_EV_SHAPE);
    assert_int_equal(ev.u.shape.registers, 40);
    assert_int_equal(ev.u.shape.static_shared_mem, 0);
    ev = next_of(r, GW_EV_STREAM);
    assert_int_equal(ev.u.stream.id, 3);
    assert_int_equal(ev.u.stream.handle, 0x5500AA);
    assert_int_equal(ev.u.stream.cupti_stream_id, 77);
    ev = next_of(r, GW_EV_STREAM);
    assert_int_equal(ev.u.stream.cupti_stream_id, 0);
    ev = next_of(r, GW_EV_STREAM);
    assert_int_equal(ev.u.stream.cupti_stream_id, 78);
    ev = next_of(r, GW_EV_CORRELATION);
    assert_int_equal(ev.tid, 0);
    assert_int_equal(ev.u.correlation.correlation_id, 500);
    assert_int_equal(ev.u.correlation.call_id, (uint64_t)7 << 32 | 1);

    ev = next_of(r, GW_EV_GPU_KERNEL);
    assert_int_equal(ev.tid, 99);
    assert_int_equal(ev.ts_ns, t0 + 1000);
    assert_int_equal(ev.dur_ns, 2500);
    assert_int_equal(ev.u.gpu_kernel.correlation_id, 501);
    assert_int_equal(ev.u.gpu_kernel.device, 1);
    assert_int_equal(ev.u.gpu_kernel.stream_id, 77);
    assert_int_equal(ev.u.gpu_kernel.shape_id, 9);
    assert_int_equal(ev.u.gpu_kernel.graph_id, 0xABCDEF);
    assert_int_equal(ev.family, -1);
    assert_string_equal(gw_reader_kernel_name(r, ev.u.gpu_kernel.shape_id), "gemm_kernel");
    uint64_t id;
    assert_int_equal(gw_reader_stream_by_cupti(r, ev.u.gpu_kernel.stream_id, &id), 0);
    assert_int_equal(id, 3);
    ev = next_of(r, GW_EV_GPU_MEMCPY);
    assert_int_equal(ev.ts_ns, t0 + 400);
    assert_int_equal(ev.dur_ns, 800);
    assert_int_equal(ev.u.gpu_memcpy.correlation_id, 502);
    assert_int_equal(ev.u.gpu_memcpy.device, 0);
    assert_int_equal(ev.u.gpu_memcpy.stream_id, 78);
    assert_int_equal(ev.u.gpu_memcpy.bytes, 1 << 20);
    assert_int_equal(ev.u.gpu_memcpy.copy_kind, GW_GPU_COPY_HTOD);
    assert_int_equal(ev.u.gpu_memcpy.src_kind, GW_GPU_MEM_PAGEABLE);
    assert_int_equal(ev.u.gpu_memcpy.dst_kind, GW_GPU_MEM_DEVICE);
    assert_int_equal(gw_reader_stream_by_cupti(r, ev.u.gpu_memcpy.stream_id, &id), 0);
    assert_int_equal(id, 5);
    ev = next_of(r, GW_EV_GPU_MEMSET);
    assert_int_equal(ev.ts_ns, t0 + 5000);
    assert_int_equal(ev.dur_ns, 300);
    assert_int_equal(ev.u.gpu_memset.correlation_id, 503);
    assert_int_equal(ev.u.gpu_memset.device, 2);
    assert_int_equal(ev.u.gpu_memset.bytes, 4096);
    assert_int_equal(ev.u.gpu_memset.memory_kind, GW_GPU_MEM_DEVICE);
    assert_int_equal(ev.u.gpu_memset.graph_id, 17);
    ev = next_of(r, GW_EV_GPU_LOST);
    assert_int_equal(ev.ts_ns, t0 + 6000);
    assert_int_equal(ev.u.gpu_lost.count, 12);
    ev = next_of(r, GW_EV_CORRELATION);
    assert_int_equal(ev.tid, 99);
    assert_int_equal(ev.ts_ns, 0);
    assert_int_equal(ev.u.correlation.correlation_id, 501);
    assert_int_equal(ev.u.correlation.call_id, (uint64_t)7 << 32 | 2);
    ev = next_of(r, GW_EV_RANGE_PUSH);
    assert_int_equal(ev.ts_ns, t0 + 7000);
    assert_int_equal(ev.u.nvtx.domain_id, 0);
    assert_int_equal(ev.u.nvtx.name_id, 2);
    ev = next_of(r, GW_EV_MARK);
    assert_int_equal(ev.ts_ns, t0 + 7100);
    assert_int_equal(ev.u.nvtx.domain_id, 3);
    assert_int_equal(ev.u.nvtx.name_id, 2);
    ev = next_of(r, GW_EV_RANGE_START);
    assert_int_equal(ev.u.nvtx.domain_id, 3);
    assert_int_equal(ev.u.nvtx.name_id, 2);
    assert_int_equal(ev.u.nvtx.range_id, 42);
    ev = next_of(r, GW_EV_RANGE_POP);
    assert_int_equal(ev.ts_ns, t0 + 7300);
    assert_int_equal(ev.u.nvtx.domain_id, 0);
    ev = next_of(r, GW_EV_RANGE_END);
    assert_int_equal(ev.ts_ns, t0 + 7400);
    assert_int_equal(ev.u.nvtx.range_id, 42);
    ev = next_of(r, GW_EV_CPU_THREAD);
    assert_int_equal(ev.ts_ns, t0 + 7500);
    assert_int_equal(ev.tid, 99);
    assert_int_equal(ev.u.cpu_thread.tid, 4242);
    assert_int_equal(ev.u.cpu_thread.cpu_ns, 730000000);
    assert_int_equal(ev.u.cpu_thread.wait_ns, 0);  /* absent: an older writer, no damage */
    assert_int_equal(ev.u.cpu_thread.wait_cpu_ns, 0);
    assert_true(ev.u.cpu_thread.runq_ns == UINT64_MAX);  /* absent: unknown, not 0 */
    ev = next_of(r, GW_EV_CPU_THREAD);
    assert_int_equal(ev.u.cpu_thread.tid, 4243);
    assert_int_equal(ev.u.cpu_thread.cpu_ns, 910000000);
    assert_int_equal(ev.u.cpu_thread.wait_ns, 400000000);
    assert_int_equal(ev.u.cpu_thread.wait_cpu_ns, 380000000);
    assert_int_equal(ev.u.cpu_thread.runq_ns, 5000);
    ev = next_of(r, GW_EV_CPU_PROC);
    assert_int_equal(ev.ts_ns, t0 + 7500);
    assert_int_equal(ev.u.cpu_proc.process_cpu_ns, 2100000000);
    assert_int_equal(ev.u.cpu_proc.descendants, 3);
    assert_int_equal(ev.u.cpu_proc.descendants_cpu_ns, 5400000000);
    assert_int_equal(ev.u.cpu_proc.active, 2);
    ev = next_of(r, GW_EV_GPU_WINDOW);
    assert_int_equal(ev.ts_ns, t0 + 7600);
    assert_int_equal(ev.u.gpu_window.open, 1);
    ev = next_of(r, GW_EV_GPU_WINDOW);
    assert_int_equal(ev.ts_ns, t0 + 7700);
    assert_int_equal(ev.u.gpu_window.open, 0);
    assert_int_equal(gw_reader_next(r, &ev), 0);
    assert_int_equal(gw_reader_stats(r)->gpu_windows, 1);

    /* stream lookups both ways; 0 and unknown CUPTI ids find nothing */
    assert_int_equal(gw_reader_stream_cupti(r, 3, &id), 0);
    assert_int_equal(id, 77);
    assert_int_equal(gw_reader_stream_cupti(r, 4, &id), -1);
    id = 1234;
    assert_int_equal(gw_reader_stream_by_cupti(r, 0, &id), -1);
    assert_int_equal(gw_reader_stream_by_cupti(r, 79, &id), -1);
    assert_int_equal(id, 1234);
    assert_int_equal(gw_reader_stream_handle(r, 5, &id), 0);
    assert_int_equal(id, 0x5500CC);

    const struct gw_reader_stats *st = gw_reader_stats(r);
    assert_int_equal(st->damage_reports, 0);
    assert_int_equal(st->unknown_records, 0);
    assert_int_equal(st->gpu_kernels, 1);
    assert_int_equal(st->gpu_memcpys, 1);
    assert_int_equal(st->gpu_memsets, 1);
    assert_int_equal(st->gpu_lost_records, 1);
    assert_int_equal(st->gpu_lost_events, 12);
    assert_int_equal(st->correlations, 2);
    assert_int_equal(st->nvtx_records, 5);
    assert_int_equal(st->cpu_samples, 3);
    assert_int_equal(st->definitions, 9);
    assert_int_equal(st->calls, 0);
    assert_int_equal(st->first_ts_ns, t0 + 400);  /* the memcpy */
    assert_int_equal(st->last_ts_ns, t0 + 7700);  /* the window shut */
    gw_reader_close(r);
}

/* Short bodies: missing words of a v1 body read as 0 and are reported; without the words
 * a record cannot do without, it is dropped and reported; the chunk goes on. */
static void test_short_gpu_records(void **state)
{
    (void)state;
    const char *path = tmp_path("gpu-short.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 1000);
    uint64_t dur_only[1] = {700};
    tw_timed(&c, GW_REC_GPU_KERNEL, 2000, dur_only, 1);     /* 2 of 7 varints */
    tw_timed(&c, GW_REC_GPU_MEMCPY, 2500, NULL, 0);         /* dt only: dropped */
    uint64_t corr_half[1] = {5};
    tw_record(&c, GW_REC_CORRELATION, corr_half, 1, NULL, 0); /* dropped */
    tw_timed(&c, GW_REC_RANGE_END, 2600, NULL, 0);          /* no range id: dropped */
    tw_timed(&c, GW_REC_RANGE_PUSH, 2700, NULL, 0);         /* kept: domain 0, name 0 */
    uint64_t lost_none[1] = {0};
    tw_timed(&c, GW_REC_GPU_LOST, 2800, lost_none, 1);
    uint64_t w[2] = {1, 0};
    tw_call(&c, 3000, GW_API_cuLaunchKernel, 10, 0, w, 2);
    tw_write_chunk(f, &c, 8, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_reader *r = open_ok(path);
    struct gw_event ev = next_of(r, GW_EV_GPU_KERNEL);
    assert_int_equal(ev.ts_ns, 2000);
    assert_int_equal(ev.dur_ns, 700);
    assert_int_equal(ev.u.gpu_kernel.correlation_id, 0);
    assert_int_equal(ev.u.gpu_kernel.shape_id, 0);
    ev = next_of(r, GW_EV_RANGE_PUSH);
    assert_int_equal(ev.ts_ns, 2700);  /* the dropped records' dts still count */
    assert_int_equal(ev.u.nvtx.name_id, 0);
    ev = next_of(r, GW_EV_GPU_LOST);
    assert_int_equal(ev.u.gpu_lost.count, 0);
    ev = next_of(r, GW_EV_CALL);
    assert_int_equal(ev.ts_ns, 3000);
    assert_int_equal(ev.call_id, (uint64_t)8 << 32);
    assert_int_equal(gw_reader_next(r, &ev), 0);
    const struct gw_damage *d;
    assert_int_equal(gw_reader_damage(r, &d), 5);
    assert_contains(d[0].message, "expected 7 varints in the 4-byte body of a GPU_KERNEL "
                                  "record, found 2 (the missing ones read as 0)");
    assert_contains(d[1].message, "expected 2 varints in the 2-byte body of a GPU_MEMCPY "
                                  "record, found 1");
    assert_contains(d[2].message, "expected 2 varints in the 1-byte body of a CORRELATION "
                                  "record, found 1");
    assert_contains(d[3].message, "of a RANGE_END record, found 1");
    assert_contains(d[4].message, "expected 3 varints in the 2-byte body of a RANGE_PUSH "
                                  "record, found 1 (the missing ones read as 0)");
    for (int i = 0; i < 5; i++)
        assert_int_equal(d[i].kind, GW_DAMAGE_RECORD);
    assert_int_equal(gw_reader_stats(r)->gpu_kernels, 1);
    assert_int_equal(gw_reader_stats(r)->gpu_memcpys, 0);
    assert_int_equal(gw_reader_stats(r)->correlations, 0);
    gw_reader_close(r);
}

/* Call ids: per thread 0, 1, 2... across chunks and other threads' chunks; LOST advances
 * by its calls word (by its count without one); GPU and NVTX records do not count; a new
 * thread with the same tid starts again; a chunk sequence gap makes later ids unsure. */
/* With CALL_BASE (what the shim writes) numbering is the writer's: a lost chunk leaves the
 * calls after it numbered right and sure, and a thread reusing a tid keeps its own serial. */
static void test_call_base_resynchronises(void **state)
{
    (void)state;
    const char *path = tmp_path("callbase.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    uint64_t w[2] = {1, 0};
    uint64_t base[2];

    tw_begin(&c, 100);                                   /* serial 4, calls 0 1 */
    base[0] = 4, base[1] = 0;
    tw_record(&c, GW_REC_CALL_BASE, base, 2, NULL, 0);
    tw_call(&c, 100, GW_API_cuLaunchKernel, 1, 0, w, 2);
    tw_call(&c, 101, GW_API_cuLaunchKernel, 1, 0, w, 2);
    tw_write_chunk(f, &c, 77, GW_CHUNK_EVENTS, 0);
    /* seq 1 (calls 2..5) never made it to the file */
    tw_begin(&c, 300);                                   /* serial 4, calls 6 7 */
    base[0] = 4, base[1] = 6;
    tw_record(&c, GW_REC_CALL_BASE, base, 2, NULL, 0);
    tw_call(&c, 300, GW_API_cuLaunchKernel, 1, 0, w, 2);
    tw_call(&c, 301, GW_API_cuLaunchKernel, 1, 0, w, 2);
    tw_write_chunk(f, &c, 77, GW_CHUNK_EVENTS, 2);
    tw_begin(&c, 400);                                   /* tid 77 again, a new thread */
    base[0] = 9, base[1] = 0;
    tw_record(&c, GW_REC_CALL_BASE, base, 2, NULL, 0);
    tw_call(&c, 400, GW_API_cuLaunchKernel, 1, 0, w, 2);
    tw_write_chunk(f, &c, 77, GW_CHUNK_EVENTS, 0);
    tw_free(&c);
    fclose(f);

    struct gw_reader *r = open_ok(path);
    const uint64_t want[5] = {(uint64_t)4 << 32 | 0, (uint64_t)4 << 32 | 1, (uint64_t)4 << 32 | 6,
                              (uint64_t)4 << 32 | 7, (uint64_t)9 << 32 | 0};
    struct gw_event ev;
    unsigned k = 0;
    while (gw_reader_next(r, &ev) > 0) {
        if (ev.kind != GW_EV_CALL)
            continue;
        assert_true(k < 5);
        assert_int_equal(ev.call_id, want[k]);
        assert_int_equal(ev.call_id_unsure, 0);
        k++;
    }
    assert_int_equal(k, 5);
    assert_int_equal(gw_reader_stats(r)->lost_chunks, 1);
    assert_int_equal(gw_reader_stats(r)->unknown_records, 0);
    gw_reader_close(r);
}

/* GPU records that name their call (the `call` word): each is read as the CORRELATION
 * event a separate record would have made, then the GPU event; the words chain from the
 * chunk's link_base (CALL_BASE's third word), each relative to the one before, anew in each
 * chunk; 0 names none; in a chunk whose CALL_BASE gives no link_base nothing can be read. */
static void test_gpu_records_name_their_calls(void **state)
{
    (void)state;
    const char *path = tmp_path("links.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    const uint64_t serial = (uint64_t)3 << 32;
#define CALL_WORD(delta) ((uint64_t)gw_zigzag(delta) + 1)
    tw_begin(&c, 1000);
    uint64_t base[3] = {3, 0, serial | 0};
    tw_record(&c, GW_REC_CALL_BASE, base, 3, NULL, 0);
    uint64_t k1[7] = {100, 10, 0, 7, 0, 0, CALL_WORD(2)};        /* call 2 */
    tw_timed(&c, GW_REC_GPU_KERNEL, 1000, k1, 7);
    uint64_t k2[7] = {100, 11, 0, 7, 0, 0, CALL_WORD(3)};        /* call 5 */
    tw_timed(&c, GW_REC_GPU_KERNEL, 1200, k2, 7);
    uint64_t k3[7] = {100, 12, 0, 7, 0, 0, 0};                   /* names none */
    tw_timed(&c, GW_REC_GPU_KERNEL, 1400, k3, 7);
    uint64_t m[10] = {50, 13, 0, 7, 4096, GW_GPU_COPY_HTOD, GW_GPU_MEM_PINNED,
                      GW_GPU_MEM_DEVICE, 0, CALL_WORD(-1)};      /* call 4 */
    tw_timed(&c, GW_REC_GPU_MEMCPY, 1600, m, 10);
    uint64_t s[8] = {20, 14, 0, 7, 4096, GW_GPU_MEM_DEVICE, 0, CALL_WORD(10)};  /* call 14 */
    tw_timed(&c, GW_REC_GPU_MEMSET, 1700, s, 8);
    tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 0);
    tw_begin(&c, 2000);                                          /* a chunk starts anew */
    base[2] = serial | 100;
    tw_record(&c, GW_REC_CALL_BASE, base, 3, NULL, 0);
    uint64_t k4[7] = {100, 15, 0, 7, 0, 0, CALL_WORD(0)};        /* call 100 */
    tw_timed(&c, GW_REC_GPU_KERNEL, 2000, k4, 7);
    uint64_t k5[7] = {100, 16, 0, 7, 0, 0, CALL_WORD(1)};        /* call 101 */
    tw_timed(&c, GW_REC_GPU_KERNEL, 2200, k5, 7);
    tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 1);
    tw_begin(&c, 3000);                                          /* no link_base */
    tw_record(&c, GW_REC_CALL_BASE, base, 2, NULL, 0);
    uint64_t k6[7] = {100, 17, 0, 7, 0, 0, CALL_WORD(1)};
    tw_timed(&c, GW_REC_GPU_KERNEL, 3000, k6, 7);
    tw_write_chunk(f, &c, 5, GW_CHUNK_EVENTS, 2);
    tw_free(&c);
    fclose(f);
#undef CALL_WORD

    struct gw_reader *r = open_ok(path);
    const struct { enum gw_event_kind kind; uint64_t correlation, call; } want[] = {
        {GW_EV_CORRELATION, 10, serial | 2}, {GW_EV_GPU_KERNEL, 10, 0},
        {GW_EV_CORRELATION, 11, serial | 5}, {GW_EV_GPU_KERNEL, 11, 0},
        {GW_EV_GPU_KERNEL, 12, 0},
        {GW_EV_CORRELATION, 13, serial | 4}, {GW_EV_GPU_MEMCPY, 13, 0},
        {GW_EV_CORRELATION, 14, serial | 14}, {GW_EV_GPU_MEMSET, 14, 0},
        {GW_EV_CORRELATION, 15, serial | 100}, {GW_EV_GPU_KERNEL, 15, 0},
        {GW_EV_CORRELATION, 16, serial | 101}, {GW_EV_GPU_KERNEL, 16, 0},
        {GW_EV_GPU_KERNEL, 17, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct gw_event ev = next_of(r, want[i].kind);
        if (ev.kind == GW_EV_CORRELATION) {
            assert_int_equal(ev.u.correlation.correlation_id, want[i].correlation);
            assert_int_equal(ev.u.correlation.call_id, want[i].call);
            assert_int_equal(ev.tid, 5);
        } else {
            uint64_t corr = ev.kind == GW_EV_GPU_KERNEL ? ev.u.gpu_kernel.correlation_id
                          : ev.kind == GW_EV_GPU_MEMCPY ? ev.u.gpu_memcpy.correlation_id
                                                        : ev.u.gpu_memset.correlation_id;
            assert_int_equal(corr, want[i].correlation);
        }
    }
    struct gw_event ev;
    assert_int_equal(gw_reader_next(r, &ev), 0);
    const struct gw_reader_stats *st = gw_reader_stats(r);
    assert_int_equal(st->correlations, 6);
    assert_int_equal(st->links_unreadable, 1);
    assert_int_equal(st->gpu_kernels, 6);
    assert_int_equal(st->damage_reports, 0);
    gw_reader_close(r);
}

static void test_call_ids(void **state)
{
    (void)state;
    const char *path = tmp_path("callids.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    uint64_t w[2] = {1, 0};
    uint32_t big_tid = 0xFFFFFFF0u;

    tw_begin(&c, 100);                                    /* tid 10, seq 0 */
    for (int i = 0; i < 3; i++)
        tw_call(&c, 100 + (uint64_t)i, GW_API_cuLaunchKernel, 1, 0, w, 2);   /* 0 1 2 */
    tw_lost(&c, 200, 5);                                  /* 3..7 dropped */
    tw_write_chunk(f, &c, 10, GW_CHUNK_EVENTS, 0);

    tw_begin(&c, 150);                                    /* tid 11, seq 0 */
    tw_call(&c, 150, GW_API_cuInit, 1, 0, NULL, 0);       /* 0 */
    uint8_t no_dur[] = {GW_REC_CALL, 2, 0, GW_API_cuInit};  /* 1: undecodable */
    tw_raw(&c, no_dur, sizeof no_dur);
    tw_call(&c, 160, GW_API_cuInit, 1, 0, NULL, 0);       /* 2 */
    tw_write_chunk(f, &c, 11, GW_CHUNK_EVENTS, 0);

    tw_begin(&c, 300);                                    /* tid 10, seq 1 */
    tw_call(&c, 300, GW_API_cuLaunchKernel, 1, 0, w, 2);  /* 8 */
    uint64_t gpu[6] = {10, 1, 0, 0, 0, 0};
    tw_timed(&c, GW_REC_GPU_KERNEL, 310, gpu, 6);          /* not a call */
    uint64_t push[2] = {0, 0};
    tw_timed(&c, GW_REC_RANGE_PUSH, 320, push, 2);
    uint64_t lost3[3] = {gw_zigzag(10), 4, 2};            /* 4 records, 2 of them calls */
    tw_record(&c, GW_REC_LOST, lost3, 3, NULL, 0);         /* 9, 10 dropped, at 330 */
    c.last_ts = 330;
    tw_call(&c, 340, GW_API_cuMemFree_v2, 1, 2, w, 2);    /* 11, CALL_ERR */
    tw_write_chunk(f, &c, 10, GW_CHUNK_EVENTS, 1);

    tw_begin(&c, 400);                                    /* tid 11, seq 2: seq 1 lost */
    tw_call(&c, 400, GW_API_cuInit, 1, 0, NULL, 0);       /* 3 (really more): unsure */
    tw_write_chunk(f, &c, 11, GW_CHUNK_EVENTS, 2);

    tw_begin(&c, 500);                                    /* tid 10 again from seq 0 */
    tw_call(&c, 500, GW_API_cuInit, 1, 0, NULL, 0);       /* 0 */
    tw_write_chunk(f, &c, 10, GW_CHUNK_EVENTS, 0);

    tw_begin(&c, 600);                                    /* a large tid */
    tw_call(&c, 600, GW_API_cuInit, 1, 0, NULL, 0);
    tw_call(&c, 601, GW_API_cuInit, 1, 0, NULL, 0);
    tw_write_chunk(f, &c, big_tid, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct {
        uint32_t tid;
        uint64_t number;
        unsigned unsure;
    } want[] = {
        {10, 0, 0}, {10, 1, 0}, {10, 2, 0}, {11, 0, 0}, {11, 2, 0}, {10, 8, 0},
        {10, 11, 0}, {11, 3, 1}, {10, 0, 0}, {big_tid, 0, 0}, {big_tid, 1, 0},
    };
    struct gw_reader *r = open_ok(path);
    struct gw_event ev;
    size_t k = 0;
    uint64_t lost_counts[2] = {0}, lost_call_words[2] = {0};
    size_t nlost = 0;
    while (gw_reader_next(r, &ev) > 0) {
        if (ev.kind == GW_EV_LOST) {
            assert_true(nlost < 2);
            lost_counts[nlost] = ev.u.lost.count;
            lost_call_words[nlost++] = ev.u.lost.calls;
            continue;
        }
        if (ev.kind != GW_EV_CALL)
            continue;
        assert_true(k < sizeof want / sizeof want[0]);
        assert_int_equal(ev.tid, want[k].tid);
        assert_int_equal(ev.call_id, (uint64_t)want[k].tid << 32 | want[k].number);
        assert_int_equal(ev.call_id_unsure, want[k].unsure);
        k++;
    }
    assert_int_equal(k, sizeof want / sizeof want[0]);
    assert_int_equal(nlost, 2);
    assert_int_equal(lost_counts[0], 5);
    assert_int_equal(lost_call_words[0], 5);
    assert_int_equal(lost_counts[1], 4);
    assert_int_equal(lost_call_words[1], 2);
    const struct gw_reader_stats *st = gw_reader_stats(r);
    assert_int_equal(st->lost_events, 9);
    assert_int_equal(st->lost_calls, 7);
    assert_int_equal(st->calls_unsure, 1);
    assert_int_equal(st->lost_chunks, 1);

    /* a second pass (after the definitions pass) numbers the same way */
    gw_reader_load_defs(r);
    k = 0;
    while (gw_reader_next(r, &ev) > 0) {
        if (ev.kind != GW_EV_CALL)
            continue;
        assert_int_equal(ev.call_id, (uint64_t)want[k].tid << 32 | want[k].number);
        k++;
    }
    assert_int_equal(k, sizeof want / sizeof want[0]);
    gw_reader_close(r);
}

/* The join the format is for: GPU record -> correlation id -> call id -> the host call,
 * with GPU records and correlations written by another thread, not in order, and CUPTI
 * stream ids mapped back to the launch's stream. */
static void test_correlation_join(void **state)
{
    (void)state;
    const char *path = tmp_path("join.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 0);
    tw_string(&c, 1, "k_a");
    tw_string(&c, 2, "k_b");
    uint64_t host_a[10] = {1, 1, 0xA, 1, 1, 1, 1, 1, 1, 0};
    uint64_t host_b[10] = {2, 2, 0xB, 1, 1, 1, 1, 1, 1, 0};
    uint64_t gpu_a[12] = {3, 1, 0, 1, 1, 1, 1, 1, 1, 0, 8, 0};
    uint64_t gpu_b[12] = {4, 2, 0, 1, 1, 1, 1, 1, 1, 0, 8, 0};
    tw_record(&c, GW_REC_SHAPE, host_a, 10, NULL, 0);
    tw_record(&c, GW_REC_SHAPE, host_b, 10, NULL, 0);
    tw_record(&c, GW_REC_SHAPE, gpu_a, 12, NULL, 0);
    tw_record(&c, GW_REC_SHAPE, gpu_b, 12, NULL, 0);
    uint64_t s1[3] = {1, 0x100, 31}, s2[3] = {2, 0x200, 32};
    tw_record(&c, GW_REC_STREAM, s1, 3, NULL, 0);
    tw_record(&c, GW_REC_STREAM, s2, 3, NULL, 0);
    tw_write_chunk(f, &c, 0, GW_CHUNK_DEFS, 0);

    /* tid 20: k_a on stream 1 (call 0), LOST of 2 calls, k_b on stream 2 (call 3);
     * tid 21: cuInit (call 0), k_b on stream 1 (call 1) */
    uint64_t la[2] = {1, 1}, lb2[2] = {2, 2}, lb1[2] = {2, 1};
    tw_begin(&c, 1000);
    tw_call(&c, 1000, GW_API_cuLaunchKernel, 5, 0, la, 2);
    tw_lost(&c, 1010, 2);
    tw_call(&c, 1020, GW_API_cuLaunchKernel, 5, 0, lb2, 2);
    tw_write_chunk(f, &c, 20, GW_CHUNK_EVENTS, 0);
    tw_begin(&c, 1005);
    tw_call(&c, 1005, GW_API_cuInit, 5, 0, NULL, 0);
    tw_call(&c, 1015, GW_API_cuLaunchKernel_ptsz, 5, 0, lb1, 2);
    tw_write_chunk(f, &c, 21, GW_CHUNK_EVENTS, 0);

    /* tid 30 drains CUPTI: records in completion order, correlations after them */
    tw_begin(&c, 0);
    uint64_t g3[6] = {100, 7003, 0, 32, 4, 0};  /* k_b on CUPTI stream 32 */
    uint64_t g1[6] = {100, 7001, 0, 31, 3, 0};
    uint64_t g2[6] = {100, 7002, 0, 31, 4, 0};
    tw_timed(&c, GW_REC_GPU_KERNEL, 1300, g3, 6);
    tw_timed(&c, GW_REC_GPU_KERNEL, 1100, g1, 6);
    tw_timed(&c, GW_REC_GPU_KERNEL, 1200, g2, 6);
    uint64_t c2[2] = {7002, (uint64_t)21 << 32 | 1}, c3[2] = {7003, (uint64_t)20 << 32 | 3};
    uint64_t c1[2] = {7001, (uint64_t)20 << 32 | 0};
    tw_record(&c, GW_REC_CORRELATION, c2, 2, NULL, 0);
    tw_record(&c, GW_REC_CORRELATION, c3, 2, NULL, 0);
    tw_record(&c, GW_REC_CORRELATION, c1, 2, NULL, 0);
    tw_write_chunk(f, &c, 30, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_event calls[8], gpus[8];
    uint64_t corr_ids[8], corr_calls[8];
    size_t ncalls = 0, ngpus = 0, ncorr = 0;
    struct gw_reader *r = open_ok(path);
    struct gw_event ev;
    while (gw_reader_next(r, &ev) > 0) {
        if (ev.kind == GW_EV_CALL && ncalls < 8)
            calls[ncalls++] = ev;
        else if (ev.kind == GW_EV_GPU_KERNEL && ngpus < 8)
            gpus[ngpus++] = ev;
        else if (ev.kind == GW_EV_CORRELATION && ncorr < 8) {
            corr_ids[ncorr] = ev.u.correlation.correlation_id;
            corr_calls[ncorr++] = ev.u.correlation.call_id;
        }
    }
    assert_int_equal(ncalls, 4);
    assert_int_equal(ngpus, 3);
    assert_int_equal(ncorr, 3);
    for (size_t g = 0; g < ngpus; g++) {
        const struct gw_event *gk = &gpus[g];
        const struct gw_event *launch = NULL;
        for (size_t i = 0; i < ncorr; i++) {
            if (corr_ids[i] != gk->u.gpu_kernel.correlation_id)
                continue;
            for (size_t j = 0; j < ncalls; j++)
                if (calls[j].call_id == corr_calls[i])
                    launch = &calls[j];
        }
        if (!launch)
            fail_msg("GPU kernel with correlation %" PRIu64 " joins no call",
                     gk->u.gpu_kernel.correlation_id);
        assert_int_equal(launch->family, GW_FAM_LAUNCH);
        assert_true(launch->ts_ns <= gk->ts_ns);
        assert_string_equal(gw_reader_kernel_name(r, launch->u.launch.shape_id),
                            gw_reader_kernel_name(r, gk->u.gpu_kernel.shape_id));
        uint64_t stream;
        assert_int_equal(gw_reader_stream_by_cupti(r, gk->u.gpu_kernel.stream_id, &stream), 0);
        assert_int_equal(stream, launch->u.launch.stream_id);
        switch (gk->u.gpu_kernel.correlation_id) {
        case 7001: assert_int_equal(launch->call_id, (uint64_t)20 << 32 | 0); break;
        case 7002: assert_int_equal(launch->call_id, (uint64_t)21 << 32 | 1); break;
        case 7003: assert_int_equal(launch->call_id, (uint64_t)20 << 32 | 3); break;
        default: fail_msg("unexpected correlation id");
        }
    }
    gw_reader_close(r);
}

/* Length of the union of [s, e) pairs, by marking every unit (small ranges only). */
static uint64_t brute_union(const uint64_t (*iv)[2], size_t n, uint64_t limit)
{
    uint8_t *mark = calloc(limit, 1);
    assert_non_null(mark);
    for (size_t i = 0; i < n; i++)
        for (uint64_t t = iv[i][0]; t < iv[i][1] && t < limit; t++)
            mark[t] = 1;
    uint64_t total = 0;
    for (uint64_t t = 0; t < limit; t++)
        total += mark[t];
    free(mark);
    return total;
}

static void test_busy_union(void **state)
{
    (void)state;
    struct gw_busy b = {0};
    assert_int_equal(gw_busy_total(&b), 0);
    assert_int_equal(gw_busy_span(&b), 0);
    /* stream A [100, 400), stream B [250, 600) and [700, 800), a copy inside A, a touching
     * kernel [800, 900), an empty and a reversed one */
    gw_busy_add(&b, 250, 600);
    gw_busy_add(&b, 700, 800);
    gw_busy_add(&b, 100, 400);
    gw_busy_add(&b, 150, 160);
    gw_busy_add(&b, 800, 900);
    gw_busy_add(&b, 950, 950);
    gw_busy_add(&b, 990, 980);
    assert_int_equal(gw_busy_total(&b), 500 + 200);
    assert_int_equal(gw_busy_span(&b), 800);
    assert_int_equal(b.added, 7);
    /* adding after a total still works */
    gw_busy_add(&b, 590, 710);
    assert_int_equal(gw_busy_total(&b), 800);
    gw_busy_free(&b);

    /* many intervals, out of order, enough to be merged by sorting several times */
    enum { N = 20000, LIMIT = 400000 };
    static uint64_t iv[N][2];
    uint64_t seed = 12345;
    for (size_t i = 0; i < N; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t start = (seed >> 33) % (LIMIT - 100);
        uint64_t len = (seed >> 20) % 29;
        iv[i][0] = start, iv[i][1] = start + len;
        gw_busy_add(&b, start, start + len);
        if (i == N / 2)  /* a total in the middle merges, later adds go on */
            assert_int_equal(gw_busy_total(&b), brute_union((const uint64_t(*)[2])iv, i + 1,
                                                              LIMIT));
    }
    assert_int_equal(gw_busy_total(&b), brute_union((const uint64_t(*)[2])iv, N, LIMIT));
    assert_false(b.failed);
    assert_int_equal(b.late, 0);
    gw_busy_free(&b);

    /* the same, nearly in order (each start up to 2000 before the previous), with a small
     * keep: the true union lies in [total, total + late_ns] */
    b.keep = 64;
    for (size_t i = 0; i < N; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t start = 2000 + i * 19 - (seed >> 33) % 2000;
        iv[i][0] = start, iv[i][1] = start + (seed >> 20) % 29;
        gw_busy_add(&b, iv[i][0], iv[i][1]);
    }
    uint64_t truth = brute_union((const uint64_t(*)[2])iv, N, LIMIT);
    uint64_t total = gw_busy_total(&b);
    assert_true(b.frontier > 0);
    assert_true(total <= truth);
    assert_true(truth <= total + b.late_ns);
    gw_busy_free(&b);

    /* bounded memory: with keep 4, periods past the latest 4 are settled once the list
     * fills; in-order work stays exact, a record from before the frontier is counted late */
    b.keep = 4;
    for (uint64_t i = 0; i < 1000; i++)  /* 1000 periods of 10 with gaps of 5 */
        gw_busy_add(&b, i * 15, i * 15 + 10);
    assert_true(b.frontier > 0);
    assert_true(b.cap <= 256);
    assert_int_equal(b.late, 0);
    assert_int_equal(gw_busy_total(&b), 10000);
    uint64_t frontier = b.frontier;
    assert_int_equal(frontier % 15, 10);          /* the end of a settled period */
    gw_busy_add(&b, frontier - 12, frontier + 4); /* reaches back over a gap */
    assert_int_equal(b.late, 1);
    assert_int_equal(b.late_ns, 12);
    assert_int_equal(gw_busy_total(&b), 10000 + 4);  /* [frontier, +4) was a gap */
    gw_busy_add(&b, 0, 5);                        /* entirely settled: only late */
    assert_int_equal(b.late, 2);
    assert_int_equal(b.late_ns, 17);
    assert_int_equal(gw_busy_total(&b), 10004);
    assert_int_equal(gw_busy_span(&b), 999 * 15 + 10);
    gw_busy_free(&b);

    /* back to back work in order stays one item */
    for (uint64_t i = 0; i < 100000; i++)
        gw_busy_add(&b, 1000 + i * 10, 1000 + i * 10 + 10);
    assert_true(b.count == 1);
    assert_int_equal(gw_busy_total(&b), 1000000);
    gw_busy_free(&b);
}

/* Busy time from a trace: kernels overlapping on two streams and a copy, unioned per
 * device, as gpuwatch stats computes it. */
static void test_busy_from_trace(void **state)
{
    (void)state;
    const char *path = tmp_path("busy.gwt");
    FILE *f = create(path);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 10000);
    /* device 0: stream 31 [10000, 15000) [15000, 18000); stream 32 [12000, 20000);
     * a copy [19000, 25000); device 1: [11000, 11500) */
    uint64_t k1[6] = {5000, 1, 0, 31, 0, 0}, k2[6] = {3000, 2, 0, 31, 0, 0};
    uint64_t k3[6] = {8000, 3, 0, 32, 0, 0}, k4[6] = {500, 4, 1, 40, 0, 0};
    uint64_t cp[9] = {6000, 5, 0, 33, 600000, GW_GPU_COPY_DTOH, GW_GPU_MEM_DEVICE,
                      GW_GPU_MEM_PINNED, 0};
    tw_timed(&c, GW_REC_GPU_KERNEL, 12000, k3, 6);
    tw_timed(&c, GW_REC_GPU_KERNEL, 10000, k1, 6);
    tw_timed(&c, GW_REC_GPU_MEMCPY, 19000, cp, 9);
    tw_timed(&c, GW_REC_GPU_KERNEL, 11000, k4, 6);
    tw_timed(&c, GW_REC_GPU_KERNEL, 15000, k2, 6);
    tw_write_chunk(f, &c, 30, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_busy dev[2] = {{0}};
    uint64_t summed = 0, copy_bytes = 0, copy_ns = 0;
    struct gw_reader *r = open_ok(path);
    struct gw_event ev;
    while (gw_reader_next(r, &ev) > 0) {
        uint64_t device = ev.kind == GW_EV_GPU_KERNEL ? ev.u.gpu_kernel.device
                                                      : ev.u.gpu_memcpy.device;
        assert_true(device < 2);
        gw_busy_add(&dev[device], ev.ts_ns, ev.ts_ns + ev.dur_ns);
        summed += ev.dur_ns;
        if (ev.kind == GW_EV_GPU_MEMCPY)
            copy_bytes += ev.u.gpu_memcpy.bytes, copy_ns += ev.dur_ns;
    }
    gw_reader_close(r);
    assert_int_equal(gw_busy_total(&dev[0]), 15000);   /* [10000, 25000) */
    assert_int_equal(gw_busy_span(&dev[0]), 15000);
    assert_int_equal(gw_busy_total(&dev[1]), 500);
    assert_int_equal(summed, 22500);                   /* what summing would say */
    assert_int_equal(copy_bytes * 1000 / copy_ns, 100000);  /* 100 GB/s, in MB/s */
    gw_busy_free(&dev[0]);
    gw_busy_free(&dev[1]);
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
        cmocka_unit_test(test_header_field_damage),
        cmocka_unit_test(test_v1_file),
        cmocka_unit_test(test_zeroed_chunk),
        cmocka_unit_test(test_stray_bytes),
        cmocka_unit_test(test_damage_then_truncation),
        cmocka_unit_test(test_seq_gap),
        cmocka_unit_test(test_zero_tail),
        cmocka_unit_test(test_bad_lengths),
        cmocka_unit_test(test_record_damage),
        cmocka_unit_test(test_overlong_varints),
        cmocka_unit_test(test_more_words_than_an_event_holds),
        cmocka_unit_test(test_overlong_call_word),
        cmocka_unit_test(test_defs_after_use),
        cmocka_unit_test(test_stack_roundtrip),
        cmocka_unit_test(test_pystack_roundtrip),
        cmocka_unit_test(test_demangle),
        cmocka_unit_test(test_random_damage),
        cmocka_unit_test(test_roundtrip_gpu_records),
        cmocka_unit_test(test_short_gpu_records),
        cmocka_unit_test(test_call_ids),
        cmocka_unit_test(test_call_base_resynchronises),
        cmocka_unit_test(test_gpu_records_name_their_calls),
        cmocka_unit_test(test_correlation_join),
        cmocka_unit_test(test_busy_union),
        cmocka_unit_test(test_busy_from_trace),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
