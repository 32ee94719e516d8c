/* Issue 3 end to end: the GPU timeline from (simulated) CUPTI and the user's NVTX ranges,
 * recorded beside the host calls, linked to them, on one clock; and a clean fallback to
 * host-only tracing whenever CUPTI cannot be used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze.h"
#include "harness.h"

#define API(name) api_id_of(#name)

static struct run_result result;
static struct tally traces;

static const struct file_tally *run_one(const char *const *args, const char *const *env)
{
    struct run_options options = {.args = args, .env = env, .preload = 1};
    run_workload(&options, &result);
    if (!result.exited)
        fail_msg("the workload died of signal %d; its stderr: %s", result.status, result.err);
    assert_int_equal(result.status, 0);
    tally_traces(result.trace_dir, &traces);
    assert_int_equal(traces.files, 1);
    assert_int_equal(traces.file[0].damage, 0);
    assert_int_equal(traces.file[0].lost_events, 0);
    return &traces.file[0];
}

static void test_timeline_matches_the_simulation(void **state)
{
    (void)state;
    const struct file_tally *f = run_one((const char *[]){"--mode", "timeline", "--launches", "20", NULL}, NULL);
    assert_int_equal(f->header.cupti_status, GW_CUPTI_ACTIVE);
    assert_true(f->header.feature_flags & GW_FEAT_GPU_ACTIVITY);
    /* Per step: one 50 us kernel, a pinned and a pageable 1 MiB copy, a 1 MiB memset. */
    assert_int_equal(f->gpu_kernels, 20);
    assert_int_equal(f->kernels_stream_known, 20);
    assert_true(f->kernel_dur_min >= 49000 && f->kernel_dur_max <= 51000);
    assert_int_equal(f->kernels_overlapping, 0);
    assert_int_equal(f->gpu_memcpys, 40);
    assert_int_equal(f->gpu_memcpy_pinned, 20);
    assert_int_equal(f->gpu_memcpy_pageable, 20);
    /* and their lengths: 1 MiB at the simulated 20 GB/s pinned, 5 GB/s pageable */
    assert_in_range(f->memcpy_pinned_ns_min, 52000, 52900);
    assert_in_range(f->memcpy_pinned_ns_max, 52000, 52900);
    assert_in_range(f->memcpy_pageable_ns_min, 209200, 210200);
    assert_in_range(f->memcpy_pageable_ns_max, 209200, 210200);
    assert_int_equal(f->gpu_memsets, 20);
    assert_int_equal(f->gpu_lost, 0);
    /* Every launch has exactly one GPU record linked to it; none is orphaned; and on one
     * clock no kernel starts before the call that launched it began. */
    assert_int_equal(f->correlations, 80);
    assert_int_equal(f->calls[API(cuLaunchKernel)], 20);
    assert_int_equal(f->launches_linked_once, 20);
    assert_int_equal(f->kernels_unlinked, 0);
    assert_int_equal(f->kernels_before_launch, 0);
    /* the default, sampled, timeline: a run shorter than a window is traced whole */
    assert_false(f->header.feature_flags & GW_FEAT_GPU_SAMPLED);
    assert_int_equal(f->gpu_windows, 1);
    remove_dir(result.trace_dir);
}

static void test_many_threads_every_launch_linked(void **state)
{
    (void)state;
    const struct file_tally *f = run_one(
        (const char *[]){"--mode", "threads", "--threads", "8", "--launches", "2000", NULL}, NULL);
    assert_int_equal(f->calls[API(cuLaunchKernel)], 16000);
    assert_int_equal(f->gpu_kernels, 16000);
    assert_int_equal(f->launches_linked_once, 16000);
    assert_int_equal(f->kernels_unlinked, 0);
    assert_int_equal(f->kernels_before_launch, 0);
    remove_dir(result.trace_dir);
}

/* Each GPU record links to the call that issued it, whatever the stream: two streams
 * ordered by an event, a graph replayed on one of them, and a second thread's per-thread
 * default stream (_ptsz entry points, whose NULL stream is that thread's own). */
