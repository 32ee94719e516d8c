/*
 * From the reader's events to the analyzer's: classify each host call by what it does to
 * the GPU's queue (issues work, waits for it, blocks on a transfer) and each GPU record by
 * what it occupied. The classification is the one place that knows CUDA's semantics; the
 * model downstream only sees flags.
 */
#include <ctype.h>
#include <string.h>

#include "event_convert.h"


static uint64_t fnv(uint64_t h, unsigned char c)
{
    return (h ^ c) * 0x100000001b3ull;
}

int an_is_step_name(const char *name, size_t len)
{
    char low[128];
    size_t n = len < sizeof low - 1 ? len : sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[n] = 0;
    /* operator ranges (emit_nvtx: "aten::add", "Optimizer.step#SGD.step") are not steps */
    if (strstr(low, "::") || strstr(low, "optim"))
        return 0;
    return strstr(low, "step") || strstr(low, "iter") || !strncmp(low, "batch", 5);
}

/* Step names carry a counter ("ProfilerStep#12", "step 3"): the key ignores digits so
 * every step falls under one key. */
static uint64_t step_name_key(const char *name, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)name[i]))
            h = fnv(h, (unsigned char)name[i]);
    return h | 1ull << 63;  /* never equal to a plain string id */
}

static void convert_copy(const struct gw_event *ev, struct an_ev *o)
{
    o->kind = AN_COPY;
    o->bytes = ev->u.copy.bytes;
    o->stream = ev->u.copy.stream_id;
    o->dir = (uint8_t)ev->u.copy.dir;
    o->host_kind = (uint8_t)ev->u.copy.host_kind;
    int async = gw_api_async(ev->api_id);
    int touches_host = o->dir == GW_COPY_HTOD || o->dir == GW_COPY_DTOH ||
                       o->dir == GW_COPY_HTOH ||
                       (o->dir == GW_COPY_UNKNOWN && o->host_kind != GW_HOST_NONE);
    if (async) {
        o->flags |= AN_F_ASYNC_API;
        /* the host stages pageable memory itself: the call returns when it is done */
        if (o->host_kind == GW_HOST_PAGEABLE && touches_host) {
            o->flags |= AN_F_BLOCKING;
            if (o->dir == GW_COPY_DTOH)
                o->flags |= AN_F_DRAINS;  /* it ran after the stream's earlier work */
        }
    } else if (touches_host) {
        /* synchronous copies run on the legacy stream after everything before them */
        o->flags |= AN_F_BLOCKING | AN_F_DRAINS | AN_F_ALL_STREAMS;
    }
}

static void convert_vmm(const struct gw_event *ev, struct an_ev *o)
{
    switch (ev->api_id) {
    case GW_API_cuMemCreate:
        o->kind = AN_ALLOC;
        o->host_kind = AN_MEM_VMM;
        o->ptr = ev->u.vmm.handle;
        o->bytes = ev->u.vmm.size;
        o->key = ev->u.vmm.stack_id;
        break;
    case GW_API_cuMemRelease:
        o->kind = AN_FREE;
        o->host_kind = AN_MEM_VMM;
        o->ptr = ev->u.vmm.handle;
        break;
    default:
        o->kind = AN_CALL;
    }
}

