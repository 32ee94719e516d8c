/*
 * gpuwatch dump TRACE: the header as '#' lines, then one line per event:
 *
 *   time_ns tid kind name dur_ns result details...
 *
 * time_ns is relative to the header's start_ns (absolute with --absolute); kind is call,
 * lost or def for host calls, losses and definitions, and the event kind for the GPU
 * timeline (gpu_kernel, gpu_memcpy, gpu_memset, gpu_lost: time_ns is the GPU start, dur_ns
 * its duration), correlation (untimed) and NVTX (range_push, range_pop, mark, range_start,
 * range_end); name is the exact entry point for calls and the definition kind for defs;
 * '-' fills columns an event does not have. details are key=value pairs, values bare or
 * double-quoted with C escapes. Calls end with call=0x... (their call id); GPU records
 * carry corr=N, and the correlation line with that corr names the call=0x... that issued
 * the work. stream= is our stream id (what calls carry), '-' when no STREAM definition
 * gives the CUPTI stream id (cupti_stream=). Allocating calls show stack=N when they carry
 * a call stack, and the `def stack` line with id=N lists its frames innermost first as
 * frameI="module+0xOFFSET[,symbol+0xOFFSET]" (C++ symbols demangled). Python programs' traces add `def pystack`
 * lines (pyframeI="file:line function", innermost first) and `pysite` lines after the
 * calls they name (calls=FIRST..LAST, their call ids) with the Python stack those calls
 * were made from; `stacksite` lines do the same with native stacks (syncs, copies...). Damage reports go to stderr; the exit status
 * is 1 when there was any, 0 otherwise.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "demangle.h"
#include "text_out.h"
#include "trace_reader.h"

#define MAX_DAMAGE_LINES 100

struct dump {
    FILE *out;
    struct gw_reader *r;
    uint64_t origin;  /* subtracted from timestamps */
    uint64_t damage;
};

static void put_string_value(struct dump *d, const char *key, uint64_t id)
{
    size_t len;
    const char *s = gw_reader_string(d->r, id, &len);
    if (s) {
        fprintf(d->out, " %s=", key);
        gw_put_value(d->out, s, len);
    } else {
        fprintf(d->out, " %s_id=%" PRIu64, key, id);
    }
}

static void put_shape(struct dump *d, const struct gw_shape *s)
{
    fprintf(d->out,
            " grid=%" PRIu64 ",%" PRIu64 ",%" PRIu64 " block=%" PRIu64 ",%" PRIu64 ",%" PRIu64
            " smem=%" PRIu64,
            s->grid[0], s->grid[1], s->grid[2], s->block[0], s->block[1], s->block[2],
            s->shared_mem);
}

/* frames=K, then per frame "frameI=module+0xOFF" and ",symbol+0xOFF" when known. */
static void put_frames(struct dump *d, const struct gw_stack *st)
{
    fprintf(d->out, " frames=%u", st->nframes);
    for (unsigned i = 0; i < st->nframes; i++) {
        const struct gw_stack_frame *f = &st->frames[i];
        const char *module = gw_reader_string(d->r, f->module_id, NULL);
        const char *symbol = f->symbol_id ? gw_reader_string(d->r, f->symbol_id, NULL) : NULL;
        char text[1024];
        int n = snprintf(text, sizeof text, "%s+0x%" PRIx64, module ? module : "?",
                         f->module_offset);
        char readable[512];
        if (symbol && n > 0 && (size_t)n < sizeof text)
            snprintf(text + n, sizeof text - (size_t)n, ",%s+0x%" PRIx64,
                     gw_demangle(symbol, readable, sizeof readable), f->symbol_offset);
        fprintf(d->out, " frame%u=", i);
        gw_put_value(d->out, text, strlen(text));
    }
}

