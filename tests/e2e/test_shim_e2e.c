/* End to end: the workload, preloaded with libgpuwatch.so over the simulated driver, must
 * get the driver's real answers, and its trace must hold exactly the calls it made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define API(name) api_id_of(#name)

static struct run_result result;
static struct tally traces;

static void run(const char *const *args, const char *const *env)
{
    struct run_options options = {.args = args, .env = env, .preload = 1};
    run_workload(&options, &result);
    tally_traces(result.trace_dir, &traces);
}

static void finish(void) { remove_dir(result.trace_dir); }

static const struct file_tally *only_file(void)
{
    assert_int_equal(traces.files, 1);
    assert_int_equal(traces.file[0].damage, 0);
    assert_int_equal(traces.file[0].lost_events, 0);
    return &traces.file[0];
}

/* The sequence of run_sequence() in workload.c, under each entry path's exact names. */
static void assert_sequence(const struct file_tally *f, const char *htod, const char *launch,
                            const char *sync, uint64_t launches, uint64_t extra_calls)
{
    assert_int_equal(f->calls[API(cuInit)], 1);
    assert_int_equal(f->calls[API(cuDevicePrimaryCtxRetain)], 1);
    assert_int_equal(f->calls[API(cuModuleGetFunction)], 1);
    assert_int_equal(f->calls[API(cuMemAlloc_v2)], 1);
    assert_int_equal(f->calls[API(cuMemAllocHost_v2)], 1);
    assert_int_equal(f->calls[api_id_of(htod)], 2);
    assert_int_equal(f->htod_pinned, 1);
    assert_int_equal(f->htod_pageable, 1);
    assert_int_equal(f->calls[api_id_of(launch)], launches);
    assert_int_equal(f->calls[api_id_of(sync)], 1);
    assert_int_equal(f->calls[API(cuMemcpyDtoH_v2)], 1);
    assert_int_equal(f->calls[API(cuMemFree_v2)], 1);
    assert_int_equal(f->calls[API(cuMemFreeHost)], 1);
    assert_int_equal(f->total_calls, 11 + launches + extra_calls);
    assert_string_equal(f->first_kernel, "tiny_kernel");
    assert_int_equal(f->first_grid_x, 64);
    assert_int_equal(f->first_block_x, 256);
    assert_int_equal(f->launches_named, launches);
}

static void test_direct_symbols(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "direct", "--launches", "100", NULL}, NULL);
    assert_true(result.exited);
    assert_int_equal(result.status, 0);
    assert_non_null(strstr(result.out, "workload direct: ok"));
    const struct file_tally *f = only_file();
    assert_sequence(f, "cuMemcpyHtoD_v2", "cuLaunchKernel", "cuStreamSynchronize", 100, 0);
    /* NULL-stream work joins the host's stream 0 through its CUPTI stream id. */
    assert_int_equal(f->gpu_kernels, 100);
    assert_int_equal(f->kernels_stream_known, 100);
    assert_int_equal(f->launches_linked_once, 100);
    finish();
}

static void test_dlsym_on_driver_handle(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "dlsym", "--launches", "50", NULL}, NULL);
    assert_int_equal(result.status, 0);
    assert_sequence(only_file(), "cuMemcpyHtoD_v2", "cuLaunchKernel", "cuStreamSynchronize", 50, 0);
    finish();
}

static void test_get_proc_address_v2(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "procaddr", "--launches", "40", NULL}, NULL);
    assert_true(result.exited);
    assert_int_equal(result.status, 0);
    const struct file_tally *f = only_file();
    /* 22 lookups: 17 answered with a wrapper (the self-lookup, 11 hooked functions, 5
     * version checks), 3 passed through (not hooked), 2 refused by the driver. */
    assert_int_equal(f->calls[API(cuGetProcAddress_v2)], 22);
    assert_int_equal(f->proc_outcome[GW_PROC_SUBSTITUTED], 17);
    assert_int_equal(f->proc_outcome[GW_PROC_PASSED], 3);
    assert_int_equal(f->proc_outcome[GW_PROC_FAILED], 2);
    assert_int_equal(f->errors[API(cuGetProcAddress_v2)], 2);
    assert_sequence(f, "cuMemcpyHtoD_v2_ptds", "cuLaunchKernel_ptsz", "cuStreamSynchronize_ptsz",
                    40, 22);
    finish();
}

