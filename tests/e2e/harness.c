#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace_reader.h"

unsigned api_id_of(const char *name)
{
#define GW_API(id, api, family, base, version, per_thread, async) if (strcmp(name, #api) == 0) return id;
#include "gpuwatch/api_list.h"
#undef GW_API
    return 0;
}

static void read_all(int fd, char *buf, size_t cap, size_t *len)
{
    ssize_t n;
    while (*len + 1 < cap && (n = read(fd, buf + *len, cap - 1 - *len)) > 0)
        *len += (size_t)n;
    buf[*len] = '\0';
}

void run_workload(const struct run_options *options, struct run_result *result)
{
    memset(result, 0, sizeof *result);
    if (options->trace_dir) {
        snprintf(result->trace_dir, sizeof result->trace_dir, "%s", options->trace_dir);
    } else {
        snprintf(result->trace_dir, sizeof result->trace_dir, "/tmp/gw-e2e-XXXXXX");
        if (!mkdtemp(result->trace_dir))
            abort();
    }
    int out_pipe[2], err_pipe[2];
    if (pipe(out_pipe) || pipe(err_pipe))
        abort();
    int gone_pipe[2] = {-1, -1};
    if (options->stderr_reader_gone) {
        if (pipe(gone_pipe))
            abort();
        close(gone_pipe[0]);  /* before the fork: no process holds a read end */
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out_pipe[1], 1);
        dup2(options->stderr_reader_gone ? gone_pipe[1] : err_pipe[1], 2);
        close(out_pipe[0]);
        close(err_pipe[0]);
        setenv("LD_LIBRARY_PATH", GW_FAKE_DIR, 1);
        setenv("GPUWATCH_OUTPUT", result->trace_dir, 1);
        /* The GPU timeline comes from the simulated CUPTI unless a test says otherwise. */
        setenv("GPUWATCH_CUPTI", GW_FAKE_CUPTI, 1);
        unsetenv("NVTX_INJECTION64_PATH");
        unsetenv("GPUWATCH_DISABLE");
        /* A sanitizer build of the shim runs with its runtime first in LD_PRELOAD, as a
         * user's sanitized program must (scripts/test.sh names it) */
        const char *first = getenv("GW_TEST_PRELOAD_FIRST");
        char preload[1024];
        if (first && *first)
            snprintf(preload, sizeof preload, "%s:%s", first, GW_SHIM_PATH);
        else
            snprintf(preload, sizeof preload, "%s", GW_SHIM_PATH);
        if (options->preload)
            setenv("LD_PRELOAD", preload, 1);
        else
            unsetenv("LD_PRELOAD");
        for (const char *const *kv = options->env; kv && *kv; kv++)
            putenv((char *)*kv);
        if (options->file_size_limit) {
            struct rlimit limit = {options->file_size_limit, options->file_size_limit};
            if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
                _exit(126);
        }
        const char *program = options->program ? options->program : GW_WORKLOAD;
        const char *argv[32] = {program};
        int argc = 1;
        for (const char *const *arg = options->args; arg && *arg && argc < 31; arg++)
            argv[argc++] = *arg;
        argv[argc] = NULL;
        execv(program, (char *const *)argv);
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (gone_pipe[1] >= 0)
        close(gone_pipe[1]);
    result->pid = pid;
    size_t out_len = 0, err_len = 0;
    if (options->ready_text) {
        /* Read stdout until the ready text, then let the caller act on the child. */
        while (!strstr(result->out, options->ready_text) && out_len + 1 < RUN_MAX_OUTPUT) {
            ssize_t n = read(out_pipe[0], result->out + out_len, RUN_MAX_OUTPUT - 1 - out_len);
            if (n <= 0)
                break;
            out_len += (size_t)n;
            result->out[out_len] = '\0';
        }
        if (options->after_ready)
            options->after_ready(pid);
    }
    read_all(out_pipe[0], result->out, RUN_MAX_OUTPUT, &out_len);
    read_all(err_pipe[0], result->err, RUN_MAX_OUTPUT, &err_len);
    close(out_pipe[0]);
    close(err_pipe[0]);
    int status;
    waitpid(pid, &status, 0);
    result->exited = WIFEXITED(status);
    result->status = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
}