/* frames=K, then per frame pyframeI="file:line function". */
static void put_pyframes(struct dump *d, const struct gw_pystack *st)
{
    fprintf(d->out, " frames=%u", st->nframes);
    for (unsigned i = 0; i < st->nframes; i++) {
        const struct gw_pyframe *f = &st->frames[i];
        const char *file = gw_reader_string(d->r, f->file_id, NULL);
        const char *function = gw_reader_string(d->r, f->function_id, NULL);
        char text[1024];
        snprintf(text, sizeof text, "%s:%" PRIu64 " %s", file ? file : "?", f->line,
                 function ? function : "?");
        fprintf(d->out, " pyframe%u=", i);
        gw_put_value(d->out, text, strlen(text));
    }
}

/* The calls a PYSITE or STACKSITE names and the stack they were made from, innermost
 * frame first. */
static void put_site(struct dump *d, const struct gw_event *ev)
{
    int python = ev->kind == GW_EV_PYSITE;
    fprintf(d->out, "- %" PRIu32 " %s - - - calls=0x%" PRIx64 "..0x%" PRIx64 " %s=%" PRIu64,
            ev->tid, python ? "pysite" : "stacksite", ev->u.site.first_call_id,
            ev->u.site.last_call_id, python ? "pystack" : "stack", ev->u.site.stack_id);
    if (python) {
        const struct gw_pystack *st = gw_reader_pystack(d->r, ev->u.site.stack_id);
        if (st)
            put_pyframes(d, st);
    } else {
        const struct gw_stack *st = gw_reader_stack(d->r, ev->u.site.stack_id);
        if (st)
            put_frames(d, st);
    }
}

static void put_launch(struct dump *d, const struct gw_event *ev)
{
    switch (ev->api_id) {
    case GW_API_cuGraphLaunch:
    case GW_API_cuGraphLaunch_ptsz:
        fprintf(d->out, " graph=0x%" PRIx64, ev->u.launch.handle);
        break;
    case GW_API_cuLaunchHostFunc:
    case GW_API_cuLaunchHostFunc_ptsz:
        fprintf(d->out, " fn=0x%" PRIx64, ev->u.launch.handle);
        break;
    }
    if (ev->u.launch.shape_id) {
        const struct gw_shape *s = gw_reader_shape(d->r, ev->u.launch.shape_id);
        if (s) {
            put_string_value(d, "kernel", s->name_id);
            put_shape(d, s);
        } else {
            fprintf(d->out, " shape=%" PRIu64, ev->u.launch.shape_id);
        }
    }
    fprintf(d->out, " stream=%" PRIu64, ev->u.launch.stream_id);
}

static void put_vmm(struct dump *d, const struct gw_event *ev)
{
    uint64_t ptr = ev->u.vmm.ptr, size = ev->u.vmm.size, handle = ev->u.vmm.handle;
    switch (ev->api_id) {
    case GW_API_cuMemAddressReserve:
        fprintf(d->out, " ptr=0x%" PRIx64 " size=%" PRIu64 " align=%" PRIu64, ptr, size,
                ev->u.vmm.alignment);
        break;
    case GW_API_cuMemCreate:
        fprintf(d->out, " handle=0x%" PRIx64 " size=%" PRIu64 " device=%" PRIu64, handle, size,
                ev->u.vmm.device);
        if (ev->u.vmm.stack_id)
            fprintf(d->out, " stack=%" PRIu64, ev->u.vmm.stack_id);
        break;
    case GW_API_cuMemRelease:
        fprintf(d->out, " handle=0x%" PRIx64, handle);
        break;
    case GW_API_cuMemMap:
        fprintf(d->out, " ptr=0x%" PRIx64 " size=%" PRIu64 " handle=0x%" PRIx64, ptr, size,
                handle);
        break;
    default:
        fprintf(d->out, " ptr=0x%" PRIx64 " size=%" PRIu64, ptr, size);
        break;
    }
}