static void test_get_proc_address_v1(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "procaddr-v1", "--launches", "10", NULL}, NULL);
    assert_int_equal(result.status, 0);
    const struct file_tally *f = only_file();
    assert_int_equal(f->calls[API(cuGetProcAddress_v2)], 23);
    assert_int_equal(f->calls[API(cuGetProcAddress)], 1);
    assert_int_equal(f->proc_outcome[GW_PROC_SUBSTITUTED], 19);
    finish();
}

static void test_eight_threads_exact_counts(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "threads", "--threads", "8", "--launches", "10000", NULL},
        NULL);
    assert_int_equal(result.status, 0);
    const struct file_tally *f = only_file();
    assert_int_equal(f->calls[API(cuLaunchKernel)], 80000);
    assert_int_equal(f->calls[API(cuStreamSynchronize)], 8);
    assert_int_equal(f->threads, 8);
    for (unsigned i = 0; i < f->threads; i++)
        assert_int_equal(f->launches_per_tid[i], 10000);
    finish();
}

static void test_fork_children(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "fork", "--launches", "20", NULL}, NULL);
    assert_int_equal(result.status, 0);
    /* The parent and the child that used the driver; none for the child that did not. */
    assert_int_equal(traces.files, 2);
    const struct file_tally *parent = tally_for_pid(&traces, result.pid);
    assert_non_null(parent);
    assert_int_equal(parent->calls[API(cuLaunchKernel)], 40);
    assert_int_equal(parent->calls[API(cuCtxSynchronize)], 2);
    assert_int_equal(parent->damage, 0);
    const struct file_tally *child = &traces.file[parent == &traces.file[0] ? 1 : 0];
    assert_int_equal(child->ppid, (uint32_t)result.pid);
    assert_int_equal(child->calls[API(cuLaunchKernel)], 7);
    assert_int_equal(child->calls[API(cuCtxSynchronize)], 1);
    assert_int_equal(child->total_calls, 8);
    assert_int_equal(child->damage, 0);
    assert_string_equal(child->first_kernel, "tiny_kernel");
    finish();
}

/* A program that closes every descriptor from 3 up and opens its own file gets its file
 * untouched (byte for byte what it wrote) and the trace whole: the shim's descriptor sat
 * high, and once closed the trace was reopened by path, never written through the
 * program's descriptor. */
static void test_program_closing_descriptors_keeps_its_file(void **state)
{
    (void)state;
    char own[] = "/tmp/gw_own_file.XXXXXX";
    int fd = mkstemp(own);
    assert_true(fd >= 0);
    close(fd);
    char env[64];
    snprintf(env, sizeof env, "WORKLOAD_OWN_FILE=%s", own);
    run((const char *[]){"--mode", "closefrom", "--launches", "30", NULL},
        (const char *[]){env, NULL});
    assert_int_equal(result.status, 0);
    const struct file_tally *f = only_file();
    assert_int_equal(f->calls[API(cuLaunchKernel)], 150);
    assert_int_equal(f->calls[API(cuCtxSynchronize)], 5);
    char expected[256] = "", got[512];
    for (int round = 0; round < 4; round++)
        snprintf(expected + strlen(expected), sizeof expected - strlen(expected),
                 "the program's own line %d\n", round);
    FILE *in = fopen(own, "rb");
    assert_non_null(in);
    size_t n = fread(got, 1, sizeof got, in);
    fclose(in);
    unlink(own);
    assert_int_equal(n, strlen(expected));
    assert_memory_equal(got, expected, n);
    finish();
}

/* The writer samples CPU time every 50 ms: the three descendants (a grandchild too), the two
 * of them at work and the 1 s of CPU they spin, while the traced thread, mostly asleep, uses
 * little. */
