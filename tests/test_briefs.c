/*
 * gw_reader_next_briefs against gw_reader_next: a trace read with runs of briefs between
 * events must give, record for record, what gw_reader_next alone gives (the briefs'
 * fields those of the events they stand for), with the same statistics and damage; on a
 * trace of every kind of launch and the records around them, then on hundreds of damaged
 * copies of it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_reader_tracewriter.h"
#include "trace_reader.h"

#define MAIN_TID 77
#define CUPTI_TID 78

/* One record as read: the event, or the brief (with its thread) in its place. */
struct item {
    int is_brief;
    struct gw_event ev;
    struct gw_brief brief;
    uint32_t tid;
};

struct reading {
    struct item *items;
    size_t count, cap, briefs;
    struct gw_reader_stats stats;
    size_t ndamage;
    uint64_t damage_offsets[16];
};

static void add(struct reading *rd, const struct item *it)
{
    if (rd->count == rd->cap) {
        rd->cap = rd->cap ? rd->cap * 2 : 256;
        rd->items = realloc(rd->items, rd->cap * sizeof *rd->items);
        assert_non_null(rd->items);
    }
    rd->items[rd->count++] = *it;
}

/* Reads path with gw_reader_next alone (max 0) or with runs of at most max briefs. */
static struct reading read_trace(const char *path, size_t max)
{
    struct reading rd = {0};
    struct gw_reader *r;
    char err[512];
    if (gw_reader_open(path, &r, err, sizeof err) != 0)
        fail_msg("open failed: %s", err);
    struct gw_brief briefs[8];
    assert_true(max <= 8);
    for (;;) {
        size_t n = 0;
        uint32_t tid = 0;
        if (max) {
            n = gw_reader_next_briefs(r, briefs, max, &tid);
            assert_true(n <= max);
            for (size_t i = 0; i < n; i++) {
                struct item it = {.is_brief = 1, .brief = briefs[i], .tid = tid};
                add(&rd, &it);
            }
            rd.briefs += n;
            if (n == max)
                continue;
        }
        struct item it = {0};
        if (gw_reader_next(r, &it.ev) <= 0)
            break;
        add(&rd, &it);
    }
    rd.stats = *gw_reader_stats(r);
    const struct gw_damage *list;
    rd.ndamage = gw_reader_damage(r, &list);
    for (size_t i = 0; i < rd.ndamage && i < 16; i++)
        rd.damage_offsets[i] = list[i].offset;
    gw_reader_close(r);
    return rd;
}

/* A brief stands for exactly its event. */
static void assert_brief_is(const struct gw_brief *b, uint32_t tid, const struct gw_event *ev)
{
    assert_int_equal(tid, ev->tid);
    assert_int_equal(b->ts_ns, ev->ts_ns);
    assert_int_equal(b->dur_ns, ev->dur_ns);
    if (b->kind == GW_EV_CALL) {
        assert_int_equal(ev->kind, GW_EV_CALL);
        assert_int_equal(ev->family, GW_FAM_LAUNCH);
        assert_int_equal(b->api_id, ev->api_id);
        assert_int_equal(b->result, ev->result);
        assert_int_equal(b->shape_id, ev->u.launch.shape_id);
        assert_int_equal(b->stream_id, ev->u.launch.stream_id);
        assert_int_equal(b->handle, ev->u.launch.handle);
        assert_int_equal(b->id, ev->call_id);
        assert_int_equal(b->call_id_unsure, ev->call_id_unsure);
    } else {
        assert_int_equal(b->kind, GW_EV_GPU_KERNEL);
        assert_int_equal(ev->kind, GW_EV_GPU_KERNEL);
        assert_int_equal(b->id, ev->u.gpu_kernel.correlation_id);
        assert_int_equal(b->device, ev->u.gpu_kernel.device);
        assert_int_equal(b->stream_id, ev->u.gpu_kernel.stream_id);
        assert_int_equal(b->shape_id, ev->u.gpu_kernel.shape_id);
        assert_int_equal(b->handle, ev->u.gpu_kernel.graph_id);
    }
}

/* Both readings of path agree; returns how many records came as briefs with runs of max. */
static size_t assert_same_reading(const char *path, size_t max)
{
    struct reading plain = read_trace(path, 0), mixed = read_trace(path, max);
    assert_int_equal(mixed.count, plain.count);
    for (size_t i = 0; i < plain.count; i++) {
        const struct item *a = &plain.items[i], *b = &mixed.items[i];
        if (b->is_brief) {
            assert_brief_is(&b->brief, b->tid, &a->ev);
        } else {
            assert_int_equal(b->ev.kind, a->ev.kind);
            assert_int_equal(b->ev.ts_ns, a->ev.ts_ns);
            assert_int_equal(b->ev.offset, a->ev.offset);
            assert_int_equal(b->ev.call_id, a->ev.call_id);
            assert_int_equal(b->ev.call_id_unsure, a->ev.call_id_unsure);
        }
    }
    assert_memory_equal(&mixed.stats, &plain.stats, sizeof plain.stats);
    assert_int_equal(mixed.ndamage, plain.ndamage);
    for (size_t i = 0; i < plain.ndamage && i < 16; i++)
        assert_int_equal(mixed.damage_offsets[i], plain.damage_offsets[i]);
    free(plain.items);
    free(mixed.items);
    return mixed.briefs;
}

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

/* Launches of every shape (plain, graph with its handle, host function, failed, one with a
 * newer writer's fourth word, one short of its words), kernel records (one with a device
 * too large for a brief, one with a newer writer's seventh word) and the records between
 * them (a copy, LOST, CALL_BASE, a definition), over chunks of two threads; returns the
 * records written. */
