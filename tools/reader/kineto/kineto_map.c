/* One Kineto event into the records the analyzer knows:
 *   cuda_runtime / cuda_driver  a CALL of the driver entry point it ends in (kineto_names.c)
 *                               and a CORRELATION naming it by its correlation id;
 *   kernel, gpu_memcpy, gpu_memset  GPU records on their device and stream;
 *   cuda_sync                   no record: which stream and event a sync call waited on
 *                               (joined to the call at output);
 *   user_annotation, ProfilerStep#N  NVTX push at the start, pop at the end (every
 *                               ProfilerStep#N is named "ProfilerStep", so steps are one
 *                               repeating range, as with NVTX);
 *   nvtx B/E, b/e               gpuwatch's own export: push/pop, start/end;
 *   python_function             the Python stacks of the calls (kineto_python.c);
 *   [memory] instant events     the caching allocator's blocks (kineto_memory.c).
 * Kineto's calls carry no stream, bytes or copy kind: the GPU record of the same
 * correlation does, and kin_fill_event joins them when the call is handed out. */
#include <string.h>

#include "kineto.h"
#include "../trace_reader_internal.h"

enum { ORDER_POP = 0, ORDER_DEF = 1, ORDER_PUSH = 2, ORDER_CALL = 3, ORDER_CORR = 4,
       ORDER_GPU = 5 };

static void add(struct kineto *k, struct kin_rec *rec)
{
    if (kin_sort_add(&k->sort, rec) != 0 && !k->failed) {
        k->failed = 1;
        snprintf(k->error, sizeof k->error, "%s: out of memory or temporary space sorting "
                 "the events", k->path);
    }
}

static uint32_t host_tid(const struct kin_event *e)
{
    return (uint32_t)(e->tid ? e->tid : e->pid);
}

static uint64_t next_call_id(struct kineto *k, uint32_t tid)
{
    uint64_t *n = gw_map_get(&k->call_seq, tid);
    uint64_t number = n ? *n : 0;
    gw_map_put(&k->call_seq, tid, number + 1);
    return (uint64_t)tid << 32 | number;
}

static void define_stream(struct gw_reader *r, struct kineto *k, uint64_t stream)
{
    if (!stream || gw_map_get(&k->streams, stream))
        return;
    gw_map_put(&k->streams, stream, 1);
    gw_tables_add_stream(r, stream, stream, stream);  /* ours = CUPTI's = the handle */
}

static void map_call(struct gw_reader *r, struct kineto *k, const struct kin_event *e)
{
    unsigned api = kin_api_of(e->name, e->cat == KIN_CAT_DRIVER);
    if (!api) {
        k->unknown_calls++;
        return;
    }
    uint32_t tid = host_tid(e);
    struct kin_rec rec = {.ts = e->ts, .dur = e->dur, .tid = tid, .kind = GW_EV_CALL,
                          .api_id = (uint16_t)api, .order = ORDER_CALL};
    rec.call_id = next_call_id(k, tid);
    rec.corr = e->correlation;
    /* what the call itself says (gpuwatch's export writes these; Kineto does not) */
    struct gw_event shape = {0};
    switch (gw_api_family(api)) {
    case GW_FAM_LAUNCH: shape.u.launch.stream_id = e->gw_stream; break;
    case GW_FAM_COPY:
        shape.u.copy.bytes = e->bytes;
        shape.u.copy.stream_id = e->gw_stream;
        shape.u.copy.dir = kin_copy_dir(e->direction);
        shape.u.copy.host_kind = kin_host_kind(e->host_memory);
        break;
    case GW_FAM_SET: shape.u.set.bytes = e->bytes; shape.u.set.stream_id = e->gw_stream; break;
    case GW_FAM_SYNC: shape.u.sync.stream_id = e->gw_stream; break;
    case GW_FAM_ALLOC:
        shape.u.alloc.bytes = e->bytes;
        /* Kineto has no address: one of its own, so no two blocks share one */
        shape.u.alloc.ptr = e->has_address ? e->address : rec.call_id | UINT64_C(1) << 63;
        break;
    case GW_FAM_FREE: shape.u.memfree.ptr = e->address; break;
    case GW_FAM_HOSTMEM: shape.u.hostmem.bytes = e->bytes; break;
    default: break;
    }
    if (e->has_gw_stream && e->gw_stream && e->correlation) {
        struct kin_join *j = kin_join_of(k, e->correlation, 1);
        if (j) {
            j->call_stream = e->gw_stream;
            if (j->stream)
                gw_map_put(&k->stream_alias, j->call_stream, j->stream);
        }
    }
    memcpy(rec.u, &shape.u, sizeof rec.u);
    add(k, &rec);
    if (e->correlation) {
        struct kin_rec corr = {.ts = e->ts, .tid = tid, .kind = GW_EV_CORRELATION,
                               .order = ORDER_CORR};
        struct gw_event link = {0};
        link.u.correlation.correlation_id = e->correlation;
        link.u.correlation.call_id = rec.call_id;
        memcpy(corr.u, &link.u, sizeof corr.u);
        add(k, &corr);
    }
}