static void test_cpu_samples_count_workers(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "cpu-workers", NULL}, NULL);
    assert_int_equal(result.status, 0);
    assert_int_equal(traces.files, 1);
    const struct file_tally *f = only_file();
    assert_true(f->header.feature_flags & GW_FEAT_CPU_SAMPLES);
    assert_true(f->cpu_proc_samples >= 5);             /* 600 ms at one per 50 ms, or per round */
    assert_true(f->cpu_thread_samples >= f->cpu_proc_samples);
    assert_int_equal(f->max_descendants, 3);
    assert_int_equal(f->max_active, 2);                /* the waiting one never runs */
    assert_true(f->max_descendants_cpu_ns >= 300000000ull);
    assert_true(f->main_thread_cpu_ns < 200000000ull);
    assert_int_equal(f->damage, 0);
    finish();
}

/* Each step waits for a 4 ms kernel (a pageable copy of the loss, then a stream
 * synchronize): the main thread's samples carry how long it waited and its CPU time in the
 * waits, nearly all of it when the driver spins (CUDA's default), next to none when it
 * sleeps. */
static void cpu_in_waits(int spin)
{
    run((const char *[]){"--mode", "waits", "--launches", "80", NULL},
        (const char *[]){"FAKECUDA_KERNEL_NS=4000000",
                         spin ? "FAKECUDA_SPIN_WAIT=1" : "FAKECUDA_SPIN_WAIT=0", NULL});
    assert_int_equal(result.status, 0);
    const struct file_tally *f = only_file();
    assert_int_equal(f->calls[API(cuStreamSynchronize)], 80);
    /* 80 waits of 4 ms or more (a busy machine makes them longer, never shorter; the last
     * sample may come before the last few), and no more than the waiting calls took as
     * their records have them (the pageable download and the synchronize of each step) */
    uint64_t calls_ns = f->call_ns[API(cuStreamSynchronize)] +
                        f->call_ns[API(cuMemcpyDtoHAsync_v2)];
    if (f->main_thread_wait_ns < 150000000ull || f->main_thread_wait_ns > calls_ns)
        fail_msg("waited %llu ns, the waiting calls took %llu",
                 (unsigned long long)f->main_thread_wait_ns, (unsigned long long)calls_ns);
    /* a spinning wait is on a CPU, or runnable and waiting for one: beside tests that run
     * at a raised priority (ctest -j2 starts the timing tests first where its cost data
     * says they are long) it got 46 % of a CPU, and was runnable the rest of the time. A
     * sleeping wait is neither. */
    uint64_t spinning = f->main_thread_wait_cpu_ns + f->main_thread_runq_ns;
    if (spin ? f->main_thread_wait_cpu_ns < f->main_thread_wait_ns / 2 &&
                   spinning < f->main_thread_wait_ns / 10 * 8
             : f->main_thread_wait_cpu_ns > f->main_thread_wait_ns / 4)
        fail_msg("spin %d: %llu ns of %llu on a CPU, %llu runnable without one", spin,
                 (unsigned long long)f->main_thread_wait_cpu_ns,
                 (unsigned long long)f->main_thread_wait_ns,
                 (unsigned long long)f->main_thread_runq_ns);
    /* what the waits explain: the thread's own CPU time, from /proc, counts the spinning */
    assert_true(spin ? f->main_thread_cpu_ns >= 100000000ull
                     : f->main_thread_cpu_ns < 100000000ull);
    finish();
}

static void test_cpu_in_spinning_waits(void **state) { (void)state; cpu_in_waits(1); }
static void test_cpu_in_sleeping_waits(void **state) { (void)state; cpu_in_waits(0); }

static unsigned kill_after_us;  /* (kill_after's wait, set by each test) */

static void kill_after(pid_t pid)
{
    struct timespec pause = {0, (long)kill_after_us * 1000};
    nanosleep(&pause, NULL);
    kill(pid, SIGKILL);
}

/* SIGKILL at 20 moments drawn from a fixed seed, under a 1 s flush interval: every launch
 * that returned before the kill is in the trace (the one under way may be too), read from
 * the rings file the process left beside its trace. */