static void test_streams_every_record_linked_to_its_call(void **state)
{
    (void)state;
    const struct file_tally *f =
        run_one((const char *[]){"--mode", "streams", "--launches", "50", NULL},
                (const char *[]){"GPUWATCH_FLUSH_MS=1", "FAKECUPTI_BUFFER_LIMIT=8", NULL});
    /* per step: stream_a, stream_b, a copy, a graph of two kernels; and on the other
     * thread per_thread_c and a memset */
    assert_int_equal(f->gpu_kernels, 250);
    assert_int_equal(f->gpu_memcpys, 50);
    assert_int_equal(f->gpu_memsets, 50);
    assert_int_equal(f->issuing_calls, 250);
    assert_int_equal(f->issuing_linked_once, 250);
    assert_int_equal(f->graph_launches, 50);
    assert_int_equal(f->graph_records, 100);
    assert_int_equal(f->records_linked, 350);
    assert_int_equal(f->records_unlinked, 0);
    assert_int_equal(f->records_other_stream, 0);
    assert_int_equal(f->records_other_work, 0);
    assert_int_equal(f->kernels_stream_known, 250);
    remove_dir(result.trace_dir);
}

/* A sampled timeline in windows (forced with a record rate of 0; by default a program past
 * GPUWATCH_TIMELINE_FULL_RATE): every call inside a window (by the times its records give)
 * has its one record, linked to it, on its stream, of its work; no call outside every
 * window has any linked. Only a call under way as a window opened may leave records
 * untagged. The header says the timeline has gaps. No margin of time in any of it: a
 * sanitizer build beside a CPU hog once kept a call 2 ms from the window's flag. The run's
 * length is the simulated GPU's, not the CPU's: each of the 6000 steps waits for its ~50 us
 * of kernels, so it lasts 300 ms or more on any machine, three windows' periods (a slower
 * machine only opens more). */
static void test_sampled_windows_link_exactly(void **state)
{
    (void)state;
    const struct file_tally *f = run_one(
        (const char *[]){"--mode", "streams", "--launches", "6000", NULL},
        (const char *[]){"GPUWATCH_TIMELINE_WINDOW_MS=30", "GPUWATCH_TIMELINE_EVERY_MS=100",
                         "GPUWATCH_TIMELINE_FULL_RATE=0", "GPUWATCH_FLUSH_MS=10",
                         "WORKLOAD_SYNC_EACH_STEP=1", NULL});
    assert_true(f->header.feature_flags & GW_FEAT_GPU_SAMPLED);
    assert_true(f->gpu_windows >= 2);
    assert_true(f->issuing_inside > 0);
    assert_true(f->issuing_outside > 0);
    assert_int_equal(f->issuing_inside_linked_once, f->issuing_inside);
    assert_int_equal(f->records_of_calls_outside, 0);
    /* a graph launch here replays two kernels; any other call issues one record */
    assert_true(f->records_unlinked <= 2 * f->calls_across_openings);
    assert_int_equal(f->records_other_stream, 0);
    assert_int_equal(f->records_other_work, 0);
    assert_true(f->graph_records > 0);
    assert_true(f->gpu_kernels < 5 * 4000);
    remove_dir(result.trace_dir);
}

/* GPUWATCH_TIMELINE=full: one window, never shut; =off: no CUPTI, and the header says why. */
static void test_timeline_full_and_off(void **state)
{
    (void)state;
    const char *const args[] = {"--mode", "streams", "--launches", "4000", NULL};
    const struct file_tally *f = run_one(
        args, (const char *[]){"GPUWATCH_TIMELINE=full", "GPUWATCH_TIMELINE_FULL_RATE=0",
                               "GPUWATCH_TIMELINE_WINDOW_MS=60", "WORKLOAD_SYNC_EACH_STEP=1",
                               NULL});
    assert_false(f->header.feature_flags & GW_FEAT_GPU_SAMPLED);
    assert_int_equal(f->gpu_windows, 0);
    assert_int_equal(f->gpu_kernels, 5 * 4000);
    assert_int_equal(f->records_unlinked, 0);
    remove_dir(result.trace_dir);
    f = run_one(args, (const char *[]){"GPUWATCH_TIMELINE=off", NULL});
    assert_int_equal(f->header.cupti_status, GW_CUPTI_DISABLED);
    assert_string_equal(f->header.cupti_reason, "disabled by GPUWATCH_TIMELINE=off");
    assert_int_equal(f->gpu_kernels, 0);
    assert_int_equal(f->calls[API(cuLaunchKernel)], 2 * 4000 + 2);  /* (+ the 2 captured) */
    remove_dir(result.trace_dir);
}

/* Host side must be complete and identical whatever happened to CUPTI. */
static void assert_host_side_complete(const struct file_tally *f)
{
    assert_int_equal(f->calls[API(cuLaunchKernel)], 20);
    assert_int_equal(f->calls[API(cuMemcpyHtoDAsync_v2)], 40);
    assert_int_equal(f->calls[API(cuMemsetD8Async)], 20);
    assert_int_equal(f->calls[API(cuStreamSynchronize)], 20);
    assert_int_equal(f->gpu_kernels, 0);
    assert_int_equal(f->correlations, 0);
}