/* A kernel's launch shape, one per distinct name: the name is what the analyzer keys on. */
static uint64_t kernel_shape(struct gw_reader *r, struct kineto *k, const struct kin_event *e)
{
    uint64_t name_id = kin_string(r, k, e->name, e->name_len);
    if (!gw_reader_shape(r, name_id)) {
        struct gw_shape shape = {.id = name_id, .name_id = name_id};
        gw_tables_add_shape(r, &shape);
    }
    return name_id;
}

static void map_gpu(struct gw_reader *r, struct kineto *k, const struct kin_event *e)
{
    struct kin_rec rec = {.ts = e->ts, .dur = e->dur, .tid = 0, .order = ORDER_GPU,
                          .corr = e->correlation};
    struct gw_event g = {0};
    define_stream(r, k, e->stream);
    struct kin_join *j = e->correlation ? kin_join_of(k, e->correlation, 1) : NULL;
    if (j) {
        j->stream = e->stream;
        if (j->call_stream)
            gw_map_put(&k->stream_alias, j->call_stream, j->stream);
    }
    if (e->cat == KIN_CAT_KERNEL) {
        rec.kind = GW_EV_GPU_KERNEL;
        g.u.gpu_kernel.correlation_id = e->correlation;
        g.u.gpu_kernel.device = e->device;
        g.u.gpu_kernel.stream_id = e->stream;
        g.u.gpu_kernel.shape_id = kernel_shape(r, k, e);
        if (j)
            j->shape = g.u.gpu_kernel.shape_id;
    } else if (e->cat == KIN_CAT_MEMCPY) {
        unsigned kind, src, dst;
        kin_copy_kinds(e->name, &kind, &src, &dst);
        rec.kind = GW_EV_GPU_MEMCPY;
        g.u.gpu_memcpy.correlation_id = e->correlation;
        g.u.gpu_memcpy.device = e->device;
        g.u.gpu_memcpy.stream_id = e->stream;
        g.u.gpu_memcpy.bytes = e->bytes;
        g.u.gpu_memcpy.copy_kind = kind;
        g.u.gpu_memcpy.src_kind = src;
        g.u.gpu_memcpy.dst_kind = dst;
        if (j) {
            j->bytes = e->bytes;
            j->copy_kind = (uint8_t)kind;
            j->src_kind = (uint8_t)src;
            j->dst_kind = (uint8_t)dst;
            j->has_copy = 1;
        }
    } else {
        const char *open = strchr(e->name, '(');
        rec.kind = GW_EV_GPU_MEMSET;
        g.u.gpu_memset.correlation_id = e->correlation;
        g.u.gpu_memset.device = e->device;
        g.u.gpu_memset.stream_id = e->stream;
        g.u.gpu_memset.bytes = e->bytes;
        g.u.gpu_memset.memory_kind = open ? kin_memory_kind(open + 1, strcspn(open + 1, ")"))
                                          : GW_GPU_MEM_UNKNOWN;
        if (j)
            j->bytes = e->bytes;
    }
    memcpy(rec.u, &g.u, sizeof rec.u);
    add(k, &rec);
}