static void put_call_details(struct dump *d, const struct gw_event *ev)
{
    FILE *out = d->out;
    switch (ev->family) {
    case GW_FAM_PLAIN:
        break;
    case GW_FAM_PROC: {
        put_string_value(d, "symbol", ev->u.proc.symbol_id);
        const char *outcome = gw_proc_outcome_name((unsigned)ev->u.proc.outcome);
        fprintf(out, " version=%" PRIu64 " flags=%" PRIu64, ev->u.proc.cuda_version,
                ev->u.proc.flags);
        if (outcome)
            fprintf(out, " outcome=%s", outcome);
        else
            fprintf(out, " outcome=%" PRIu64, ev->u.proc.outcome);
        break;
    }
    case GW_FAM_CTX:
        fprintf(out, " device=%" PRId64 " ctx=0x%" PRIx64,
                ev->u.ctx.device <= UINT32_MAX ? (int64_t)(int32_t)ev->u.ctx.device
                                               : (int64_t)ev->u.ctx.device,
                ev->u.ctx.ctx);
        break;
    case GW_FAM_MEMINFO:
        fprintf(out, " free=%" PRIu64 " total=%" PRIu64, ev->u.meminfo.free_bytes,
                ev->u.meminfo.total_bytes);
        break;
    case GW_FAM_ALLOC:
        fprintf(out, " ptr=0x%" PRIx64 " bytes=%" PRIu64 " stream=%" PRIu64, ev->u.alloc.ptr,
                ev->u.alloc.bytes, ev->u.alloc.stream_id);
        if (ev->api_id == GW_API_cuMemAllocPitch_v2)
            fprintf(out, " pitch=%" PRIu64, ev->u.alloc.aux);
        else if (ev->api_id == GW_API_cuMemAllocManaged)
            fprintf(out, " flags=0x%" PRIx64, ev->u.alloc.aux);
        else if (ev->api_id == GW_API_cuMemAllocFromPoolAsync ||
                 ev->api_id == GW_API_cuMemAllocFromPoolAsync_ptsz)
            fprintf(out, " pool=0x%" PRIx64, ev->u.alloc.aux);
        if (ev->u.alloc.stack_id)
            fprintf(out, " stack=%" PRIu64, ev->u.alloc.stack_id);
        break;
    case GW_FAM_FREE:
        fprintf(out, " ptr=0x%" PRIx64 " stream=%" PRIu64, ev->u.memfree.ptr,
                ev->u.memfree.stream_id);
        break;
    case GW_FAM_VMM:
        put_vmm(d, ev);
        break;
    case GW_FAM_HOSTMEM:
        fprintf(out, " ptr=0x%" PRIx64 " bytes=%" PRIu64 " flags=0x%" PRIx64,
                ev->u.hostmem.ptr, ev->u.hostmem.bytes, ev->u.hostmem.flags);
        if (ev->u.hostmem.stack_id)
            fprintf(out, " stack=%" PRIu64, ev->u.hostmem.stack_id);
        break;
    case GW_FAM_LAUNCH:
        put_launch(d, ev);
        break;
    case GW_FAM_COPY:
        fprintf(out, " bytes=%" PRIu64, ev->u.copy.bytes);
        if (ev->u.copy.batch)
            fprintf(out, " count=%" PRIu64, ev->u.copy.count);
        fprintf(out, " dir=%s host=%s stream=%" PRIu64, gw_copy_dir_name(ev->u.copy.dir),
                gw_host_kind_name(ev->u.copy.host_kind), ev->u.copy.stream_id);
        if (!ev->u.copy.batch)
            fprintf(out, " dst=0x%" PRIx64 " src=0x%" PRIx64, ev->u.copy.dst, ev->u.copy.src);
        break;
    case GW_FAM_SET:
        fprintf(out, " ptr=0x%" PRIx64 " bytes=%" PRIu64 " stream=%" PRIu64, ev->u.set.ptr,
                ev->u.set.bytes, ev->u.set.stream_id);
        break;
    case GW_FAM_SYNC:
        fprintf(out, " stream=%" PRIu64 " event=0x%" PRIx64, ev->u.sync.stream_id,
                ev->u.sync.event);
        break;
    case GW_FAM_NAME:
        fprintf(out, " handle=0x%" PRIx64, ev->u.name.handle);
        put_string_value(d, "name", ev->u.name.string_id);
        break;
    default: /* an entry point this reader does not know: the raw words */
        if (ev->nwords) {
            fputs(" words=", out);
            for (unsigned i = 0; i < ev->nwords; i++)
                fprintf(out, "%s%" PRIu64, i ? "," : "", ev->words[i]);
        }
        break;
    }
    if (ev->result) {
        const char *err = gw_cu_result_name(ev->result);
        if (err)
            fprintf(out, " error=%s", err);
    }
    fprintf(out, " call=0x%" PRIx64, ev->call_id);
    if (ev->call_id_unsure)
        fputs(" call_unsure=1", out);
}