static void assert_one_warning(const char *text)
{
    assert_non_null(strstr(result.err, text));
    const char *newline = strchr(result.err, '\n');
    assert_non_null(newline);
    assert_null(strchr(newline + 1, '\n'));
}

static void test_profiler_holding_cupti_falls_back(void **state)
{
    (void)state;
    const struct file_tally *f = run_one((const char *[]){"--mode", "timeline", "--launches", "20", NULL},
                                         (const char *[]){"FAKECUPTI_IN_USE=1", NULL});
    assert_int_equal(f->header.cupti_status, GW_CUPTI_IN_USE);
    assert_non_null(strstr(f->header.cupti_reason, "holds CUPTI"));
    assert_host_side_complete(f);
    assert_one_warning("GPU timeline off");
    remove_dir(result.trace_dir);
}

static void test_cupti_missing_falls_back(void **state)
{
    (void)state;
    const struct file_tally *f = run_one(
        (const char *[]){"--mode", "timeline", "--launches", "20", NULL},
        (const char *[]){"GPUWATCH_CUPTI=/nonexistent/libcupti.so.13", NULL});
    assert_int_equal(f->header.cupti_status, GW_CUPTI_NOT_FOUND);
    assert_non_null(strstr(f->header.cupti_reason, "/nonexistent/libcupti.so.13"));
    assert_host_side_complete(f);
    assert_one_warning("GPU timeline off");
    remove_dir(result.trace_dir);
}

/* Without GPUWATCH_CUPTI, the CUPTI beside the program's CUDA runtime (a wheel's, or the
 * toolkit's) comes before one the loader's path holds: a runtime loaded from a directory
 * with a libcupti.so.13 (the simulated one) gets that one, though the system has its own.
 * (The runtime is a stand-in library by that name, which the program loads before its
 * first driver call: only its path matters.) */
static void test_cupti_found_beside_the_runtime(void **state)
{
    (void)state;
    char dir[] = "/tmp/gw-cupti-beside.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char runtime[64], cupti[64];
    snprintf(runtime, sizeof runtime, "%s/libcudart.so.13", dir);
    snprintf(cupti, sizeof cupti, "%s/libcupti.so.13", dir);
    assert_int_equal(symlink(GW_STAND_IN_RUNTIME, runtime), 0);
    assert_int_equal(symlink(GW_FAKE_CUPTI, cupti), 0);
    const struct file_tally *f = run_one(
        (const char *[]){"--dlopen", runtime, "--mode", "timeline", "--launches", "20", NULL},
        (const char *[]){"GPUWATCH_CUPTI=", NULL});
    assert_int_equal(f->header.cupti_status, GW_CUPTI_ACTIVE);
    assert_int_equal(f->gpu_kernels, 20);
    assert_int_equal(f->launches_linked_once, 20);
    remove_dir(result.trace_dir);
    unlink(runtime);
    unlink(cupti);
    rmdir(dir);
}

/* With no GPUWATCH_CUPTI and no runtime beside it, the CUPTI of the toolkit CUDA_HOME names
 * comes before the loader's (this machine's loader finds the installed toolkit's CUPTI,
 * which cannot run on the simulated driver). */
static void test_cupti_found_in_cuda_home(void **state)
{
    (void)state;
    char home[] = "/tmp/gw-cuda-home.XXXXXX";
    assert_non_null(mkdtemp(home));
    char dir[128], cupti[160], env[160];
    const char *const parts[] = {"extras", "extras/CUPTI", "extras/CUPTI/lib64"};
    for (int i = 0; i < 3; i++) {
        snprintf(dir, sizeof dir, "%s/%s", home, parts[i]);
        assert_int_equal(mkdir(dir, 0755), 0);
    }
    snprintf(cupti, sizeof cupti, "%s/libcupti.so.13", dir);
    assert_int_equal(symlink(GW_FAKE_CUPTI, cupti), 0);
    snprintf(env, sizeof env, "CUDA_HOME=%s", home);
    const struct file_tally *f =
        run_one((const char *[]){"--mode", "timeline", "--launches", "20", NULL},
                (const char *[]){"GPUWATCH_CUPTI=", env, NULL});
    assert_int_equal(f->header.cupti_status, GW_CUPTI_ACTIVE);
    assert_int_equal(f->gpu_kernels, 20);
    assert_int_equal(f->launches_linked_once, 20);
    remove_dir(result.trace_dir);
    unlink(cupti);
    for (int i = 2; i >= 0; i--) {
        snprintf(dir, sizeof dir, "%s/%s", home, parts[i]);
        rmdir(dir);
    }
    rmdir(home);
}