static void convert_call(const struct gw_event *ev, struct an_ev *o)
{
    o->api = (uint16_t)ev->api_id;
    o->end = ev->ts_ns + ev->dur_ns;
    o->flags |= an_result_flags(ev->result);
    switch (ev->family) {
    case GW_FAM_MEMINFO:
        o->kind = AN_MEMINFO;
        o->bytes = ev->u.meminfo.free_bytes;
        o->ptr = ev->u.meminfo.total_bytes;
        break;
    case GW_FAM_ALLOC:
        o->kind = AN_ALLOC;
        o->ptr = ev->u.alloc.ptr;
        o->bytes = ev->u.alloc.bytes;
        o->stream = ev->u.alloc.stream_id;
        o->key = ev->u.alloc.stack_id;
        o->host_kind = ev->api_id == GW_API_cuMemAllocManaged ? AN_MEM_MANAGED
                       : gw_api_async(ev->api_id)             ? AN_MEM_POOL
                                                              : AN_MEM_PLAIN;
        if (gw_api_async(ev->api_id))
            o->flags |= AN_F_ASYNC_API;
        break;
    case GW_FAM_FREE:
        o->kind = AN_FREE;
        o->ptr = ev->u.memfree.ptr;
        o->stream = ev->u.memfree.stream_id;
        if (gw_api_async(ev->api_id)) {
            o->flags |= AN_F_ASYNC_API;
            o->host_kind = AN_MEM_POOL;
        } else {
            o->flags |= AN_F_DRAINS | AN_F_ALL_STREAMS;  /* cudaFree waits for the device */
        }
        break;
    case GW_FAM_VMM:
        convert_vmm(ev, o);
        break;
    case GW_FAM_HOSTMEM:
        if (ev->api_id == GW_API_cuMemFreeHost || ev->api_id == GW_API_cuMemHostUnregister) {
            o->kind = AN_HOST_FREE;
        } else {
            o->kind = AN_HOST_ALLOC;
            o->bytes = ev->u.hostmem.bytes;
            o->key = ev->u.hostmem.stack_id;
        }
        o->ptr = ev->u.hostmem.ptr;
        break;
    case GW_FAM_COPY:
        convert_copy(ev, o);
        break;
    case GW_FAM_SET:
        o->kind = AN_SET;
        o->bytes = ev->u.set.bytes;
        o->stream = ev->u.set.stream_id;
        if (gw_api_async(ev->api_id))
            o->flags |= AN_F_ASYNC_API;
        break;
    case GW_FAM_SYNC:
        o->kind = AN_CALL;
        o->stream = ev->u.sync.stream_id;
        o->key = ev->u.sync.event;
        switch (ev->api_id) {
        case GW_API_cuCtxSynchronize:
        case GW_API_cuCtxSynchronize_v2:
            o->kind = AN_SYNC;
            o->flags |= AN_F_DRAINS | AN_F_ALL_STREAMS;
            break;
        case GW_API_cuStreamSynchronize:
        case GW_API_cuStreamSynchronize_ptsz:
        case GW_API_cuEventSynchronize:
            o->kind = AN_SYNC;
            o->flags |= AN_F_DRAINS;
            break;
        case GW_API_cuStreamQuery:
        case GW_API_cuStreamQuery_ptsz:
        case GW_API_cuEventQuery:
            if (!ev->result) {  /* CUDA_SUCCESS: the work is done (NOT_READY otherwise) */
                o->kind = AN_SYNC;
                o->flags |= AN_F_DRAINS;
            }
            break;
        case GW_API_cuStreamBeginCapture:
        case GW_API_cuStreamBeginCapture_ptsz:
        case GW_API_cuStreamBeginCapture_v2:
        case GW_API_cuStreamBeginCapture_v2_ptsz:
        case GW_API_cuStreamEndCapture:
        case GW_API_cuStreamEndCapture_ptsz:
            if (!ev->result) {  /* a failed Begin captures nothing; a failed End ends it */
                o->kind = AN_CAPTURE;
                o->dir = ev->api_id != GW_API_cuStreamEndCapture &&
                         ev->api_id != GW_API_cuStreamEndCapture_ptsz;
            } else if (ev->api_id == GW_API_cuStreamEndCapture ||
                       ev->api_id == GW_API_cuStreamEndCapture_ptsz) {
                o->kind = AN_CAPTURE;  /* CUDA ends the capture on error too */
            }
            break;
        default:
            break;  /* cuStreamWaitEvent waits on the GPU; cuEventRecord marks */
        }
        if (ev->result && o->kind == AN_SYNC) {  /* a failed wait proves nothing */
            o->kind = AN_CALL;
            o->flags &= (uint8_t)~(AN_F_DRAINS | AN_F_ALL_STREAMS);
        }
        break;
    default:
        o->kind = AN_CALL;
    }
}

static void convert_gpu_copy(const struct gw_event *ev, const struct gw_reader *reader,
                             struct an_ev *o)
{
    o->kind = AN_GPU_COPY;
    o->tid = (uint32_t)ev->u.gpu_memcpy.device;
    o->stream = an_gpu_stream(reader, ev->u.gpu_memcpy.stream_id);
    o->bytes = ev->u.gpu_memcpy.bytes;
    o->ptr = ev->u.gpu_memcpy.correlation_id;
    if (ev->u.gpu_memcpy.graph_id)
        o->flags |= AN_F_GRAPH_NODE;
    unsigned host = 0;
    switch (ev->u.gpu_memcpy.copy_kind) {
    case GW_GPU_COPY_HTOD: o->dir = GW_COPY_HTOD; host = ev->u.gpu_memcpy.src_kind; break;
    case GW_GPU_COPY_DTOH: o->dir = GW_COPY_DTOH; host = ev->u.gpu_memcpy.dst_kind; break;
    case GW_GPU_COPY_DTOD: o->dir = GW_COPY_DTOD; break;
    case GW_GPU_COPY_HTOH: o->dir = GW_COPY_HTOH; host = ev->u.gpu_memcpy.src_kind; break;
    case GW_GPU_COPY_PTOP: o->dir = GW_COPY_PEER; break;
    default: o->dir = GW_COPY_UNKNOWN;
    }
    o->host_kind = host == GW_GPU_MEM_PAGEABLE  ? GW_HOST_PAGEABLE
                   : host == GW_GPU_MEM_PINNED  ? GW_HOST_PINNED
                   : host == GW_GPU_MEM_MANAGED ? GW_HOST_MANAGED
                                                : GW_HOST_NONE;
}