static void test_sigkill_anywhere_loses_nothing(void **state)
{
    (void)state;
    char counter[] = "/tmp/gw_counter.XXXXXX";
    int fd = mkstemp(counter);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, sizeof(uint64_t)), 0);
    uint64_t *done = mmap(NULL, sizeof *done, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    assert_true(done != MAP_FAILED);
    char env[64];
    snprintf(env, sizeof env, "WORKLOAD_COUNTER=%s", counter);
    unsigned seed = 20261125;
    for (int round = 0; round < 20; round++) {
        *done = 0;
        seed = seed * 1103515245u + 12345u;
        kill_after_us = (seed >> 8) % 150000;  /* 0 to 150 ms after "ready" */
        struct run_options options = {
            .args = (const char *[]){"--mode", "launch-until-killed", NULL},
            /* a 64 MiB ring: no drop before the kill, even where a sanitizer slows the
             * writer (a drop is counted as lost, not salvaged) */
            .env = (const char *[]){env, "GPUWATCH_FLUSH_MS=1000", "GPUWATCH_CUPTI=0",
                                    "GPUWATCH_BUFFER_KB=65536", NULL},
            .preload = 1,
            .ready_text = "ready",
            .after_ready = kill_after,
        };
        run_workload(&options, &result);
        assert_false(result.exited);
        assert_int_equal(result.status, SIGKILL);
        tally_traces(result.trace_dir, &traces);
        const struct file_tally *f = only_file();
        uint64_t traced = f->calls[API(cuLaunchKernel)], returned = *done;
        if (traced < returned || traced > returned + 1)
            fail_msg("round %d (kill %u us after ready): %" PRIu64 " launches returned, %"
                     PRIu64 " in the trace", round, kill_after_us, returned, traced);
        /* their definitions too: every launch keeps its kernel's name (beside a CPU hog a
         * kill 0-150 ms after "ready" came before the first launch: nothing to name) */
        assert_int_equal(f->launches_named, traced);
        if (traced)
            assert_string_equal(f->first_kernel, "tiny_kernel");
        finish();
    }
    munmap(done, sizeof *done);
    unlink(counter);
}

static void test_sigkill_keeps_flushed_events(void **state)
{
    (void)state;
    struct run_options options = {
        .args = (const char *[]){"--mode", "wait-for-kill", "--launches", "5000", NULL},
        .env = (const char *[]){"GPUWATCH_FLUSH_MS=20", NULL},
        .preload = 1,
        .ready_text = "ready",
        .after_ready = kill_after,
    };
    kill_after_us = 300 * 1000;  /* 15 flush intervals of 20 ms */
    run_workload(&options, &result);
    assert_false(result.exited);
    assert_int_equal(result.status, SIGKILL);
    tally_traces(result.trace_dir, &traces);
    const struct file_tally *f = only_file();
    assert_int_equal(f->calls[API(cuLaunchKernel)], 5000);
    finish();
}

static void terminate(pid_t pid) { kill(pid, SIGTERM); }

static void test_sigterm_flushes_and_dies_of_it(void **state)
{
    (void)state;
    struct run_options options = {
        .args = (const char *[]){"--mode", "wait-for-kill", "--launches", "3000", NULL},
        .env = (const char *[]){"GPUWATCH_FLUSH_MS=1000", NULL},
        .preload = 1,
        .ready_text = "ready",
        .after_ready = terminate,
    };
    run_workload(&options, &result);
    assert_false(result.exited);
    assert_int_equal(result.status, SIGTERM);
    tally_traces(result.trace_dir, &traces);
    /* A 1 s flush interval: only the flush in the signal handler can have written these,
     * the GPU records CUPTI still held included. */
    const struct file_tally *f = only_file();
    assert_int_equal(f->calls[API(cuLaunchKernel)], 3000);
    assert_int_equal(f->header.cupti_status, GW_CUPTI_ACTIVE);
    assert_int_equal(f->gpu_kernels, 3000);
    assert_int_equal(f->launches_linked_once, 3000);
    finish();
}

/* The program's signal handling, with and without the shim: the same output, line for
 * line, the same death, and every call made before it in the trace. */