static void count_thread_launch(struct file_tally *file, uint32_t tid)
{
    for (unsigned i = 0; i < file->threads; i++) {
        if (file->tids[i] == tid) {
            file->launches_per_tid[i]++;
            return;
        }
    }
    if (file->threads < TALLY_MAX_THREADS) {
        file->tids[file->threads] = tid;
        file->launches_per_tid[file->threads++] = 1;
    }
}

/* Launch calls and GPU kernel records, joined through correlation records at the end; and
 * every call that issues GPU work against every GPU record. */
struct launch_call { uint64_t call_id, start_ns, kernels; };
struct link { uint64_t correlation_id, call_id; };
struct gpu_kernel { uint64_t correlation_id, start_ns; };
/* kind: the record kind a call issues (GW_EV_GPU_*; 0 for a graph launch: any); name: a
 * launch's kernel (the reader's string) */
struct issuing_call { uint64_t call_id, stream, records, start_ns, end_ns; unsigned kind;
                      const char *name; };
/* a sampled timeline's windows: opening from `open` until `settled`, shutting from `shut`
 * until `gone` (UINT64_MAX: open to the end) */
struct window { uint64_t open, settled, shut, gone; };
#define MAX_WINDOWS 256
struct gpu_record { uint64_t correlation_id, stream, start_ns; unsigned kind; const char *name; };

struct join {
    struct launch_call *launches;
    struct link *links;
    struct gpu_kernel *kernels;
    struct issuing_call *calls;
    struct gpu_record *records;
    size_t nlaunches, nlinks, nkernels, cap_launches, cap_links, cap_kernels;
    size_t ncalls, nrecords, cap_calls, cap_records;
    struct window windows[MAX_WINDOWS];
    size_t nwindows;
};

/* Where a call from start to end lies against the windows, by what the trace's window
 * records promise (trace_format.h): 1 inside one (began once it settled open, ended before
 * it began to shut), 0 outside every one (ended before it began to open or began once it
 * was gone), -1 across an opening or a shutting. No windows: a whole timeline, inside. */
static int in_windows(const struct join *join, uint64_t start, uint64_t end)
{
    if (!join->nwindows)
        return 1;
    int across = 0;
    for (size_t i = 0; i < join->nwindows; i++) {
        const struct window *w = &join->windows[i];
        if (start >= w->settled && end < w->shut)
            return 1;
        across |= end >= w->open && start <= w->gone;
    }
    return across ? -1 : 0;
}

/* Whether a call from start to end was under way while a window opened: the only calls
 * that may leave records untagged. */
static int across_an_opening(const struct join *join, uint64_t start, uint64_t end)
{
    for (size_t i = 0; i < join->nwindows; i++)
        if (end >= join->windows[i].open && start < join->windows[i].settled)
            return 1;
    return 0;
}

static void tally_window(struct join *join, const struct gw_event *ev, struct file_tally *file)
{
    uint64_t settled = ev->ts_ns + ev->u.gpu_window.settle_ns;
    if (ev->u.gpu_window.open) {
        file->gpu_windows++;
        if (join->nwindows < MAX_WINDOWS)
            join->windows[join->nwindows++] =
                (struct window){ev->ts_ns, settled, UINT64_MAX, UINT64_MAX};
    } else if (join->nwindows && join->windows[join->nwindows - 1].shut == UINT64_MAX) {
        join->windows[join->nwindows - 1].shut = ev->ts_ns;
        join->windows[join->nwindows - 1].gone = settled;
    }
}

#define PUSH(array, count, cap, value)                                                  \
    do {                                                                                \
        if (count == cap) {                                                             \
            cap = cap ? cap * 2 : 1024;                                                 \
            array = realloc(array, cap * sizeof *array);                                \
        }                                                                               \
        array[count++] = value;                                                         \
    } while (0)

static int by_call(const void *a, const void *b)
{
    uint64_t x = ((const struct launch_call *)a)->call_id, y = ((const struct launch_call *)b)->call_id;
    return x < y ? -1 : x > y;
}

static int by_correlation(const void *a, const void *b)
{
    uint64_t x = ((const struct link *)a)->correlation_id, y = ((const struct link *)b)->correlation_id;
    return x < y ? -1 : x > y;
}

static int by_issuing_call(const void *a, const void *b)
{
    uint64_t x = ((const struct issuing_call *)a)->call_id;
    uint64_t y = ((const struct issuing_call *)b)->call_id;
    return x < y ? -1 : x > y;
}