/* Our stream id and CUPTI's, device, correlation and graph of a GPU record. */
static void put_gpu_where(struct dump *d, uint64_t device, uint64_t cupti_stream,
                          uint64_t corr, uint64_t graph)
{
    uint64_t stream;
    fprintf(d->out, " device=%" PRIu64, device);
    if (gw_reader_stream_by_cupti(d->r, cupti_stream, &stream) == 0)
        fprintf(d->out, " stream=%" PRIu64, stream);
    else
        fputs(" stream=-", d->out);
    fprintf(d->out, " cupti_stream=%" PRIu64 " corr=%" PRIu64 " graph=%" PRIu64, cupti_stream,
            corr, graph);
}

static void put_gpu_kernel(struct dump *d, const struct gw_event *ev)
{
    const struct gw_shape *s = gw_reader_shape(d->r, ev->u.gpu_kernel.shape_id);
    if (s) {
        put_string_value(d, "kernel", s->name_id);
        put_shape(d, s);
        fprintf(d->out, " regs=%" PRIu64 " static_smem=%" PRIu64, s->registers,
                s->static_shared_mem);
    } else {
        fprintf(d->out, " shape=%" PRIu64, ev->u.gpu_kernel.shape_id);
    }
    put_gpu_where(d, ev->u.gpu_kernel.device, ev->u.gpu_kernel.stream_id,
                  ev->u.gpu_kernel.correlation_id, ev->u.gpu_kernel.graph_id);
}

static void put_domain(struct dump *d, uint64_t domain_id)
{
    if (domain_id)
        put_string_value(d, "domain", domain_id);
    else
        fputs(" domain=-", d->out);  /* the default domain */
}

