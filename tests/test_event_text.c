/*
 * gpuwatch dump's lines (tools/reader/event_text.c, def_text.c) for events made here, in
 * a reader whose definitions come from a trace written with the shim's own encoder: each
 * family's details, names looked up in the tables, and what is printed when a definition
 * is missing. test_cli.sh checks the command around them.
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

#include "def_text.h"
#include "event_text.h"
#include "test_reader_tracewriter.h"

static char path[] = "/tmp/test_event_text.XXXXXX";
static struct gw_reader *reader;
static char line[4096];

/* A trace that defines a kernel (shape 7, "gemm kernel": quoted, it has a space), a
 * stream (our 3, CUPTI's 17), a thread name and a native stack. */
static int open_defs(void **state)
{
    (void)state;
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w+b");
    struct gw_file_header h = tw_header();
    tw_write_header(f, &h);
    struct tw_chunk c = {0};
    tw_begin(&c, 0);
    tw_string(&c, 1, "gemm kernel");
    tw_string(&c, 2, "loader");
    tw_string(&c, 3, "libtrain.so");
    uint64_t shape[12] = {7, 1, 0xF00D, 64, 2, 1, 256, 1, 1, 1024, 32, 512};
    tw_record(&c, GW_REC_SHAPE, shape, 12, NULL, 0);
    uint64_t stream[3] = {3, 0x5500AA, 17};
    tw_record(&c, GW_REC_STREAM, stream, 3, NULL, 0);
    tw_write_chunk(f, &c, 0, GW_CHUNK_DEFS, 0);
    fclose(f);
    tw_free(&c);
    char err[256];
    if (gw_reader_open(path, &reader, err, sizeof err) != 0)
        return -1;
    gw_reader_load_defs(reader);
    return 0;
}

static int close_defs(void **state)
{
    (void)state;
    gw_reader_close(reader);
    unlink(path);
    return 0;
}

/* The line of ev, its newline included, with times from origin 1000. */
static const char *text(const struct gw_event *ev)
{
    FILE *out = fmemopen(line, sizeof line, "w");
    assert_non_null(out);
    gw_event_text(out, reader, 1000, ev);
    fclose(out);
    return line;
}

static struct gw_event call(unsigned api, uint64_t ts, uint64_t dur, uint32_t result)
{
    struct gw_event ev = {.kind = GW_EV_CALL, .tid = 42, .api_id = api, .ts_ns = ts,
                          .dur_ns = dur, .result = result, .family = gw_api_family(api),
                          .call_id = 0xAB};
    return ev;
}

/* A launch names its kernel from the shape, quoted for its space; an unknown shape is
 * named by id. */
static void test_launch(void **state)
{
    (void)state;
    struct gw_event ev = call(GW_API_cuLaunchKernel, 1500, 20, 0);
    ev.u.launch.shape_id = 7;
    ev.u.launch.stream_id = 3;
    assert_string_equal(text(&ev), "500 42 call cuLaunchKernel 20 0 kernel=\"gemm kernel\""
                        " grid=64,2,1 block=256,1,1 smem=1024 stream=3 call=0xab\n");
    ev.u.launch.shape_id = 9;
    assert_string_equal(text(&ev), "500 42 call cuLaunchKernel 20 0 shape=9 stream=3"
                        " call=0xab\n");
}

/* An error is named, a device handle of 32 bits is signed (CU_DEVICE_CPU is -1), and a
 * call this reader does not know shows its raw words. */
static void test_calls(void **state)
{
    (void)state;
    struct gw_event ev = call(GW_API_cuCtxCreate_v4, 1000, 5, 2);
    ev.u.ctx.device = 0xFFFFFFFF;
    ev.u.ctx.ctx = 0x10;
    assert_string_equal(text(&ev), "0 42 call cuCtxCreate_v4 5 2 device=-1 ctx=0x10"
                        " error=CUDA_ERROR_OUT_OF_MEMORY call=0xab\n");
    ev = call(1000, 999, 1, 0);  /* before the origin: negative */
    ev.family = -1;
    ev.nwords = 2;
    ev.words[0] = 5, ev.words[1] = 6;
    ev.call_id_unsure = 1;
    assert_string_equal(text(&ev), "-1 42 call api_1000 1 0 words=5,6 call=0xab"
                        " call_unsure=1\n");
}

