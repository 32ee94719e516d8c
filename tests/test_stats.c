/*
 * gpuwatch stats' figures (tools/reader/stats/), computed apart from the command that
 * prints them: on events made here, and once on a trace written with the shim's own
 * encoder, for the kernel names the reader gives. The command's output on whole traces is
 * test_cli.sh's.
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

#include "stats_totals.h"
#include "test_reader_tracewriter.h"
#include "trace_stats.h"

static struct gw_event call_event(unsigned api, uint32_t result, uint64_t dur_ns)
{
    struct gw_event ev = {.kind = GW_EV_CALL, .api_id = api, .result = result,
                          .dur_ns = dur_ns, .family = gw_api_family(api)};
    return ev;
}

static struct gw_event gpu_kernel_event(uint64_t device, uint64_t shape, uint64_t ts,
                                        uint64_t dur)
{
    struct gw_event ev = {.kind = GW_EV_GPU_KERNEL, .ts_ns = ts, .dur_ns = dur};
    ev.u.gpu_kernel.device = device;
    ev.u.gpu_kernel.shape_id = shape;
    return ev;
}

/* Known ids and ones this build lacks are counted alike; the order is by calls, then
 * name. */
static void test_api_table(void **state)
{
    (void)state;
    struct gw_api_table t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 3; i++)
        assert_int_equal(gw_api_table_add(&t, GW_API_cuInit, 0, 10), 0);
    assert_int_equal(gw_api_table_add(&t, GW_API_cuMemAlloc_v2, 2, 100), 0);
    assert_int_equal(gw_api_table_add(&t, GW_API_cuMemAlloc_v2, 0, 50), 0);
    assert_int_equal(gw_api_table_add(&t, GW_API_cuMemFree_v2, 0, 7), 0);
    assert_int_equal(gw_api_table_add(&t, GW_API_cuMemFree_v2, 0, 7), 0);
    assert_int_equal(gw_api_table_add(&t, 1000, 1, 5), 0);  /* past GW_API_ID_LIMIT */
    assert_int_equal(gw_api_table_add(&t, 1000, 0, 5), 0);
    assert_int_equal(t.count, 4);
    gw_api_table_sort(&t);
    assert_string_equal(t.items[0].name, "cuInit");
    assert_int_equal(t.items[0].count, 3);
    assert_int_equal(t.items[0].total_ns, 30);
    /* two calls each: by name ("api_1000" < "cuMemAlloc_v2" < "cuMemFree_v2") */
    assert_string_equal(t.items[1].name, "api_1000");
    assert_int_equal(t.items[1].errors, 1);
    assert_string_equal(t.items[2].name, "cuMemAlloc_v2");
    assert_int_equal(t.items[2].errors, 1);
    assert_int_equal(t.items[2].total_ns, 150);
    assert_string_equal(t.items[3].name, "cuMemFree_v2");
    assert_int_equal(t.items[3].errors, 0);
    gw_api_table_free(&t);
}

/* Shapes of one name are one kernel; a shape the trace does not name is "shape_<id>";
 * the cache gives the same entry on every later look-up. */
static void test_kernels_by_shape(void **state)
{
    (void)state;
    struct gw_kernel_table t = {0};
    struct gw_shape_cache cache = {0};
    struct gw_kernel_stat *a = gw_kernel_by_shape(&t, &cache, NULL, 5);
    assert_non_null(a);
    assert_string_equal(a->name, "shape_5");
    a->launches = 1;
    /* far more shapes than the cache's front, so that some share a slot */
    for (uint64_t s = 1; s <= 300; s++)
        assert_non_null(gw_kernel_by_shape(&t, &cache, NULL, s));
    assert_int_equal(t.count, 300);
    assert_ptr_equal(gw_kernel_by_shape(&t, &cache, NULL, 5), &t.items[0]);
    assert_ptr_equal(gw_kernel_by_shape(&t, &cache, NULL, 5 + GW_SHAPE_FRONT),
                     gw_kernel_by_name(&t, "shape_69"));
    /* a new trace's shape 5 may be another kernel: the cache starts over, names stay */
    gw_shape_cache_reset(&cache);
    assert_ptr_equal(gw_kernel_by_name(&t, "shape_5"), &t.items[0]);
    assert_int_equal(t.items[0].launches, 1);
    gw_kernel_table_free(&t);
}