/* GPU timeline, correlation and NVTX lines. */
static void put_timeline_event(struct dump *d, const struct gw_event *ev)
{
    FILE *out = d->out;
    const char *kind = gw_event_kind_name(ev->kind);
    if (ev->kind == GW_EV_CORRELATION) {
        fprintf(out, "- %" PRIu32 " correlation - - - corr=%" PRIu64 " call=0x%" PRIx64, ev->tid,
                ev->u.correlation.correlation_id, ev->u.correlation.call_id);
        return;
    }
    fprintf(out, "%" PRId64 " %" PRIu32 " %s - ", (int64_t)(ev->ts_ns - d->origin), ev->tid,
            kind);
    if (ev->kind == GW_EV_GPU_KERNEL || ev->kind == GW_EV_GPU_MEMCPY ||
        ev->kind == GW_EV_GPU_MEMSET)
        fprintf(out, "%" PRIu64 " -", ev->dur_ns);
    else
        fputs("- -", out);
    switch (ev->kind) {
    case GW_EV_GPU_KERNEL:
        put_gpu_kernel(d, ev);
        break;
    case GW_EV_GPU_MEMCPY:
        fprintf(out, " bytes=%" PRIu64 " kind=%s src=%s dst=%s", ev->u.gpu_memcpy.bytes,
                gw_gpu_copy_kind_name(ev->u.gpu_memcpy.copy_kind),
                gw_gpu_memory_kind_name(ev->u.gpu_memcpy.src_kind),
                gw_gpu_memory_kind_name(ev->u.gpu_memcpy.dst_kind));
        put_gpu_where(d, ev->u.gpu_memcpy.device, ev->u.gpu_memcpy.stream_id,
                      ev->u.gpu_memcpy.correlation_id, ev->u.gpu_memcpy.graph_id);
        break;
    case GW_EV_GPU_MEMSET:
        fprintf(out, " bytes=%" PRIu64 " mem=%s", ev->u.gpu_memset.bytes,
                gw_gpu_memory_kind_name(ev->u.gpu_memset.memory_kind));
        put_gpu_where(d, ev->u.gpu_memset.device, ev->u.gpu_memset.stream_id,
                      ev->u.gpu_memset.correlation_id, ev->u.gpu_memset.graph_id);
        break;
    case GW_EV_GPU_LOST:
        fprintf(out, " count=%" PRIu64, ev->u.gpu_lost.count);
        break;
    case GW_EV_GPU_WINDOW:
        fprintf(out, " %s", ev->u.gpu_window.open ? "open" : "shut");
        break;
    case GW_EV_RANGE_PUSH:
    case GW_EV_MARK:
        put_domain(d, ev->u.nvtx.domain_id);
        put_string_value(d, "name", ev->u.nvtx.name_id);
        break;
    case GW_EV_RANGE_POP:
        put_domain(d, ev->u.nvtx.domain_id);
        break;
    case GW_EV_RANGE_START:
        put_domain(d, ev->u.nvtx.domain_id);
        put_string_value(d, "name", ev->u.nvtx.name_id);
        fprintf(out, " range=%" PRIu64, ev->u.nvtx.range_id);
        break;
    case GW_EV_RANGE_END:
        fprintf(out, " range=%" PRIu64, ev->u.nvtx.range_id);
        break;
    case GW_EV_CPU_THREAD:
        fprintf(out, " thread=%" PRIu64 " cpu_ns=%" PRIu64 " wait_ns=%" PRIu64
                " wait_cpu_ns=%" PRIu64, ev->u.cpu_thread.tid, ev->u.cpu_thread.cpu_ns,
                ev->u.cpu_thread.wait_ns, ev->u.cpu_thread.wait_cpu_ns);
        if (ev->u.cpu_thread.runq_ns != UINT64_MAX)
            fprintf(out, " runq_ns=%" PRIu64, ev->u.cpu_thread.runq_ns);
        break;
    case GW_EV_CPU_PROC:
        fprintf(out, " cpu_ns=%" PRIu64 " descendants=%" PRIu64 " descendants_cpu_ns=%" PRIu64
                " active=%" PRIu64, ev->u.cpu_proc.process_cpu_ns, ev->u.cpu_proc.descendants,
                ev->u.cpu_proc.descendants_cpu_ns, ev->u.cpu_proc.active);
        break;
    default:
        break;
    }
}

