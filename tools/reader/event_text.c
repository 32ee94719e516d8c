#include "event_text.h"

#include <inttypes.h>

#include "def_text.h"
#include "text_out.h"

static void put_launch(FILE *out, const struct gw_reader *r, const struct gw_event *ev)
{
    switch (ev->api_id) {
    case GW_API_cuGraphLaunch:
    case GW_API_cuGraphLaunch_ptsz:
        fprintf(out, " graph=0x%" PRIx64, ev->u.launch.handle);
        break;
    case GW_API_cuLaunchHostFunc:
    case GW_API_cuLaunchHostFunc_ptsz:
        fprintf(out, " fn=0x%" PRIx64, ev->u.launch.handle);
        break;
    }
    if (ev->u.launch.shape_id) {
        const struct gw_shape *s = gw_reader_shape(r, ev->u.launch.shape_id);
        if (s) {
            gw_text_string_value(out, r, "kernel", s->name_id);
            gw_text_shape(out, s);
        } else {
            fprintf(out, " shape=%" PRIu64, ev->u.launch.shape_id);
        }
    }
    fprintf(out, " stream=%" PRIu64, ev->u.launch.stream_id);
}

static void put_vmm(FILE *out, const struct gw_event *ev)
{
    uint64_t ptr = ev->u.vmm.ptr, size = ev->u.vmm.size, handle = ev->u.vmm.handle;
    switch (ev->api_id) {
    case GW_API_cuMemAddressReserve:
        fprintf(out, " ptr=0x%" PRIx64 " size=%" PRIu64 " align=%" PRIu64, ptr, size,
                ev->u.vmm.alignment);
        break;
    case GW_API_cuMemCreate:
        fprintf(out, " handle=0x%" PRIx64 " size=%" PRIu64 " device=%" PRIu64, handle, size,
                ev->u.vmm.device);
        if (ev->u.vmm.stack_id)
            fprintf(out, " stack=%" PRIu64, ev->u.vmm.stack_id);
        break;
    case GW_API_cuMemRelease:
        fprintf(out, " handle=0x%" PRIx64, handle);
        break;
    case GW_API_cuMemMap:
        fprintf(out, " ptr=0x%" PRIx64 " size=%" PRIu64 " handle=0x%" PRIx64, ptr, size,
                handle);
        break;
    default:
        fprintf(out, " ptr=0x%" PRIx64 " size=%" PRIu64, ptr, size);
        break;
    }
}