static void same_as_without_shim(const char *mode, int dies_of, uint64_t launches)
{
    static struct run_result control;
    /* a 1 s flush interval (the longest): only the flush in the shim's handler can have
     * written them */
    struct run_options options = {
        .args = (const char *[]){"--mode", mode, "--launches", "25", NULL},
        .env = (const char *[]){"GPUWATCH_FLUSH_MS=1000", NULL},
        .preload = 0,
    };
    run_workload(&options, &control);
    remove_dir(control.trace_dir);
#ifdef __SANITIZE_ADDRESS__
    if (dies_of != SIGSEGV)  /* (AddressSanitizer reports a SIGSEGV and exits 1 itself) */
#endif
    {
        assert_false(control.exited);
        assert_int_equal(control.status, dies_of);
    }
    options.preload = 1;
    run_workload(&options, &result);
    assert_string_equal(result.out, control.out);
    assert_int_equal(result.exited, control.exited);
    assert_int_equal(result.status, control.status);
    tally_traces(result.trace_dir, &traces);
    const struct file_tally *f = only_file();
    assert_int_equal(f->calls[API(cuLaunchKernel)], launches);
    finish();
}

static void test_one_shot_sigterm_handler_runs_once(void **state)
{
    (void)state;
    same_as_without_shim("signal-one-shot", SIGTERM, 50);
    assert_string_equal(result.out, "mine, one-shot\n"
                                    "one-shot handler ran\n"
                                    "SIG_DFL\n"
                                    "SIGINT was SIG_DFL\n"
                                    "SIG_IGN\n");
}

static void test_reraising_sigint_handler_dies_of_it(void **state)
{
    (void)state;
    same_as_without_shim("signal-reraise", SIGINT, 50);
    assert_string_equal(result.out, "SIGINT was SIG_DFL\n"
                                    "mine\n"
                                    "cleaning up, then dying of it\n");
}

/* A crash right after a burst of calls: the process dies of the same signal, and every
 * call it made is in the trace. */
static void test_segv_after_burst_keeps_every_call(void **state)
{
    (void)state;
    same_as_without_shim("segv-after-burst", SIGSEGV, 50);
    assert_string_equal(result.out, "");
}

static void test_abort_after_burst_keeps_every_call(void **state)
{
    (void)state;
    same_as_without_shim("abort-after-burst", SIGABRT, 50);
}

static void test_out_of_memory_passes_through(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "oom", NULL}, (const char *[]){"FAKECUDA_MEM_MB=64", NULL});
    assert_int_equal(result.status, 0);
    assert_non_null(strstr(result.out, "oom result 2"));
    const struct file_tally *f = only_file();
    assert_int_equal(f->calls[API(cuMemAlloc_v2)], 1);
    assert_int_equal(f->errors[API(cuMemAlloc_v2)], 1);
    assert_true(f->last_oom_bytes == (uint64_t)1 << 40);
    finish();
}

/* output: a directory that cannot be made, under blocker, a file made from its template
 * (the caller unlinks it). The shim then has one warning to give. */
static void unmakeable_dir(char *blocker, char *output, size_t size)
{
    int fd = mkstemp(blocker);
    assert_true(fd >= 0);
    close(fd);
    snprintf(output, size, "%s/traces", blocker); /* a directory under a file */
}

static void test_unwritable_output_changes_nothing(void **state)
{
    (void)state;
    char blocker[] = "/tmp/gw-blocker-XXXXXX", output[600];
    unmakeable_dir(blocker, output, sizeof output);
    struct run_options control = {
        .args = (const char *[]){"--mode", "direct", NULL}, .trace_dir = output, .preload = 0};
    struct run_result untraced;
    run_workload(&control, &untraced);
    struct run_options traced = control;
    traced.preload = 1;
    run_workload(&traced, &result);
    assert_int_equal(result.exited, untraced.exited);
    assert_int_equal(result.status, 0);
    assert_int_equal(result.status, untraced.status);
    assert_string_equal(result.out, untraced.out);
    /* One warning, naming the directory, and nothing else. */
    assert_non_null(strstr(result.err, "tracing is off"));
    assert_non_null(strstr(result.err, output));
    assert_null(strchr(strchr(result.err, '\n') + 1, '\n'));
    unlink(blocker);
}

/* The disk fills up mid-run (a 4 MiB file size limit, so writes past it fail with
 * EFBIG and raise SIGXFSZ in the writing thread): the program's output and exit status are
 * those of an untraced run, one warning says tracing stopped, and what was written before
 * is readable. */