static void put_event(struct dump *d, const struct gw_event *ev)
{
    FILE *out = d->out;
    switch (ev->kind) {
    case GW_EV_CALL: {
        const char *name = gw_api_name(ev->api_id);
        fprintf(out, "%" PRId64 " %" PRIu32 " call ", (int64_t)(ev->ts_ns - d->origin), ev->tid);
        if (name)
            fputs(name, out);
        else
            fprintf(out, "api_%" PRIu32, ev->api_id);
        fprintf(out, " %" PRIu64 " %" PRIu32, ev->dur_ns, ev->result);
        put_call_details(d, ev);
        break;
    }
    case GW_EV_LOST:
        fprintf(out, "%" PRId64 " %" PRIu32 " lost - - - count=%" PRIu64,
                (int64_t)(ev->ts_ns - d->origin), ev->tid, ev->u.lost.count);
        if (ev->u.lost.calls != ev->u.lost.count)
            fprintf(out, " calls=%" PRIu64, ev->u.lost.calls);
        break;
    case GW_EV_GPU_KERNEL:
    case GW_EV_GPU_MEMCPY:
    case GW_EV_GPU_MEMSET:
    case GW_EV_GPU_LOST:
    case GW_EV_GPU_WINDOW:
    case GW_EV_CORRELATION:
    case GW_EV_RANGE_PUSH:
    case GW_EV_RANGE_POP:
    case GW_EV_MARK:
    case GW_EV_RANGE_START:
    case GW_EV_RANGE_END:
    case GW_EV_CPU_THREAD:
    case GW_EV_CPU_PROC:
        put_timeline_event(d, ev);
        break;
    case GW_EV_PYSITE:
    case GW_EV_STACKSITE:
        put_site(d, ev);
        break;
    default:
        fprintf(out, "- %" PRIu32 " def %s - -", ev->tid, gw_event_kind_name(ev->kind));
        switch (ev->kind) {
        case GW_EV_STRING:
            fprintf(out, " id=%" PRIu64 " text=", ev->u.string.id);
            gw_put_value(out, ev->u.string.text, ev->u.string.len);
            break;
        case GW_EV_SHAPE:
            fprintf(out, " id=%" PRIu64, ev->u.shape.id);
            put_string_value(d, "kernel", ev->u.shape.name_id);
            fprintf(out, " func=0x%" PRIx64, ev->u.shape.func);
            put_shape(d, &ev->u.shape);
            if (ev->u.shape.registers || ev->u.shape.static_shared_mem)
                fprintf(out, " regs=%" PRIu64 " static_smem=%" PRIu64, ev->u.shape.registers,
                        ev->u.shape.static_shared_mem);
            break;
        case GW_EV_STREAM:
            fprintf(out, " id=%" PRIu64 " handle=0x%" PRIx64, ev->u.stream.id,
                    ev->u.stream.handle);
            if (ev->u.stream.cupti_stream_id)
                fprintf(out, " cupti_stream=%" PRIu64, ev->u.stream.cupti_stream_id);
            break;
        case GW_EV_DEVICE:
            fprintf(out, " ordinal=%" PRIu64, ev->u.device.ordinal);
            put_string_value(d, "name", ev->u.device.name_id);
            fprintf(out, " total=%" PRIu64 " free_at_first_context=%" PRIu64,
                    ev->u.device.total_bytes, ev->u.device.free_at_first_context);
            break;
        case GW_EV_CLOCK:
            fprintf(out, " trace_ns=%" PRIu64 " realtime_ns=%" PRIu64 " monotonic_ns=%" PRIu64,
                    ev->u.clock.trace_ns, ev->u.clock.realtime_ns, ev->u.clock.monotonic_ns);
            break;
        case GW_EV_THREAD:
            fprintf(out, " tid=%" PRIu64, ev->u.thread.tid);
            put_string_value(d, "name", ev->u.thread.name_id);
            break;
        case GW_EV_STACK:
            fprintf(out, " id=%" PRIu64, ev->u.stack.id);
            put_frames(d, &ev->u.stack);
            break;
        case GW_EV_PYTHON:
            put_string_value(d, "version", ev->u.python.version_id);
            fprintf(out, " follows_gil_releases=%" PRIu64, ev->u.python.follows_releases);
            break;
        case GW_EV_PYSTACK:
            fprintf(out, " id=%" PRIu64, ev->u.pystack.id);
            put_pyframes(d, &ev->u.pystack);
            break;
        default:
            break;
        }
        break;
    }
    fputc('\n', out);
}