/* The call r's correlation names (join->calls sorted by id), or NULL. */
static struct issuing_call *call_of(const struct join *join, const struct gpu_record *r)
{
    struct link key = {r->correlation_id, 0};
    struct link *link = join->nlinks ? bsearch(&key, join->links, join->nlinks, sizeof key,
                                               by_correlation) : NULL;
    struct issuing_call call_key = {.call_id = link ? link->call_id : 0};
    return link && join->ncalls
        ? bsearch(&call_key, join->calls, join->ncalls, sizeof call_key, by_issuing_call)
        : NULL;
}

/* Each GPU record to the call its correlation names: there must be one, on the record's
 * stream, issuing that kind of work (and for a kernel, that kernel). */
static void join_records(struct join *join, struct file_tally *file)
{
    if (join->ncalls)
        qsort(join->calls, join->ncalls, sizeof *join->calls, by_issuing_call);
    for (size_t i = 0; i < join->nrecords; i++) {
        const struct gpu_record *r = &join->records[i];
        struct issuing_call *call = call_of(join, r);
        if (!call) {
            file->records_unlinked++;
            continue;
        }
        file->records_linked++;
        call->records++;
        file->records_of_calls_outside += in_windows(join, call->start_ns, call->end_ns) == 0;
        file->records_other_stream += r->stream != call->stream;
        file->records_other_work +=
            call->kind && (call->kind != r->kind ||
                           (r->kind == GW_EV_GPU_KERNEL &&
                            (!r->name || !call->name || strcmp(r->name, call->name) != 0)));
    }
    for (size_t i = 0; i < join->ncalls; i++) {
        const struct issuing_call *c = &join->calls[i];
        file->calls_across_openings += across_an_opening(join, c->start_ns, c->end_ns);
        if (c->kind) {
            file->issuing_calls++;
            file->issuing_linked_once += c->records == 1;
            int where = in_windows(join, c->start_ns, c->end_ns);
            file->issuing_inside += where == 1;
            file->issuing_inside_linked_once += where == 1 && c->records == 1;
            file->issuing_outside += where == 0;
        } else {
            file->graph_launches++;
            file->graph_records += c->records;
        }
    }
    free(join->calls);
    free(join->records);
}

static void finish_join(struct join *join, struct file_tally *file)
{
    if (join->nlaunches)  /* (qsort of a NULL array, even empty, is undefined) */
        qsort(join->launches, join->nlaunches, sizeof *join->launches, by_call);
    if (join->nlinks)
        qsort(join->links, join->nlinks, sizeof *join->links, by_correlation);
    join_records(join, file);
    for (size_t i = 0; i < join->nkernels; i++) {
        struct link key = {join->kernels[i].correlation_id, 0};
        struct link *link = bsearch(&key, join->links, join->nlinks, sizeof key, by_correlation);
        struct launch_call call_key = {link ? link->call_id : 0, 0, 0};
        struct launch_call *call = link ? bsearch(&call_key, join->launches, join->nlaunches,
                                                  sizeof call_key, by_call) : NULL;
        if (!call) {
            file->kernels_unlinked++;
            continue;
        }
        call->kernels++;
        file->kernels_before_launch += join->kernels[i].start_ns < call->start_ns;
    }
    for (size_t i = 0; i < join->nlaunches; i++)
        file->launches_linked_once += join->launches[i].kernels == 1;
    free(join->launches);
    free(join->links);
    free(join->kernels);
}

struct nvtx_thread { uint32_t tid; int depth; };

static void tally_nvtx(struct gw_reader *reader, const struct gw_event *ev, struct file_tally *file,
                       struct nvtx_thread *threads, unsigned *nthreads)
{
    struct nvtx_thread *thread = NULL;
    for (unsigned i = 0; i < *nthreads && !thread; i++)
        if (threads[i].tid == ev->tid)
            thread = &threads[i];
    if (!thread && *nthreads < TALLY_MAX_THREADS) {
        thread = &threads[(*nthreads)++];
        thread->tid = ev->tid;
        thread->depth = 0;
    }
    const char *name = gw_reader_string(reader, ev->u.nvtx.name_id, NULL);
    const char *domain = gw_reader_string(reader, ev->u.nvtx.domain_id, NULL);
    switch (ev->kind) {
    case GW_EV_RANGE_PUSH: {
        file->range_pushes++;
        static const char *const names[4] = {"step", "forward", "backward", "epoch"};
        for (int i = 0; i < 4; i++)
            file->pushes_named[i] += name && strcmp(name, names[i]) == 0;
        file->domain_pushes_named += domain && strcmp(domain, "gpuwatch-test") == 0;
        if (thread && ++thread->depth > (int)file->nvtx_max_depth)
            file->nvtx_max_depth = (unsigned)thread->depth;
        break;
    }
    case GW_EV_RANGE_POP:
        file->range_pops++;
        if (thread)
            thread->depth--;
        break;
    case GW_EV_MARK: file->marks++; break;
    case GW_EV_RANGE_START: file->range_starts++; break;
    case GW_EV_RANGE_END: file->range_ends++; break;
    default: break;
    }
}