static size_t write_trace(const char *path)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk host = {0}, gpu = {0};
    size_t records = 0;
    uint32_t host_seq = 0, gpu_seq = 0;
    uint64_t ts = 2000000000ull;
    for (int chunk = 0; chunk < 6; chunk++) {
        tw_begin(&host, ts);
        tw_begin(&gpu, ts);
        for (int i = 0; i < 40; i++, ts += 3000 + (uint64_t)(i % 7) * 977) {
            uint64_t launch[4] = {1 + (uint64_t)i % 5, (uint64_t)chunk % 3, 0xABC000, 99};
            switch (i % 10) {
            case 3: tw_call(&host, ts, GW_API_cuGraphLaunch, 9000, 0, launch, 3); break;
            case 4: tw_call(&host, ts, GW_API_cuLaunchHostFunc, 800, 0, launch, 3); break;
            case 5: tw_call(&host, ts, GW_API_cuLaunchKernel, 700, 2, launch, 2); break;
            case 6: tw_call(&host, ts, GW_API_cuLaunchKernel, 700, 0, launch, 4); break;
            case 7: tw_call(&host, ts, GW_API_cuGraphLaunch, 700, 0, launch, 2); break;
            case 8: {
                uint64_t copy[5] = {4096, GW_COPY_HTOD | GW_HOST_PAGEABLE << 4, 0, 1, 2};
                tw_call(&host, ts, GW_API_cuMemcpyHtoD_v2, 50000, 0, copy, 5);
                break;
            }
            case 9:
                if (i == 19)
                    tw_lost(&host, ts, 3);
                else if (i == 29) {
                    uint64_t base[2] = {5, 1000};
                    tw_record(&host, GW_REC_CALL_BASE, base, 2, NULL, 0);
                } else
                    tw_string(&host, 100 + (uint64_t)i, "name");
                break;
            default:
                tw_call(&host, ts, GW_API_cuLaunchKernel, 4000 + (uint64_t)i, 0, launch, 2);
            }
            records++;
            uint64_t kernel[7] = {25000, 500 + (uint64_t)i, 0, 7, 1 + (uint64_t)i % 5, 0, 1};
            if (i == 13)
                kernel[2] = 1ull << 33;
            tw_timed(&gpu, GW_REC_GPU_KERNEL, ts + 10000, kernel, i == 17 ? 7 : 6);
            records++;
        }
        tw_write_chunk(f, &host, MAIN_TID, GW_CHUNK_EVENTS, host_seq++);
        tw_write_chunk(f, &gpu, CUPTI_TID, GW_CHUNK_EVENTS, gpu_seq++);
    }
    tw_free(&host);
    tw_free(&gpu);
    fclose(f);
    return records;
}

static void test_briefs_match_events(void **state)
{
    (void)state;
    const char *path = tmp_path("briefs.gwt");
    size_t records = write_trace(path);
    struct reading plain = read_trace(path, 0);
    assert_int_equal(plain.count, records - 6);  /* CALL_BASE gives no event */
    free(plain.items);
    for (size_t max = 1; max <= 8; max++) {
        size_t briefs = assert_same_reading(path, max);
        /* per chunk: the plain, graph, host-function and failed launches (24 of its 40
         * host records) and every kernel record but the one with a large device (39),
         * less the first record of each chunk and the one after CALL_BASE, which come
         * from the gw_reader_next that moved to the chunk or read the CALL_BASE */
        assert_int_equal(briefs, 6 * (24 - 2 + 39 - 1));
    }
}

/* Damaged copies (bytes flipped anywhere after the header: framing, varints, CRCs) read
 * the same both ways; the CRC is rewritten for half of them so that the damage reaches
 * the record decoding rather than stopping at the chunk's check. */
static void test_briefs_on_damage(void **state)
{
    (void)state;
    const char *clean = tmp_path("briefs.gwt");
    write_trace(clean);
    FILE *f = fopen(clean, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *orig = malloc((size_t)size), *bytes = malloc((size_t)size);
    assert_int_equal(fread(orig, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    uint64_t seed = 0x2545F4914F6CDD1Dull;
    size_t with_briefs = 0;
    for (int iter = 0; iter < 300; iter++) {
        memcpy(bytes, orig, (size_t)size);
        for (int k = 0; k < 1 + iter % 3; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            long at = GW_FILE_HEADER_SIZE + (long)((seed >> 20) % (uint64_t)(size - GW_FILE_HEADER_SIZE));
            bytes[at] ^= (uint8_t)(1 + (seed >> 8) % 255);
        }
        if (iter % 2) {  /* every chunk's CRC made right again */
            for (long at = GW_FILE_HEADER_SIZE; at + (long)sizeof(struct gw_chunk_header) <= size;) {
                struct gw_chunk_header h;
                memcpy(&h, bytes + at, sizeof h);
                long payload = at + (long)sizeof h;
                if (h.magic != GW_CHUNK_MAGIC || payload + (long)h.payload_len > size)
                    break;
                h.crc32 = gw_crc32(bytes + payload, h.payload_len);
                memcpy(bytes + at, &h, sizeof h);
                at = payload + (long)h.payload_len;
            }
        }
        const char *path = tmp_path("mutant.gwt");
        f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(bytes, 1, (size_t)size, f);
        fclose(f);
        size_t a = assert_same_reading(path, 3);
        size_t b = assert_same_reading(path, 8);
        assert_int_equal(a, b);
        with_briefs += a > 0;
    }
    assert_true(with_briefs > 250);  /* the damage left most of each trace readable */
    free(bytes);
    free(orig);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/test_briefs.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_briefs_match_events),
        cmocka_unit_test(test_briefs_on_damage),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(tmp_path("briefs.gwt"));
    unlink(tmp_path("mutant.gwt"));
    rmdir(tmpdir);
    return rc;
}