static void put_call_details(FILE *out, const struct gw_reader *r, const struct gw_event *ev)
{
    switch (ev->family) {
    case GW_FAM_PLAIN:
        break;
    case GW_FAM_PROC: {
        gw_text_string_value(out, r, "symbol", ev->u.proc.symbol_id);
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
        put_vmm(out, ev);
        break;
    case GW_FAM_HOSTMEM:
        fprintf(out, " ptr=0x%" PRIx64 " bytes=%" PRIu64 " flags=0x%" PRIx64,
                ev->u.hostmem.ptr, ev->u.hostmem.bytes, ev->u.hostmem.flags);
        if (ev->u.hostmem.stack_id)
            fprintf(out, " stack=%" PRIu64, ev->u.hostmem.stack_id);
        break;
    case GW_FAM_LAUNCH:
        put_launch(out, r, ev);
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
        gw_text_string_value(out, r, "name", ev->u.name.string_id);
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
static void put_gpu_where(FILE *out, const struct gw_reader *r, uint64_t device,
                          uint64_t cupti_stream, uint64_t corr, uint64_t graph)
{
    uint64_t stream;
    fprintf(out, " device=%" PRIu64, device);
    if (gw_reader_stream_by_cupti(r, cupti_stream, &stream) == 0)
        fprintf(out, " stream=%" PRIu64, stream);
    else
        fputs(" stream=-", out);
    fprintf(out, " cupti_stream=%" PRIu64 " corr=%" PRIu64 " graph=%" PRIu64, cupti_stream,
            corr, graph);
}

static void put_gpu_kernel(FILE *out, const struct gw_reader *r, const struct gw_event *ev)
{
    const struct gw_shape *s = gw_reader_shape(r, ev->u.gpu_kernel.shape_id);
    if (s) {
        gw_text_string_value(out, r, "kernel", s->name_id);
        gw_text_shape(out, s);
        fprintf(out, " regs=%" PRIu64 " static_smem=%" PRIu64, s->registers,
                s->static_shared_mem);
    } else {
        fprintf(out, " shape=%" PRIu64, ev->u.gpu_kernel.shape_id);
    }
    put_gpu_where(out, r, ev->u.gpu_kernel.device, ev->u.gpu_kernel.stream_id,
                  ev->u.gpu_kernel.correlation_id, ev->u.gpu_kernel.graph_id);
}

static void put_domain(FILE *out, const struct gw_reader *r, uint64_t domain_id)
{
    if (domain_id)
        gw_text_string_value(out, r, "domain", domain_id);
    else
        fputs(" domain=-", out);  /* the default domain */
}

/* GPU timeline, correlation and NVTX lines. */
static void put_timeline_event(FILE *out, const struct gw_reader *r, uint64_t origin,
                               const struct gw_event *ev)
{
    const char *kind = gw_event_kind_name(ev->kind);
    if (ev->kind == GW_EV_CORRELATION) {
        fprintf(out, "- %" PRIu32 " correlation - - - corr=%" PRIu64 " call=0x%" PRIx64, ev->tid,
                ev->u.correlation.correlation_id, ev->u.correlation.call_id);
        return;
    }
    fprintf(out, "%" PRId64 " %" PRIu32 " %s - ", (int64_t)(ev->ts_ns - origin), ev->tid,
            kind);
    if (ev->kind == GW_EV_GPU_KERNEL || ev->kind == GW_EV_GPU_MEMCPY ||
        ev->kind == GW_EV_GPU_MEMSET)
        fprintf(out, "%" PRIu64 " -", ev->dur_ns);
    else
        fputs("- -", out);
    switch (ev->kind) {
    case GW_EV_GPU_KERNEL:
        put_gpu_kernel(out, r, ev);
        break;
    case GW_EV_GPU_MEMCPY:
        fprintf(out, " bytes=%" PRIu64 " kind=%s src=%s dst=%s", ev->u.gpu_memcpy.bytes,
                gw_gpu_copy_kind_name(ev->u.gpu_memcpy.copy_kind),
                gw_gpu_memory_kind_name(ev->u.gpu_memcpy.src_kind),
                gw_gpu_memory_kind_name(ev->u.gpu_memcpy.dst_kind));
        put_gpu_where(out, r, ev->u.gpu_memcpy.device, ev->u.gpu_memcpy.stream_id,
                      ev->u.gpu_memcpy.correlation_id, ev->u.gpu_memcpy.graph_id);
        break;
    case GW_EV_GPU_MEMSET:
        fprintf(out, " bytes=%" PRIu64 " mem=%s", ev->u.gpu_memset.bytes,
                gw_gpu_memory_kind_name(ev->u.gpu_memset.memory_kind));
        put_gpu_where(out, r, ev->u.gpu_memset.device, ev->u.gpu_memset.stream_id,
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
        put_domain(out, r, ev->u.nvtx.domain_id);
        gw_text_string_value(out, r, "name", ev->u.nvtx.name_id);
        break;
    case GW_EV_RANGE_POP:
        put_domain(out, r, ev->u.nvtx.domain_id);
        break;
    case GW_EV_RANGE_START:
        put_domain(out, r, ev->u.nvtx.domain_id);
        gw_text_string_value(out, r, "name", ev->u.nvtx.name_id);
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
        if (ev->u.cpu_proc.machine_busy_ns != UINT64_MAX)
            fprintf(out, " machine_busy_ns=%" PRIu64, ev->u.cpu_proc.machine_busy_ns);
        break;
    case GW_EV_MEM_BLOCK:
        fprintf(out, " device=%" PRIu64 " addr=0x%" PRIx64 " bytes=%" PRId64
                " allocated=%" PRIu64 " reserved=%" PRIu64, ev->u.mem_block.device,
                ev->u.mem_block.addr, ev->u.mem_block.bytes, ev->u.mem_block.allocated,
                ev->u.mem_block.reserved);
        if (ev->u.mem_block.before)
            fprintf(out, " before=%" PRIu64, ev->u.mem_block.before);
        break;
    default:
        break;
    }
}

void gw_event_text(FILE *out, const struct gw_reader *r, uint64_t origin,
                   const struct gw_event *ev)
{
    switch (ev->kind) {
    case GW_EV_CALL: {
        const char *name = gw_api_name(ev->api_id);
        fprintf(out, "%" PRId64 " %" PRIu32 " call ", (int64_t)(ev->ts_ns - origin), ev->tid);
        if (name)
            fputs(name, out);
        else
            fprintf(out, "api_%" PRIu32, ev->api_id);
        fprintf(out, " %" PRIu64 " %" PRIu32, ev->dur_ns, ev->result);
        put_call_details(out, r, ev);
        break;
    }
    case GW_EV_LOST:
        fprintf(out, "%" PRId64 " %" PRIu32 " lost - - - count=%" PRIu64,
                (int64_t)(ev->ts_ns - origin), ev->tid, ev->u.lost.count);
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
    case GW_EV_MEM_BLOCK:
        put_timeline_event(out, r, origin, ev);
        break;
    case GW_EV_PYSITE:
    case GW_EV_STACKSITE:
        gw_site_text(out, r, ev);
        break;
    default:
        gw_def_text(out, r, ev);
        break;
    }
    fputc('\n', out);
}