static void tally_file(const char *path, struct file_tally *file)
{
    memset(file, 0, sizeof *file);
    snprintf(file->path, sizeof file->path, "%s", path);
    struct gw_reader *reader;
    char err[512];
    if (gw_reader_open(path, &reader, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        file->damage = 1;
        return;
    }
    file->header = *gw_reader_header(reader);
    file->pid = file->header.pid;
    file->ppid = file->header.ppid;
    gw_reader_load_defs(reader);
    struct gw_event ev;
    struct join join = {0};
    struct nvtx_thread nvtx_threads[TALLY_MAX_THREADS];
    unsigned nvtx_nthreads = 0;
    uint64_t last_end_on_stream[16] = {0}, stream_of_slot[16] = {0};
    uint64_t capturing[16] = {0};  /* stream id + 1 of the streams capturing now */
    file->kernel_dur_min = UINT64_MAX;
    while (gw_reader_next(reader, &ev) > 0) {
        if (ev.kind == GW_EV_LOST)
            file->lost_events += ev.u.lost.count;
        if (ev.kind >= GW_EV_RANGE_PUSH && ev.kind <= GW_EV_RANGE_END)
            tally_nvtx(reader, &ev, file, nvtx_threads, &nvtx_nthreads);
        if (ev.kind == GW_EV_GPU_LOST)
            file->gpu_lost += ev.u.gpu_lost.count;
        if (ev.kind == GW_EV_GPU_WINDOW)
            tally_window(&join, &ev, file);
        if (ev.kind == GW_EV_CPU_PROC) {
            file->cpu_proc_samples++;
            if (ev.u.cpu_proc.descendants > file->max_descendants)
                file->max_descendants = ev.u.cpu_proc.descendants;
            if (ev.u.cpu_proc.active > file->max_active)
                file->max_active = ev.u.cpu_proc.active;
            if (ev.u.cpu_proc.descendants_cpu_ns > file->max_descendants_cpu_ns)
                file->max_descendants_cpu_ns = ev.u.cpu_proc.descendants_cpu_ns;
        }
        if (ev.kind == GW_EV_CPU_THREAD) {
            file->cpu_thread_samples++;
            if (ev.u.cpu_thread.tid == file->pid) {
                file->main_thread_cpu_ns = ev.u.cpu_thread.cpu_ns;
                file->main_thread_wait_ns = ev.u.cpu_thread.wait_ns;
                file->main_thread_wait_cpu_ns = ev.u.cpu_thread.wait_cpu_ns;
                file->main_thread_runq_ns =
                    ev.u.cpu_thread.runq_ns == UINT64_MAX ? 0 : ev.u.cpu_thread.runq_ns;
            }
        }
        if (ev.kind == GW_EV_CORRELATION) {
            file->correlations++;
            struct link link = {ev.u.correlation.correlation_id, ev.u.correlation.call_id};
            PUSH(join.links, join.nlinks, join.cap_links, link);
        }
        if (ev.kind == GW_EV_GPU_MEMSET)
            file->gpu_memsets++;
        if (ev.kind == GW_EV_GPU_MEMCPY) {
            file->gpu_memcpys++;
            file->gpu_memcpy_pinned += ev.u.gpu_memcpy.src_kind == GW_GPU_MEM_PINNED;
            file->gpu_memcpy_pageable += ev.u.gpu_memcpy.src_kind == GW_GPU_MEM_PAGEABLE;
            int pinned = ev.u.gpu_memcpy.src_kind == GW_GPU_MEM_PINNED;
            uint64_t *lo = pinned ? &file->memcpy_pinned_ns_min : &file->memcpy_pageable_ns_min;
            uint64_t *hi = pinned ? &file->memcpy_pinned_ns_max : &file->memcpy_pageable_ns_max;
            if (!*lo || ev.dur_ns < *lo)
                *lo = ev.dur_ns;
            if (ev.dur_ns > *hi)
                *hi = ev.dur_ns;
        }
        if (ev.kind == GW_EV_GPU_KERNEL) {
            file->gpu_kernels++;
            uint64_t host_stream;
            file->kernels_stream_known +=
                gw_reader_stream_by_cupti(reader, ev.u.gpu_kernel.stream_id, &host_stream) == 0;
            if (ev.dur_ns < file->kernel_dur_min)
                file->kernel_dur_min = ev.dur_ns;
            if (ev.dur_ns > file->kernel_dur_max)
                file->kernel_dur_max = ev.dur_ns;
            unsigned slot = (unsigned)(ev.u.gpu_kernel.stream_id % 16);
            if (stream_of_slot[slot] == ev.u.gpu_kernel.stream_id + 1 &&
                ev.ts_ns < last_end_on_stream[slot])
                file->kernels_overlapping++;
            stream_of_slot[slot] = ev.u.gpu_kernel.stream_id + 1;
            last_end_on_stream[slot] = ev.ts_ns + ev.dur_ns;
            struct gpu_kernel kernel = {ev.u.gpu_kernel.correlation_id, ev.ts_ns};
            PUSH(join.kernels, join.nkernels, join.cap_kernels, kernel);
        }
        if (ev.kind == GW_EV_CALL && ev.family == GW_FAM_LAUNCH) {
            struct launch_call call = {ev.call_id, ev.ts_ns, 0};
            PUSH(join.launches, join.nlaunches, join.cap_launches, call);
        }
        if (ev.kind == GW_EV_GPU_KERNEL || ev.kind == GW_EV_GPU_MEMCPY ||
            ev.kind == GW_EV_GPU_MEMSET) {
            uint64_t correlation = ev.kind == GW_EV_GPU_KERNEL ? ev.u.gpu_kernel.correlation_id
                                 : ev.kind == GW_EV_GPU_MEMCPY ? ev.u.gpu_memcpy.correlation_id
                                                               : ev.u.gpu_memset.correlation_id;
            uint64_t cupti = ev.kind == GW_EV_GPU_KERNEL ? ev.u.gpu_kernel.stream_id
                           : ev.kind == GW_EV_GPU_MEMCPY ? ev.u.gpu_memcpy.stream_id
                                                         : ev.u.gpu_memset.stream_id;
            struct gpu_record record = {correlation, UINT64_MAX, ev.ts_ns, ev.kind, NULL};
            if (gw_reader_stream_by_cupti(reader, cupti, &record.stream) != 0)
                record.stream = UINT64_MAX;
            if (ev.kind == GW_EV_GPU_KERNEL)
                record.name = gw_reader_kernel_name(reader, ev.u.gpu_kernel.shape_id);
            PUSH(join.records, join.nrecords, join.cap_records, record);
        }
        /* streams capturing a graph: their work runs when the graph is launched */
        const char *api_name = ev.kind == GW_EV_CALL ? gw_api_name(ev.api_id) : NULL;
        if (api_name && !ev.result && (!strncmp(api_name, "cuStreamBeginCapture", 20) ||
                                       !strncmp(api_name, "cuStreamEndCapture", 18))) {
            int begin = api_name[8] == 'B';
            for (unsigned k = 0; k < 16; k++)
                if (capturing[k] == (begin ? 0 : ev.u.sync.stream_id + 1)) {
                    capturing[k] = begin ? ev.u.sync.stream_id + 1 : 0;
                    break;
                }
        }
        int captured = 0;
        if (ev.kind == GW_EV_CALL && ev.family == GW_FAM_LAUNCH)
            for (unsigned k = 0; k < 16; k++)
                captured |= capturing[k] == ev.u.launch.stream_id + 1;
        int graph = api_name && !strncmp(api_name, "cuGraphLaunch", 13);
        if (ev.kind == GW_EV_CALL && !ev.result && !captured &&
            ((ev.family == GW_FAM_LAUNCH && (ev.u.launch.shape_id || graph)) ||
             ev.family == GW_FAM_COPY || ev.family == GW_FAM_SET)) {
            struct issuing_call call = {.call_id = ev.call_id, .start_ns = ev.ts_ns,
                                         .end_ns = ev.ts_ns + ev.dur_ns};
            if (ev.family == GW_FAM_LAUNCH) {
                call.stream = ev.u.launch.stream_id;
                call.name = gw_reader_kernel_name(reader, ev.u.launch.shape_id);
                /* a graph replays what it captured: any kernels, copies and sets */
                call.kind = graph ? 0 : GW_EV_GPU_KERNEL;
            } else if (ev.family == GW_FAM_COPY) {
                call.stream = ev.u.copy.stream_id;
                call.kind = GW_EV_GPU_MEMCPY;
            } else {
                call.stream = ev.u.set.stream_id;
                call.kind = GW_EV_GPU_MEMSET;
            }
            PUSH(join.calls, join.ncalls, join.cap_calls, call);
        }
        if (ev.kind != GW_EV_CALL || ev.api_id >= GW_API_ID_LIMIT)
            continue;
        file->calls[ev.api_id]++;
        file->call_ns[ev.api_id] += ev.dur_ns;
        file->total_calls++;
        if (ev.result)
            file->errors[ev.api_id]++;
        if (ev.family == GW_FAM_COPY && ev.u.copy.dir < 6 && ev.u.copy.host_kind < 4) {
            file->copies[ev.u.copy.dir][ev.u.copy.host_kind]++;
            file->copy_bytes += ev.u.copy.bytes;
        }
        if (ev.family == GW_FAM_SET)
            file->set_bytes += ev.u.set.bytes;
        if (ev.family == GW_FAM_COPY && ev.u.copy.dir == GW_COPY_HTOD) {
            file->htod_pinned += ev.u.copy.host_kind == GW_HOST_PINNED;
            file->htod_pageable += ev.u.copy.host_kind == GW_HOST_PAGEABLE;
        }
        if (ev.family == GW_FAM_PROC && ev.u.proc.outcome < 3)
            file->proc_outcome[ev.u.proc.outcome]++;
        if (ev.family == GW_FAM_ALLOC && ev.result == 2 /* CUDA_ERROR_OUT_OF_MEMORY */)
            file->last_oom_bytes = ev.u.alloc.bytes;
        if (ev.family == GW_FAM_LAUNCH && ev.u.launch.shape_id) {
            count_thread_launch(file, ev.tid);
            const char *name = gw_reader_kernel_name(reader, ev.u.launch.shape_id);
            if (name && *name) {
                file->launches_named++;
                if (!file->first_kernel[0]) {
                    const struct gw_shape *shape = gw_reader_shape(reader, ev.u.launch.shape_id);
                    snprintf(file->first_kernel, sizeof file->first_kernel, "%s", name);
                    file->first_grid_x = shape ? (uint32_t)shape->grid[0] : 0;
                    file->first_block_x = shape ? (uint32_t)shape->block[0] : 0;
                }
            }
        }
    }
    finish_join(&join, file);
    if (!file->gpu_kernels)
        file->kernel_dur_min = 0;
    for (unsigned i = 0; i < nvtx_nthreads; i++)
        file->nvtx_unbalanced += nvtx_threads[i].depth != 0;
    file->lost_events += gw_reader_stats(reader)->lost_chunks;
    file->damage += gw_reader_stats(reader)->damage_reports;
    gw_reader_close(reader);
}

unsigned tally_traces(const char *dir, struct tally *tally)
{
    memset(tally, 0, sizeof *tally);
    DIR *listing = opendir(dir);
    if (!listing)
        return 0;
    struct dirent *entry;
    while ((entry = readdir(listing)) && tally->files < TALLY_MAX_FILES) {
        size_t len = strlen(entry->d_name);
        if (len < 4 || strcmp(entry->d_name + len - 4, GW_TRACE_SUFFIX) != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
        tally_file(path, &tally->file[tally->files++]);
    }
    closedir(listing);
    return tally->files;
}

const struct file_tally *tally_for_pid(const struct tally *tally, pid_t pid)
{
    for (unsigned i = 0; i < tally->files; i++)
        if (tally->file[i].pid == (uint32_t)pid)
            return &tally->file[i];
    return NULL;
}

void remove_dir(const char *dir)
{
    DIR *listing = opendir(dir);
    if (!listing)
        return;
    struct dirent *entry;
    while ((entry = readdir(listing))) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
        unlink(path);
    }
    closedir(listing);
    rmdir(dir);
}