static void test_cupti_too_old_falls_back(void **state)
{
    (void)state;
    const struct file_tally *f = run_one((const char *[]){"--mode", "timeline", "--launches", "20", NULL},
                                         (const char *[]){"FAKECUPTI_VERSION=12", NULL});
    assert_int_equal(f->header.cupti_status, GW_CUPTI_INCOMPATIBLE);
    assert_non_null(strstr(f->header.cupti_reason, "version 12"));
    assert_host_side_complete(f);
    remove_dir(result.trace_dir);
}

static void test_cupti_disabled_quietly(void **state)
{
    (void)state;
    const struct file_tally *f = run_one((const char *[]){"--mode", "timeline", "--launches", "20", NULL},
                                         (const char *[]){"GPUWATCH_CUPTI=0", NULL});
    assert_int_equal(f->header.cupti_status, GW_CUPTI_DISABLED);
    assert_host_side_complete(f);
    assert_string_equal(result.err, "");
    remove_dir(result.trace_dir);
}

/* torch.profiler started mid-run takes CUPTI's activity buffers: the host side stays
 * complete, the GPU records stop at that step, and the analysis sees the cut and falls back
 * to the host evidence instead of reading the rest of the run as idle. */
static void test_profiler_taking_cupti_midway(void **state)
{
    (void)state;
    const struct file_tally *f = run_one(
        (const char *[]){"--mode", "profiler-takeover", "--launches", "20", NULL}, NULL);
    assert_int_equal(f->header.cupti_status, GW_CUPTI_ACTIVE);
    assert_int_equal(f->calls[API(cuLaunchKernel)], 20);
    assert_int_equal(f->calls[API(cuMemsetD8Async)], 20);
    assert_int_equal(f->gpu_kernels, 10);
    assert_int_equal(f->gpu_memsets, 10);
    assert_int_equal(f->launches_linked_once, 10);

    struct an_options opt;
    an_options_default(&opt);
    struct an_run run;
    char *paths[] = {result.trace_dir};
    assert_int_equal(an_run_paths(&run, paths, 1, &opt), 0);
    assert_int_equal(run.ntraces, 1);
    const struct an_model *m = run.traces[0].model;
    assert_non_null(m);
    assert_int_equal(m->gpu_records, 20);
    assert_false(m->gpu_timeline);
    assert_false(run.gpu_timeline);
    /* ten steps 120 ms apart after the cut */
    assert_true(m->gpu_cut_ns >= 1150000000ull && m->gpu_cut_ns < 3000000000ull);
    assert_int_equal(m->gpu_cut_ns, m->host_work_end - m->gpu_records_end);
    an_run_free(&run);
    remove_dir(result.trace_dir);
}

static void test_nvtx_ranges_recorded_exactly(void **state)
{
    (void)state;
    const struct file_tally *f = run_one((const char *[]){"--mode", "nvtx", NULL}, NULL);
    /* 4 threads x 3 steps x (step, forward, backward), plus one push in the named domain. */
    assert_int_equal(f->range_pushes, 37);
    assert_int_equal(f->range_pops, 37);
    assert_int_equal(f->pushes_named[0], 12);
    assert_int_equal(f->pushes_named[1], 12);
    assert_int_equal(f->pushes_named[2], 12);
    assert_int_equal(f->pushes_named[3], 1);
    assert_int_equal(f->domain_pushes_named, 1);
    assert_int_equal(f->nvtx_max_depth, 2);
    assert_int_equal(f->nvtx_unbalanced, 0);
    assert_int_equal(f->marks, 1);
    assert_int_equal(f->range_starts, 1);
    assert_int_equal(f->range_ends, 1);
    assert_int_equal(f->calls[API(cuLaunchKernel)], 25);
    remove_dir(result.trace_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeline_matches_the_simulation),
        cmocka_unit_test(test_many_threads_every_launch_linked),
        cmocka_unit_test(test_streams_every_record_linked_to_its_call),
        cmocka_unit_test(test_sampled_windows_link_exactly),
        cmocka_unit_test(test_timeline_full_and_off),
        cmocka_unit_test(test_profiler_holding_cupti_falls_back),
        cmocka_unit_test(test_cupti_missing_falls_back),
        cmocka_unit_test(test_cupti_found_beside_the_runtime),
        cmocka_unit_test(test_cupti_found_in_cuda_home),
        cmocka_unit_test(test_cupti_too_old_falls_back),
        cmocka_unit_test(test_cupti_disabled_quietly),
        cmocka_unit_test(test_profiler_taking_cupti_midway),
        cmocka_unit_test(test_nvtx_ranges_recorded_exactly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