/* A cuda_sync record: the stream a sync call waited for; for a stream's wait on an event,
 * the event (named by the correlation of the cudaEventRecord that recorded it) and the
 * stream that record was on. */
static void map_sync(struct kineto *k, const struct kin_event *e)
{
    struct kin_join *j = e->correlation ? kin_join_of(k, e->correlation, 1) : NULL;
    if (!j)
        return;
    if (e->stream != UINT32_MAX)
        j->stream = e->stream;
    if (e->wait_corr) {
        j->event = e->wait_corr;
        struct kin_join *rec = kin_join_of(k, e->wait_corr, 1);
        if (rec) {
            rec = kin_join_of(k, e->wait_corr, 0);  /* (the first may have moved) */
            rec->event = e->wait_corr;
            rec->stream = e->wait_stream;
        }
    }
}

static void range(struct gw_reader *r, struct kineto *k, const struct kin_event *e,
                  int kind, uint64_t ts, uint64_t range_id, uint64_t dur)
{
    const char *name = e->name ? e->name : "";
    size_t len = e->name_len;
    if (strncmp(name, "ProfilerStep#", 13) == 0)
        len = 12;
    struct kin_rec rec = {.ts = ts, .tid = host_tid(e), .kind = (uint16_t)kind,
                          .order = kind == GW_EV_RANGE_POP || kind == GW_EV_RANGE_END
                                       ? ORDER_POP : ORDER_PUSH};
    struct gw_event n = {0};
    n.u.nvtx.name_id = len ? kin_string(r, k, name, len) : 0;
    n.u.nvtx.range_id = range_id;
    memcpy(rec.u, &n.u, sizeof rec.u);
    /* at one time, ranges nest by length: the longer (outer) one is pushed first and
     * popped last */
    rec.tie = rec.order == ORDER_PUSH ? UINT64_MAX - dur : dur;
    add(k, &rec);
}

void kin_map_event(struct gw_reader *r, struct kineto *k)
{
    const struct kin_event *e = &k->ev;
    if (!e->has_ts || !e->name)
        return;
    switch (e->cat) {
    case KIN_CAT_RUNTIME:
    case KIN_CAT_DRIVER:
        if (e->ph == 'X')
            map_call(r, k, e);
        return;
    case KIN_CAT_KERNEL:
    case KIN_CAT_MEMCPY:
    case KIN_CAT_MEMSET:
        if (e->ph == 'X')
            map_gpu(r, k, e);
        return;
    case KIN_CAT_SYNC:
        map_sync(k, e);
        return;
    case KIN_CAT_ANNOTATION:
    case KIN_CAT_CPU_OP:
        if (e->ph != 'X' || !e->pid_numeric || e->pid <= 0)
            return;
        if (e->cat == KIN_CAT_CPU_OP && strncmp(e->name, "ProfilerStep#", 13) != 0)
            return;
        if (!e->dur)  /* (an empty range would pop before it is pushed) */
            return;
        range(r, k, e, GW_EV_RANGE_PUSH, e->ts, 0, e->dur);
        range(r, k, e, GW_EV_RANGE_POP, e->ts + e->dur, 0, e->dur);
        return;
    case KIN_CAT_PYTHON:
        kin_py_map(r, k, e);
        return;
    case KIN_CAT_INSTANT:
    case KIN_CAT_OTHER:
        if (e->ph == 'i' && strcmp(e->name, "[memory]") == 0)
            kin_memory_map(k, e);
        return;
    case KIN_CAT_NVTX:
        if (e->ph == 'B')
            range(r, k, e, GW_EV_RANGE_PUSH, e->ts, 0, 0);
        else if (e->ph == 'E')
            range(r, k, e, GW_EV_RANGE_POP, e->ts, 0, 0);
        else if (e->ph == 'b')
            range(r, k, e, GW_EV_RANGE_START, e->ts, e->id, 0);
        else if (e->ph == 'e')
            range(r, k, e, GW_EV_RANGE_END, e->ts, e->id, 0);
        return;
    default:
        return;
    }
}