static void put_field_line(FILE *out, const char *label, const char *field, size_t size)
{
    fprintf(out, "# %s ", label);
    gw_put_escaped(out, field, gw_field_len(field, size));
    fputc('\n', out);
}

static void put_rank(FILE *out, const char *label, int32_t value)
{
    if (value < 0)
        fprintf(out, " %s unset", label);
    else
        fprintf(out, " %s %" PRId32, label, value);
}

static void put_header(FILE *out, struct gw_reader *r)
{
    const struct gw_file_header *h = gw_reader_header(r);
    fprintf(out, "# gpuwatch trace ");
    gw_put_escaped(out, gw_reader_name(r), strlen(gw_reader_name(r)));
    fprintf(out, " (%" PRIu64 " bytes)\n", gw_reader_file_size(r));
    fprintf(out, "# format v%u min_reader v%u header_size %" PRIu32 " features",
            (unsigned)h->version, (unsigned)h->min_reader_version, h->header_size);
    static const char *const features[] = {"host_calls", "gpu_activity", "nvtx", "cpu_count",
                                           "cpu_samples", "corr_delta", "gpu_sampled"};
    int any = 0;
    for (unsigned i = 0; i < 32; i++) {
        if (!(h->feature_flags & (1u << i)))
            continue;
        if (i < sizeof features / sizeof features[0])
            fprintf(out, "%s%s", any ? "," : " ", features[i]);
        else
            fprintf(out, "%sbit%u", any ? "," : " ", i);
        any = 1;
    }
    fprintf(out, "%s\n", any ? "" : " none");
    fprintf(out, "# pid %" PRIu32 " ppid %" PRIu32 " host ", h->pid, h->ppid);
    gw_put_escaped(out, h->hostname, gw_field_len(h->hostname, sizeof h->hostname));
    fputc('\n', out);
    put_field_line(out, "cmdline", h->cmdline, sizeof h->cmdline);
    if (h->feature_flags & GW_FEAT_CPU_COUNT)
        fprintf(out, "# cpus online %" PRIu32 " usable %" PRIu32 "\n", h->cpus_online,
                h->cpus_usable);
    fputc('#', out);
    put_rank(out, "rank", h->rank);
    put_rank(out, "local_rank", h->local_rank);
    put_rank(out, "world_size", h->world_size);
    fputc('\n', out);
    fprintf(out, "# device %" PRId32 " name ", h->device_ordinal);
    gw_put_value(out, h->device_name, gw_field_len(h->device_name, sizeof h->device_name));
    fprintf(out, " total_mem %" PRIu64 " free_at_start %" PRIu64 "\n", h->device_total_mem,
            h->device_free_at_start);
    const char *clock = gw_clock_source_name(h->clock_source);
    if (clock)
        fprintf(out, "# clock %s", clock);
    else
        fprintf(out, "# clock %" PRIu32, h->clock_source);
    fprintf(out, " start_ns %" PRIu64 " realtime_minus_trace_ns %" PRId64 "\n", h->start_ns,
            h->realtime_minus_trace_ns);
    const char *cupti = gw_cupti_status_name(h->cupti_status);
    if (cupti)
        fprintf(out, "# cupti %s", cupti);
    else
        fprintf(out, "# cupti %" PRId32, h->cupti_status);
    size_t reason = gw_field_len(h->cupti_reason, sizeof h->cupti_reason);
    if (reason) {
        fputc(' ', out);
        gw_put_escaped(out, h->cupti_reason, reason);
    }
    fputc('\n', out);
    fprintf(out, "# columns: time_ns tid kind name dur_ns result details\n");
}