/* A GPU record gives our stream for CUPTI's when a STREAM definition maps it, '-' when
 * none does; its kernel carries registers and static shared memory. */
static void test_gpu_records(void **state)
{
    (void)state;
    struct gw_event ev = {.kind = GW_EV_GPU_KERNEL, .tid = 0, .ts_ns = 3000, .dur_ns = 700};
    ev.u.gpu_kernel.shape_id = 7;
    ev.u.gpu_kernel.device = 0;
    ev.u.gpu_kernel.stream_id = 17;
    ev.u.gpu_kernel.correlation_id = 5;
    assert_string_equal(text(&ev), "2000 0 gpu_kernel - 700 - kernel=\"gemm kernel\""
                        " grid=64,2,1 block=256,1,1 smem=1024 regs=32 static_smem=512"
                        " device=0 stream=3 cupti_stream=17 corr=5 graph=0\n");
    ev = (struct gw_event){.kind = GW_EV_GPU_MEMSET, .ts_ns = 1000, .dur_ns = 4};
    ev.u.gpu_memset.bytes = 64;
    ev.u.gpu_memset.stream_id = 99;
    const char *got = text(&ev);
    assert_non_null(strstr(got, " stream=- cupti_stream=99 "));
    ev = (struct gw_event){.kind = GW_EV_CORRELATION, .tid = 8};
    ev.u.correlation.correlation_id = 5;
    ev.u.correlation.call_id = 0xAB;
    assert_string_equal(text(&ev), "- 8 correlation - - - corr=5 call=0xab\n");
}

/* NVTX: the default domain is '-', names come from the string table, a missing one is
 * shown by id. */
static void test_nvtx(void **state)
{
    (void)state;
    struct gw_event ev = {.kind = GW_EV_RANGE_PUSH, .tid = 42, .ts_ns = 1100};
    ev.u.nvtx.name_id = 2;
    assert_string_equal(text(&ev), "100 42 range_push - - - domain=- name=loader\n");
    ev.u.nvtx.domain_id = 2;
    ev.u.nvtx.name_id = 77;
    assert_string_equal(text(&ev), "100 42 range_push - - - domain=loader name_id=77\n");
}

/* Definitions: a STREAM with its CUPTI id, a native stack's frames (module+offset, no
 * symbol), a PYSITE whose stack is not defined (only the calls it names). */
static void test_definitions(void **state)
{
    (void)state;
    struct gw_event ev = {.kind = GW_EV_STREAM};
    ev.u.stream.id = 3;
    ev.u.stream.handle = 0x5500AA;
    ev.u.stream.cupti_stream_id = 17;
    assert_string_equal(text(&ev), "- 0 def stream - - id=3 handle=0x5500aa cupti_stream=17\n");
    struct gw_stack_frame frame = {.module_id = 3, .module_offset = 0x1F0};
    ev = (struct gw_event){.kind = GW_EV_STACK};
    ev.u.stack.id = 4;
    ev.u.stack.nframes = 1;
    ev.u.stack.frames = &frame;
    assert_string_equal(text(&ev), "- 0 def stack - - id=4 frames=1 frame0=libtrain.so+0x1f0\n");
    ev = (struct gw_event){.kind = GW_EV_PYSITE, .tid = 42};
    ev.u.site.first_call_id = 0x10;
    ev.u.site.last_call_id = 0x12;
    ev.u.site.stack_id = 5;
    assert_string_equal(text(&ev), "- 42 pysite - - - calls=0x10..0x12 pystack=5\n");
}

static void test_feature_names(void **state)
{
    (void)state;
    assert_string_equal(gw_feature_name(0), "host_calls");
    assert_string_equal(gw_feature_name(6), "gpu_sampled");
    for (unsigned bit = 0; bit < 32; bit++)
        if (GW_FEAT_GPU_SAMPLED >> bit == 1)
            assert_string_equal(gw_feature_name(bit), "gpu_sampled");
    assert_null(gw_feature_name(7));
    assert_null(gw_feature_name(31));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch),
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_gpu_records),
        cmocka_unit_test(test_nvtx),
        cmocka_unit_test(test_definitions),
        cmocka_unit_test(test_feature_names),
    };
    return cmocka_run_group_tests(tests, open_defs, close_defs);
}