static void test_full_disk_mid_run_changes_nothing(void **state)
{
    (void)state;
    const unsigned long long limit = 4 << 20;
    struct run_options control = {
        .args = (const char *[]){"--mode", "threads", "--threads", "4", "--launches",
                                 "300000", NULL},
        /* host calls only: CUPTI's chunks could fill the limit before any thread's */
        .env = (const char *[]){"GPUWATCH_CUPTI=0", NULL},
        .preload = 0, .file_size_limit = limit};
    struct run_result untraced;
    run_workload(&control, &untraced);
    remove_dir(untraced.trace_dir);
    struct run_options traced = control;
    traced.preload = 1;
    run_workload(&traced, &result);
    assert_int_equal(untraced.exited, 1);
    assert_int_equal(untraced.status, 0);
    assert_int_equal(result.exited, untraced.exited);
    assert_int_equal(result.status, untraced.status);
    assert_string_equal(result.out, untraced.out);
    assert_non_null(strstr(result.err, "tracing stopped"));
    assert_null(strchr(strchr(result.err, '\n') + 1, '\n'));
    tally_traces(result.trace_dir, &traces);
    assert_int_equal(traces.files, 1);
    struct stat st;
    assert_int_equal(stat(traces.file[0].path, &st), 0);
    assert_true((unsigned long long)st.st_size <= limit);
    /* the chunks written before the limit hold calls (a ring's chunk is at most 1 MiB);
     * 1.2 M launches (~10 MB) never fit */
    assert_true(traces.file[0].total_calls > 1000);
    assert_true(traces.file[0].calls[API(cuLaunchKernel)] < 1200000);
    finish();
}

/* A file-size limit the trace meets on a program's own thread or on the writer, with four
 * threads calling: the program exits as it does untraced (a write past the limit raises
 * SIGXFSZ in the writing thread; the program was killed with status 153 where it exits 0
 * untraced), with one warning saying `warning`; what was written stays a readable trace
 * under the limit. Returns the number of trace files left. */
static unsigned limited_run(unsigned long long limit, const char *warning)
{
    struct run_options control = {
        .args = (const char *[]){"--mode", "threads", "--threads", "4", "--launches",
                                 "20000", NULL},
        .preload = 0, .file_size_limit = limit};
    struct run_result untraced;
    run_workload(&control, &untraced);
    remove_dir(untraced.trace_dir);
    struct run_options traced = control;
    traced.preload = 1;
    run_workload(&traced, &result);
    assert_int_equal(untraced.exited, 1);
    assert_int_equal(untraced.status, 0);
    assert_int_equal(result.exited, 1);  /* not SIGXFSZ */
    assert_int_equal(result.status, 0);
    assert_string_equal(result.out, untraced.out);
    assert_non_null(strstr(result.err, warning));
    assert_null(strchr(strchr(result.err, '\n') + 1, '\n'));
    tally_traces(result.trace_dir, &traces);
    for (unsigned i = 0; i < traces.files; i++) {
        struct stat st;
        assert_int_equal(traces.file[i].damage, 0);
        assert_int_equal(stat(traces.file[i].path, &st), 0);
        assert_true((unsigned long long)st.st_size <= limit);
    }
    return traces.files;
}

/* ulimit -f 64 (64 KiB): less than one flush of the four threads' calls. */
static void test_tiny_file_limit_with_threads_changes_nothing(void **state)
{
    (void)state;
    assert_int_equal(limited_run(64 << 10, "file-size limit"), 1);
    finish();
}

/* 512 bytes, half the trace's header: the first driver call, on the program's main thread,
 * writes past it (not the writer thread, whose signals are blocked); tracing is off and the
 * partial file removed. */
static void test_file_limit_below_the_header_changes_nothing(void **state)
{
    (void)state;
    assert_int_equal(limited_run(512, "tracing is off"), 0);
    finish();
}

/* The program's stderr is a pipe whose reader left, and the shim has a warning to give (its
 * output directory cannot be made): the warning's write fails with EPIPE and raises no
 * SIGPIPE in the program, which exits as it does untraced. */