static void on_damage(const struct gw_damage *damage, void *user)
{
    struct dump *d = user;
    d->damage++;
    if (d->damage <= MAX_DAMAGE_LINES)
        fprintf(stderr, "gpuwatch dump: %s\n", damage->message);
    else if (d->damage == MAX_DAMAGE_LINES + 1)
        fprintf(stderr, "gpuwatch dump: further damage reports are only counted\n");
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch dump [--absolute] [--no-defs] TRACE\n"
            "Prints the trace header as '#' lines, then one line per event:\n"
            "  time_ns tid kind name dur_ns result details...\n"
            "time_ns is relative to the header's start_ns; kind is call, lost or def, or\n"
            "for the GPU timeline gpu_kernel, gpu_memcpy, gpu_memset, gpu_lost (time_ns is\n"
            "the GPU start), correlation, and range_push, range_pop, mark, range_start,\n"
            "range_end for NVTX. Calls end with call=0x... (their call id); a GPU record's\n"
            "corr=N leads to the correlation line naming the call=0x... that issued it.\n"
            "Damage reports go to stderr; exit status 1 when the trace is damaged.\n\n"
            "  -a, --absolute  print absolute trace-clock timestamps\n"
            "  -n, --no-defs   leave out definition lines (strings, shapes, streams...)\n"
            "  -h, --help      this text\n");
}

int gw_cmd_dump(int argc, char **argv)
{
    static const struct option options[] = {
        {"absolute", no_argument, NULL, 'a'},
        {"no-defs", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int absolute = 0, defs = 1, c;
    while ((c = getopt_long(argc, argv, "anh", options, NULL)) != -1) {
        switch (c) {
        case 'a': absolute = 1; break;
        case 'n': defs = 0; break;
        case 'h': help(stdout); return GW_EXIT_OK;
        default: return gw_usage_error("dump", "unknown option");
        }
    }
    if (argc - optind != 1)
        return gw_usage_error("dump", "expected exactly one TRACE, got %d", argc - optind);

    char err[512];
    struct dump d = {.out = stdout};
    if (gw_reader_open(argv[optind], &d.r, err, sizeof err) != 0) {
        fprintf(stderr, "gpuwatch dump: %s\n", err);
        return GW_EXIT_DAMAGE;
    }
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    d.origin = absolute ? 0 : gw_reader_header(d.r)->start_ns;
    gw_reader_load_defs(d.r);
    gw_reader_on_damage(d.r, on_damage, &d);
    put_header(stdout, d.r);
    struct gw_event ev;
    while (gw_reader_next(d.r, &ev) > 0)
        if (defs || !gw_event_kind_is_def(ev.kind))
            put_event(&d, &ev);
    const struct gw_reader_stats *s = gw_reader_stats(d.r);
    printf("# end calls %" PRIu64 " errors %" PRIu64 " lost_events %" PRIu64
           " lost_chunks %" PRIu64 " damage %" PRIu64 " damaged_bytes %" PRIu64
           " unknown_records %" PRIu64 " gpu_kernels %" PRIu64 " gpu_memcpys %" PRIu64
           " gpu_memsets %" PRIu64 " gpu_lost %" PRIu64 " correlations %" PRIu64
           " nvtx %" PRIu64 " cpu_samples %" PRIu64 "\n",
           s->calls, s->call_errors, s->lost_events, s->lost_chunks, s->damage_reports,
           s->damaged_bytes, s->unknown_records, s->gpu_kernels, s->gpu_memcpys,
           s->gpu_memsets, s->gpu_lost_events, s->correlations, s->nvtx_records,
           s->cpu_samples);
    fflush(stdout);
    if (s->damage_reports)
        fprintf(stderr, "gpuwatch dump: %s: %" PRIu64 " damage report%s, %" PRIu64
                " bytes not read\n",
                gw_reader_name(d.r), s->damage_reports, s->damage_reports == 1 ? "" : "s",
                s->damaged_bytes);
    int rc = s->damage_reports ? GW_EXIT_DAMAGE : GW_EXIT_OK;
    gw_reader_close(d.r);
    if (ferror(stdout)) {
        fprintf(stderr, "gpuwatch dump: error writing the output\n");
        return GW_EXIT_DAMAGE;
    }
    return rc;
}