static void convert_nvtx(const struct gw_event *ev, const struct gw_reader *reader,
                         struct an_ev *o)
{
    o->key = ev->u.nvtx.name_id;
    o->bytes = ev->u.nvtx.name_id;
    o->ptr = ev->u.nvtx.range_id;
    if (ev->kind == GW_EV_RANGE_POP || ev->kind == GW_EV_RANGE_END || !reader)
        return;
    size_t len = 0;
    const char *name = gw_reader_string(reader, ev->u.nvtx.name_id, &len);
    if (name && an_is_step_name(name, len)) {
        o->flags |= AN_F_STEP_NAME;
        o->key = step_name_key(name, len);
    }
}

/* Every kind of record but launches and kernel records (an_event_convert writes those
 * whole): zero, then what the record says. */
int an_event_convert_any(const struct gw_event *ev, const struct gw_reader *reader,
                         struct an_ev *o)
{
    memset(o, 0, sizeof *o);
    o->ts = ev->ts_ns;
    o->end = ev->ts_ns + ev->dur_ns;
    if (o->end < o->ts)
        o->end = o->ts;  /* a wrapped duration: keep the record, drop its length */
    o->tid = ev->tid;
    switch (ev->kind) {
    case GW_EV_CALL:
        convert_call(ev, o);
        if (o->end < o->ts)
            o->end = o->ts;
        return 1;
    case GW_EV_LOST:
        o->kind = AN_LOST;
        o->bytes = ev->u.lost.count;
        o->end = o->ts;
        return 1;
    case GW_EV_GPU_MEMCPY:
        convert_gpu_copy(ev, reader, o);
        return 1;
    case GW_EV_GPU_MEMSET:
        o->kind = AN_GPU_SET;
        o->tid = (uint32_t)ev->u.gpu_memset.device;
        o->stream = an_gpu_stream(reader, ev->u.gpu_memset.stream_id);
        o->bytes = ev->u.gpu_memset.bytes;
        o->ptr = ev->u.gpu_memset.correlation_id;
        if (ev->u.gpu_memset.graph_id)
            o->flags |= AN_F_GRAPH_NODE;
        return 1;
    case GW_EV_GPU_LOST:
        o->kind = AN_GPU_LOST;
        o->bytes = ev->u.gpu_lost.count;
        o->end = o->ts;
        return 1;
    case GW_EV_RANGE_PUSH: o->kind = AN_RANGE_PUSH; break;
    case GW_EV_RANGE_POP: o->kind = AN_RANGE_POP; break;
    case GW_EV_MARK: o->kind = AN_MARK; break;
    case GW_EV_RANGE_START: o->kind = AN_RANGE_START; break;
    case GW_EV_RANGE_END: o->kind = AN_RANGE_END; break;
    case GW_EV_CPU_THREAD:
        o->kind = AN_CPU_THREAD;
        o->ptr = ev->u.cpu_thread.tid;
        o->bytes = ev->u.cpu_thread.cpu_ns;
        o->key = ev->u.cpu_thread.wait_ns;
        o->stream = ev->u.cpu_thread.wait_cpu_ns;
        if (ev->u.cpu_thread.runq_ns != UINT64_MAX) {  /* (an_event.h: end - ts, dir) */
            o->dir = 1;
            o->end = o->ts + ev->u.cpu_thread.runq_ns;
            if (o->end < o->ts)
                o->end = o->ts;
        }
        return 1;
    case GW_EV_GPU_WINDOW:
        o->kind = AN_GPU_WINDOW;
        o->dir = ev->u.gpu_window.open != 0;
        o->end = o->ts;
        return 1;
    case GW_EV_MEM_BLOCK:
        o->kind = AN_MEM_BLOCK;
        o->end = o->ts;
        o->dir = ev->u.mem_block.bytes > 0;
        o->ptr = ev->u.mem_block.addr;
        o->bytes = ev->u.mem_block.bytes > 0 ? (uint64_t)ev->u.mem_block.bytes
                                             : -(uint64_t)ev->u.mem_block.bytes;
        o->api = (uint16_t)ev->u.mem_block.device;
        o->stream = ev->u.mem_block.reserved;
        o->key = ev->u.mem_block.before;
        o->host_kind = AN_MEM_PLAIN;
        return 1;
    case GW_EV_CPU_PROC:
        o->kind = AN_CPU_PROC;
        o->bytes = ev->u.cpu_proc.process_cpu_ns;
        o->ptr = ev->u.cpu_proc.descendants_cpu_ns;
        o->key = ev->u.cpu_proc.descendants;
        o->stream = ev->u.cpu_proc.active;
        if (ev->u.cpu_proc.machine_busy_ns != UINT64_MAX) {  /* (an_event.h: end - ts, dir) */
            o->dir = 1;
            o->end = o->ts + ev->u.cpu_proc.machine_busy_ns;
            if (o->end < o->ts)
                o->end = o->ts;
        }
        return 1;
    default:
        return 0;
    }
    o->end = o->ts;
    convert_nvtx(ev, reader, o);
    return 1;
}