static void test_warning_to_a_closed_pipe_raises_no_sigpipe(void **state)
{
    (void)state;
    char blocker[] = "/tmp/gw-blocker-XXXXXX", output[600];
    unmakeable_dir(blocker, output, sizeof output);
    struct run_options control = {.args = (const char *[]){"--mode", "threads", "--threads",
                                                           "4", "--launches", "1000", NULL},
                                  .trace_dir = output, .preload = 0, .stderr_reader_gone = 1};
    struct run_result untraced;
    run_workload(&control, &untraced);
    struct run_options traced = control;
    traced.preload = 1;
    run_workload(&traced, &result);
    assert_int_equal(untraced.exited, 1);
    assert_int_equal(result.exited, 1);  /* not SIGPIPE */
    assert_int_equal(result.status, untraced.status);
    assert_string_equal(result.out, untraced.out);
    unlink(blocker);
}

static void test_exec_child_gets_own_file(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "exec", NULL}, NULL);
    assert_int_equal(result.status, 0);
    assert_int_equal(traces.files, 2);
    const struct file_tally *parent = tally_for_pid(&traces, result.pid);
    assert_non_null(parent);
    assert_int_equal(parent->calls[API(cuLaunchKernel)], 3);
    const struct file_tally *child = &traces.file[parent == &traces.file[0] ? 1 : 0];
    assert_int_equal(child->ppid, (uint32_t)result.pid);
    assert_sequence(child, "cuMemcpyHtoD_v2", "cuLaunchKernel", "cuStreamSynchronize", 5, 0);
    assert_non_null(strstr(child->header.cmdline, "--mode direct"));
    finish();
}

static void test_disabled_leaves_no_trace(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "direct", NULL}, (const char *[]){"GPUWATCH_DISABLE=1", NULL});
    assert_int_equal(result.status, 0);
    assert_non_null(strstr(result.out, "workload direct: ok"));
    assert_int_equal(traces.files, 0);
    assert_string_equal(result.err, "");
    finish();
}

static void test_every_copy_shape_classified(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "copies", NULL}, NULL);
    assert_int_equal(result.status, 0);
    const struct file_tally *f = only_file();
    assert_int_equal(f->calls[API(cuMemcpy2D_v2)], 1);
    assert_int_equal(f->calls[API(cuMemcpy2DAsync_v2)], 1);
    assert_int_equal(f->calls[API(cuMemcpy3D_v2)], 1);
    assert_int_equal(f->calls[API(cuMemcpy)], 1);
    assert_int_equal(f->calls[API(cuMemcpyAsync)], 1);
    assert_int_equal(f->calls[API(cuMemcpyDtoDAsync_v2)], 1);
    assert_int_equal(f->copies[GW_COPY_HTOD][GW_HOST_PAGEABLE], 2); /* 2D, unified */
    assert_int_equal(f->copies[GW_COPY_DTOH][GW_HOST_PINNED], 2);   /* 2D async, unified */
    assert_int_equal(f->copies[GW_COPY_DTOH][GW_HOST_PAGEABLE], 1); /* the check read back */
    assert_int_equal(f->copies[GW_COPY_DTOD][GW_HOST_NONE], 2);     /* 3D, DtoD async */
    assert_int_equal(f->copy_bytes, 512 + 512 + 512 + 4096 + 4096 + 4096 + 4096);
    /* memsets count elements: 100 and 10 of 1, 2 and 4 bytes */
    assert_int_equal(f->calls[API(cuMemsetD16_v2)], 1);
    assert_int_equal(f->calls[API(cuMemsetD32Async)], 1);
    assert_int_equal(f->set_bytes, 100 * (1 + 2 + 4) + 10 * (1 + 2 + 4));
    finish();
}

static void test_bad_settings_warn_and_fall_back(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "direct", "--launches", "5", NULL},
        (const char *[]){"GPUWATCH_FLUSH_MS=soon", "GPUWATCH_BUFFER_KB=1", NULL});
    assert_int_equal(result.status, 0);
    assert_non_null(strstr(result.err, "GPUWATCH_FLUSH_MS=soon"));
    assert_non_null(strstr(result.err, "GPUWATCH_BUFFER_KB=1"));
    assert_sequence(only_file(), "cuMemcpyHtoD_v2", "cuLaunchKernel", "cuStreamSynchronize", 5, 0);
    finish();
}