/* A stream a call names by gpuwatch's own id (its export) as the GPU records' id for it. */
static void alias_one(const struct kineto *k, uint64_t *stream)
{
    const uint64_t *gpu = *stream ? gw_map_get(&k->stream_alias, *stream) : NULL;
    if (gpu)
        *stream = *gpu;
}

static void alias_streams(const struct kineto *k, struct gw_event *ev)
{
    switch (ev->family) {
    case GW_FAM_LAUNCH: alias_one(k, &ev->u.launch.stream_id); break;
    case GW_FAM_COPY: alias_one(k, &ev->u.copy.stream_id); break;
    case GW_FAM_SET: alias_one(k, &ev->u.set.stream_id); break;
    case GW_FAM_SYNC: alias_one(k, &ev->u.sync.stream_id); break;
    default: break;
    }
}

/* A record into the event the reader hands out; a call gets what its GPU side showed. */
void kin_fill_event(struct gw_reader *r, struct kineto *k, const struct kin_rec *rec,
                    struct gw_event *ev)
{
    (void)r;
    memset(ev, 0, offsetof(struct gw_event, u));
    memset(&ev->u, 0, sizeof ev->u);
    ev->kind = (enum gw_event_kind)rec->kind;
    ev->tid = rec->tid;
    ev->ts_ns = rec->ts;
    ev->dur_ns = rec->dur;
    ev->offset = rec->seq;
    ev->family = -1;
    memcpy(&ev->u, rec->u, sizeof rec->u);
    ev->call_id = 0;
    ev->call_id_unsure = 0;
    if (rec->kind != GW_EV_CALL)
        return;
    ev->api_id = rec->api_id;
    ev->family = gw_api_family(rec->api_id);
    ev->call_id = rec->call_id;
    alias_streams(k, ev);
    const struct kin_join *j = rec->corr ? kin_join_of(k, rec->corr, 0) : NULL;
    if (!j)
        return;
    switch (ev->family) {
    case GW_FAM_LAUNCH:
        if (!ev->u.launch.stream_id)
            ev->u.launch.stream_id = j->stream;
        ev->u.launch.shape_id = j->shape;  /* what names the kernel: its GPU record's */
        break;
    case GW_FAM_COPY:
        if (!ev->u.copy.stream_id)
            ev->u.copy.stream_id = j->stream;
        if (!ev->u.copy.bytes)
            ev->u.copy.bytes = j->bytes;
        if (j->has_copy && !ev->u.copy.dir) {
            static const unsigned dirs[11] = {[GW_GPU_COPY_HTOD] = GW_COPY_HTOD,
                                              [GW_GPU_COPY_DTOH] = GW_COPY_DTOH,
                                              [GW_GPU_COPY_DTOD] = GW_COPY_DTOD,
                                              [GW_GPU_COPY_HTOH] = GW_COPY_HTOH,
                                              [GW_GPU_COPY_PTOP] = GW_COPY_PEER};
            ev->u.copy.dir = j->copy_kind < 11 ? dirs[j->copy_kind] : GW_COPY_UNKNOWN;
            unsigned host = j->copy_kind == GW_GPU_COPY_DTOH ? j->dst_kind : j->src_kind;
            ev->u.copy.host_kind = host == GW_GPU_MEM_PAGEABLE ? GW_HOST_PAGEABLE
                                   : host == GW_GPU_MEM_PINNED ? GW_HOST_PINNED
                                   : host == GW_GPU_MEM_MANAGED ? GW_HOST_MANAGED
                                                                : GW_HOST_NONE;
        }
        break;
    case GW_FAM_SET:
        if (!ev->u.set.stream_id)
            ev->u.set.stream_id = j->stream;
        if (!ev->u.set.bytes)
            ev->u.set.bytes = j->bytes;
        break;
    case GW_FAM_SYNC:
        if (!ev->u.sync.stream_id)
            ev->u.sync.stream_id = j->stream;
        if (!ev->u.sync.event)
            ev->u.sync.event = j->event;
        if (ev->api_id == GW_API_cuEventRecord && !ev->u.sync.event)
            ev->u.sync.event = rec->corr;
        break;
    default:
        break;
    }
}