static void test_kernel_order(void **state)
{
    (void)state;
    struct gw_kernel_table t = {0};
    const struct { const char *name; uint64_t launches, ns; } k[] = {
        {"gemm", 10, 500}, {"relu", 30, 90}, {"add", 10, 900}, {"copy", 1, 900}};
    for (size_t i = 0; i < 4; i++) {
        struct gw_kernel_stat *s = gw_kernel_by_name(&t, k[i].name);
        s->launches = k[i].launches;
        s->total_ns = k[i].ns;
    }
    gw_kernel_sort_by_launches(&t);
    const char *by_launches[] = {"relu", "add", "gemm", "copy"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(t.items[i].name, by_launches[i]);
    gw_kernel_sort_by_time(&t);
    const char *by_time[] = {"add", "copy", "gemm", "relu"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(t.items[i].name, by_time[i]);
    gw_kernel_table_free(&t);
}

/* Kinds key the entry (20 bits each); the order is kind, source, destination. */
static void test_transfers(void **state)
{
    (void)state;
    struct gw_transfer_table t = {0};
    gw_transfer_get(&t, 2, 1, 3)->count++;
    gw_transfer_get(&t, 1, 4, 0)->count++;
    gw_transfer_get(&t, 1, 2, 9)->count++;
    gw_transfer_get(&t, 1, 2, 3)->count++;
    gw_transfer_get(&t, 2 | 1u << 20, 1, 3)->count++;  /* the same key as (2, 1, 3) */
    assert_int_equal(t.count, 4);
    gw_transfer_sort(&t);
    const unsigned want[4][4] = {{1, 2, 3, 1}, {1, 2, 9, 1}, {1, 4, 0, 1}, {2, 1, 3, 2}};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(t.items[i].kind, want[i][0]);
        assert_int_equal(t.items[i].src, want[i][1]);
        assert_int_equal(t.items[i].dst, want[i][2]);
        assert_int_equal(t.items[i].count, want[i][3]);
    }
    gw_transfer_table_free(&t);
}

/* Busy time is the union of a device's work across streams; devices are kept by ordinal
 * whatever order they come in; an end past 2^64 is counted, not added. */
static void test_devices(void **state)
{
    (void)state;
    struct gw_devices d = {0};
    assert_non_null(gw_devices_add(&d, 1, 1000, 500));   /* [1000, 1500) */
    assert_non_null(gw_devices_add(&d, 1, 1200, 500));   /* overlaps: to 1700 */
    assert_non_null(gw_devices_add(&d, 0, 100, 100));    /* device 0 comes later */
    assert_non_null(gw_devices_add(&d, 1, 2000, 100));   /* after an idle gap */
    assert_non_null(gw_devices_add(&d, 1, UINT64_MAX - 5, 10));
    assert_int_equal(d.bad_durations, 1);
    gw_devices_settle(&d);
    assert_int_equal(d.count, 2);
    assert_int_equal(d.items[0].device, 0);
    assert_int_equal(d.items[0].busy_ns, 100);
    assert_int_equal(d.items[1].device, 1);
    assert_int_equal(d.items[1].busy_ns, 800);
    assert_int_equal(d.items[1].span_ns, 1100);
    assert_int_equal(gw_devices_busy(&d), 900);
    gw_devices_free(&d);
}

/* Events of every kind the stats count, to the tables they belong in. */
static void test_events(void **state)
{
    (void)state;
    struct gw_stats st;
    assert_int_equal(gw_stats_init(&st, 1), 0);
    struct gw_stats_pass p;
    gw_stats_pass_begin(&p, &st.traces[0], NULL);
    struct gw_event ev = call_event(GW_API_cuLaunchKernel, 0, 40);
    ev.u.launch.shape_id = 3;
    gw_stats_add(&st, &p, &ev);
    gw_stats_add(&st, &p, &ev);
    ev = call_event(GW_API_cuGraphLaunch, 0, 9);  /* no shape: no kernel */
    gw_stats_add(&st, &p, &ev);
    ev = gpu_kernel_event(0, 3, 1000, 200);
    gw_stats_add(&st, &p, &ev);
    ev = gpu_kernel_event(0, 3, 1100, 200);       /* overlaps the one before */
    gw_stats_add(&st, &p, &ev);
    ev = (struct gw_event){.kind = GW_EV_GPU_MEMCPY, .ts_ns = 2000, .dur_ns = 50};
    ev.u.gpu_memcpy.bytes = 4096;
    ev.u.gpu_memcpy.copy_kind = 1;
    ev.u.gpu_memcpy.src_kind = 2;
    ev.u.gpu_memcpy.dst_kind = 3;
    gw_stats_add(&st, &p, &ev);
    ev = (struct gw_event){.kind = GW_EV_GPU_MEMSET, .ts_ns = 3000, .dur_ns = 10};
    ev.u.gpu_memset.bytes = 64;
    ev.u.gpu_memset.memory_kind = 3;
    gw_stats_add(&st, &p, &ev);
    const enum gw_event_kind nvtx[] = {GW_EV_RANGE_PUSH, GW_EV_RANGE_POP, GW_EV_RANGE_START,
                                       GW_EV_RANGE_END, GW_EV_MARK};
    for (size_t i = 0; i < 5; i++) {
        ev = (struct gw_event){.kind = nvtx[i]};
        gw_stats_add(&st, &p, &ev);
    }
    gw_stats_pass_end(&p);
    gw_stats_sort(&st);

    assert_int_equal(st.out_of_memory, 0);
    assert_int_equal(st.apis.count, 2);
    assert_string_equal(st.apis.items[0].name, "cuLaunchKernel");
    assert_int_equal(st.apis.items[0].count, 2);
    assert_int_equal(st.kernels.count, 1);
    assert_string_equal(st.kernels.items[0].name, "shape_3");
    assert_int_equal(st.kernels.items[0].launches, 2);
    assert_int_equal(st.kernels.items[0].total_ns, 80);
    assert_int_equal(st.gpu_kernels.count, 1);
    assert_int_equal(st.gpu_kernels.items[0].total_ns, 400);
    assert_int_equal(st.memcpys.count, 1);
    assert_int_equal(st.memcpys.items[0].bytes, 4096);
    assert_int_equal(st.memsets.items[0].kind, 3);
    const struct gw_trace_stat *t = &st.traces[0];
    assert_int_equal(t->devices.count, 1);
    assert_int_equal(t->devices.items[0].kernels, 2);
    assert_int_equal(t->devices.items[0].kernel_ns, 400);
    assert_int_equal(t->devices.items[0].busy_ns, 300 + 50 + 10);
    assert_int_equal(t->devices.items[0].memcpys, 1);
    assert_int_equal(t->devices.items[0].memsets, 1);
    assert_int_equal(t->nvtx_ranges, 2);
    assert_int_equal(t->nvtx_marks, 1);
    gw_stats_free(&st);
}

/* Traces' spans are joined on the wall clock; unreadable ones count for nothing; one GPU
 * record anywhere and the run is not host only. */
static void test_totals(void **state)
{
    (void)state;
    struct gw_stats st;
    assert_int_equal(gw_stats_init(&st, 3), 0);
    struct gw_trace_stat *a = &st.traces[0], *b = &st.traces[1];
    a->readable = b->readable = 1;
    a->bytes = 100, b->bytes = 300;
    a->rs.calls = 10, b->rs.calls = 30;
    a->rs.first_ts_ns = 1000, a->rs.last_ts_ns = 5000;
    a->hdr.realtime_minus_trace_ns = 0;
    b->rs.first_ts_ns = 100, b->rs.last_ts_ns = 2000;  /* its clock starts 4000 later */
    b->hdr.realtime_minus_trace_ns = 4000;
    st.traces[2].rs.calls = 99;                         /* unreadable */
    struct gw_stats_totals t = gw_stats_totals(&st);
    assert_int_equal(t.traces, 2);
    assert_int_equal(t.events, 40);
    assert_int_equal(t.bytes, 400);
    assert_int_equal(t.span_ns, 6000 - 1000);
    assert_int_equal(gw_trace_span(a), 4000);
    assert_true(t.host_only);
    b->rs.gpu_lost_records = 1;  /* a loss of GPU records is a GPU timeline too */
    assert_false(gw_stats_totals(&st).host_only);
    assert_false(gw_trace_host_only(b));
    gw_stats_free(&st);
}

/* Read from a file: kernels by the names the trace defines, counted per trace. */
static void test_read_names_kernels(void **state)
{
    (void)state;
    char path[] = "/tmp/test_stats.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w+b");
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 0);
    tw_string(&c, 1, "gemm_kernel");
    uint64_t shape[10] = {7, 1, 0xF00D, 64, 1, 1, 256, 1, 1, 0};
    tw_record(&c, GW_REC_SHAPE, shape, 10, NULL, 0);
    tw_write_chunk(f, &c, 0, GW_CHUNK_DEFS, 0);
    tw_begin(&c, 1000);
    const uint64_t named[2] = {7, 0}, unnamed[2] = {8, 0};
    for (int i = 0; i < 3; i++)
        tw_call(&c, 1000 + 100 * (uint64_t)i, GW_API_cuLaunchKernel, 10, 0, named, 2);
    tw_call(&c, 2000, GW_API_cuLaunchKernel, 20, 0, unnamed, 2);
    tw_write_chunk(f, &c, 77, GW_CHUNK_EVENTS, 0);
    fclose(f);
    tw_free(&c);

    struct gw_stats st;
    assert_int_equal(gw_stats_init(&st, 2), 0);
    st.traces[0].path = path;
    st.traces[1].path = "/nonexistent/trace.gwt";
    assert_int_equal(gw_stats_read(&st, &st.traces[0], NULL, NULL), 0);
    assert_int_equal(gw_stats_read(&st, &st.traces[1], NULL, NULL), -1);
    assert_false(st.traces[1].readable);
    assert_true(strlen(st.traces[1].error) > 0);
    gw_stats_sort(&st);
    assert_true(st.traces[0].readable);
    assert_int_equal(st.traces[0].rs.calls, 4);
    assert_int_equal(st.kernels.count, 2);
    assert_string_equal(st.kernels.items[0].name, "gemm_kernel");
    assert_int_equal(st.kernels.items[0].launches, 3);
    assert_string_equal(st.kernels.items[1].name, "shape_8");
    assert_true(gw_stats_totals(&st).host_only);
    gw_stats_free(&st);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_table),
        cmocka_unit_test(test_kernels_by_shape),
        cmocka_unit_test(test_kernel_order),
        cmocka_unit_test(test_transfers),
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_totals),
        cmocka_unit_test(test_read_names_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