static void test_header_identifies_process(void **state)
{
    (void)state;
    run((const char *[]){"--mode", "direct", "--launches", "1", NULL},
        (const char *[]){"RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=4", NULL});
    const struct file_tally *f = only_file();
    assert_int_equal(f->header.pid, (uint32_t)result.pid);
    assert_int_equal(f->header.ppid, (uint32_t)getpid());
    assert_int_equal(f->header.rank, 3);
    assert_int_equal(f->header.local_rank, 1);
    assert_int_equal(f->header.world_size, 4);
    assert_non_null(strstr(f->path, "-rank3"));
    assert_non_null(strstr(f->header.cmdline, "workload --mode direct --launches 1"));
    assert_int_equal(f->header.device_ordinal, 0);
    assert_true(f->header.device_total_mem == 1024ull << 20);
    assert_true(f->header.device_free_at_start > 0);
    assert_true(f->header.device_name[0] != '\0');
    char hostname[64] = "";
    gethostname(hostname, sizeof hostname - 1);
    assert_string_equal(f->header.hostname, hostname);
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    finish();
}

/* The header counts the CPUs online and those the process may run on: run on one CPU
 * (affinity is inherited), the DataLoader advice must get 1, not the machine's count. */
static void test_header_counts_usable_cpus(void **state)
{
    (void)state;
    cpu_set_t mine, one;
    assert_int_equal(sched_getaffinity(0, sizeof mine, &mine), 0);
    int first = 0;
    while (!CPU_ISSET(first, &mine))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    run((const char *[]){"--mode", "direct", "--launches", "1", NULL}, NULL);
    assert_int_equal(sched_setaffinity(0, sizeof mine, &mine), 0);
    const struct file_tally *f = only_file();
    assert_true(f->header.feature_flags & GW_FEAT_CPU_COUNT);
    assert_int_equal(f->header.cpus_usable, 1);
    assert_int_equal(f->header.cpus_online, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
    finish();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_direct_symbols),
        cmocka_unit_test(test_dlsym_on_driver_handle),
        cmocka_unit_test(test_get_proc_address_v2),
        cmocka_unit_test(test_get_proc_address_v1),
        cmocka_unit_test(test_eight_threads_exact_counts),
        cmocka_unit_test(test_fork_children),
        cmocka_unit_test(test_cpu_samples_count_workers),
        cmocka_unit_test(test_cpu_in_spinning_waits),
        cmocka_unit_test(test_cpu_in_sleeping_waits),
        cmocka_unit_test(test_sigkill_keeps_flushed_events),
        cmocka_unit_test(test_sigterm_flushes_and_dies_of_it),
        cmocka_unit_test(test_out_of_memory_passes_through),
        cmocka_unit_test(test_unwritable_output_changes_nothing),
        cmocka_unit_test(test_full_disk_mid_run_changes_nothing),
        cmocka_unit_test(test_tiny_file_limit_with_threads_changes_nothing),
        cmocka_unit_test(test_file_limit_below_the_header_changes_nothing),
        cmocka_unit_test(test_warning_to_a_closed_pipe_raises_no_sigpipe),
        cmocka_unit_test(test_exec_child_gets_own_file),
        cmocka_unit_test(test_disabled_leaves_no_trace),
        cmocka_unit_test(test_program_closing_descriptors_keeps_its_file),
        cmocka_unit_test(test_one_shot_sigterm_handler_runs_once),
        cmocka_unit_test(test_reraising_sigint_handler_dies_of_it),
        cmocka_unit_test(test_segv_after_burst_keeps_every_call),
        cmocka_unit_test(test_sigkill_anywhere_loses_nothing),
        cmocka_unit_test(test_abort_after_burst_keeps_every_call),
        cmocka_unit_test(test_every_copy_shape_classified),
        cmocka_unit_test(test_bad_settings_warn_and_fall_back),
        cmocka_unit_test(test_header_identifies_process),
        cmocka_unit_test(test_header_counts_usable_cpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
