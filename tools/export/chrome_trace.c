/*
 * A run as Chrome trace-event JSON (what Perfetto UI and chrome://tracing open): one
 * process per trace file, its host threads with every driver call as a slice, NVTX ranges
 * on their threads, one track per device stream with the GPU's kernels, copies and
 * memsets, a flow from each call to the GPU work it issued (bind_id = the call id), counter
 * tracks (device memory held, capacity and others' share; pinned host memory; GPU busy per
 * 10 ms; the CPU use of the traced threads and of the worker processes) and the findings on
 * a track of their own over the time their evidence covers.
 *
 * Each file is read once, in file order: the viewers sort by time. What is kept while
 * reading is bounded by what is in flight (correlations not yet matched, open NVTX ranges,
 * live allocations) plus one number per 10 ms of run for the busy counter.
 */
#include "chrome_trace.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "steps.h"
#include "gw_map.h"
#include "json_writer.h"
#include "text_cache.h"
#include "trace_reader.h"

/* Synthetic track ids: GPU streams and the findings, apart from any kernel thread id. */
#define TRACK_GPU_BASE 1000000000u
#define TRACK_FINDINGS 2000000000u
#define BUSY_BIN_NS 10000000ull       /* GPU busy counter: one value per 10 ms */
#define CORR_SLOTS (1u << 16)         /* correlations in flight (CUPTI numbers them in order) */
#define MEMCPY_KINDS 11               /* CUPTI's copy kinds (PtoP 10), enum gw_gpu_copy_kind */
#define MEMORY_KINDS 6                /* CUPTI's memory kinds (managed 5), enum gw_gpu_memory_kind */

struct corr_slot {
    uint64_t correlation, call_id;    /* call_id 0: empty */
};

struct export {
    struct gw_json *j;
    int kineto;                       /* Kineto's layout (gw_export_kineto) */
    struct gw_reader *r;
    const struct an_trace *trace;
    uint32_t pid;
    uint64_t origin;                  /* trace clock of ts 0 (the run's earliest start) */
    struct corr_slot *corr;
    struct gw_map tracks;             /* GPU track id -> 1 once named */
    uint64_t track_last;              /* the track named or found named last (0: none) */
    struct gw_map threads;            /* host tid -> 1 once named */
    uint32_t named_last;              /* the thread named or found named last (0: none) */
    struct gw_map live, pinned;       /* device / pinned pointer -> bytes (0: freed) */
    uint64_t held, pinned_held;
    struct gw_map range_names;        /* NVTX start/end range id -> name string id */
    uint64_t *busy;                   /* GPU busy ns per BUSY_BIN_NS from the trace's start */
    size_t nbusy;
    struct gw_map cpu_ts, cpu_ns;     /* sampled thread -> its previous sample */
    uint64_t proc_ts, proc_desc_ns;   /* the previous process sample (0: none) */
    /* copy records' names by kind, source and destination memory, made when first needed */
    char memcpy_names[MEMCPY_KINDS][MEMORY_KINDS][MEMORY_KINDS][48];
    char memcpy_other[96];
    /* ProfilerStep#N spans: the analysis's step marker found again (an_steps.marker_*) */
    const struct an_steps *steps;
    uint64_t step_start, nsteps;      /* the latest boundary (0: none yet), steps so far */
    uint32_t step_tid;                /* the thread of the latest boundary */
    /* the heads of calls' and GPU records' events and kernels' names, rendered once each
     * (keys: cache_key) with the scratch writer */
    struct gw_text_cache texts;
    struct gw_json *scratch;
};

/* What a text in x->texts is: the head of a call's event on a thread (sub: the entry
 * point), of a GPU record's on a track (sub: its name's, below), a launch's kernel member. */
enum cached_text { CACHED_CALL_HEAD = 1, CACHED_GPU_HEAD, CACHED_KERNEL_MEMBER };
/* A GPU record's name in a key's sub: a kernel's shape id, or a copy's or memset's kinds. */
#define SUB_SHAPE 0u
#define SUB_MEMCPY (1u << 28)
#define SUB_MEMSET (2u << 28)
#define SUB_LIMIT (1u << 28)

/* 0 (kept nowhere: rendered each time) when track or sub do not fit their bits. */
static uint64_t cache_key(enum cached_text what, uint64_t track, uint64_t sub)
{
    if (track >= SUB_LIMIT || sub >= (1ull << 32))
        return 0;
    return (uint64_t)what << 60 | track << 32 | sub;
}

static int64_t since_origin(const struct export *x, uint64_t ts_ns)
{
    return (int64_t)(ts_ns - x->origin);
}

/* {"ph":…, "name":…, "cat":…, "pid":…, "tid":… — the caller adds "ts" and the rest and
 * closes it. ph and cat are ours; name_plain: the name is one of our tables' too (an
 * entry point's), so it needs no escaping. */
static void event_head(struct export *x, const char *ph, const char *name, int name_plain,
                       const char *cat, uint64_t tid)
{
    struct gw_json *j = x->j;
    gw_json_object(j);
    GW_JSON_KEY(j, "ph");
    gw_json_str_plain(j, ph, strlen(ph));
    GW_JSON_KEY(j, "name");
    if (name_plain)
        gw_json_str_plain(j, name, strlen(name));
    else
        gw_json_str(j, name);
    if (cat) {
        GW_JSON_KEY(j, "cat");
        gw_json_str_plain(j, cat, strlen(cat));
    }
    GW_JSON_KEY(j, "pid");
    gw_json_u64(j, x->pid);
    GW_JSON_KEY(j, "tid");
    gw_json_u64(j, tid);
}

static void event_ts(struct export *x, uint64_t ts_ns)
{
    GW_JSON_KEY(x->j, "ts");
    gw_json_ns_as_us(x->j, since_origin(x, ts_ns));
}

static void event_named(struct export *x, const char *ph, const char *name, int name_plain,
                        const char *cat, uint64_t tid, uint64_t ts_ns)
{
    gw_json_newline(x->j);
    event_head(x, ph, name, name_plain, cat, tid);
    event_ts(x, ts_ns);
}

/* The members one of x->texts holds, rendered by render(x, arg) into the scratch writer the
 * first time; NULL when it cannot be kept (then the caller renders it each time). */
static const char *cached_members(struct export *x, uint64_t key, size_t *n,
                                  void (*render)(struct export *, const void *), const void *arg)
{
    if (!key)
        return NULL;
    const char *text = gw_text_cache_get(&x->texts, key, n);
    if (text)
        return text;
    if (!x->scratch && !(x->scratch = malloc(sizeof *x->scratch)))
        return NULL;
    gw_json_init(x->scratch, NULL);
    struct gw_json *j = x->j;
    x->j = x->scratch;
    render(x, arg);
    x->j = j;
    text = gw_json_text(x->scratch, n);
    if (*n < 2)  /* (failed: it outgrew the buffer) */
        return NULL;
    /* the members: without the scratch object's opening brace */
    return gw_text_cache_put(&x->texts, key, text + 1, --*n);
}

struct head_args {
    const char *ph, *name, *cat;
    int name_plain;
    uint64_t tid;
};

static void render_head(struct export *x, const void *arg)
{
    const struct head_args *h = arg;
    event_head(x, h->ph, h->name, h->name_plain, h->cat, h->tid);
}

/* event_named for the events of one key: their head, render(x, arg), is rendered once. */
static void event_cached(struct export *x, uint64_t key,
                         void (*render)(struct export *, const void *), const void *arg,
                         uint64_t ts_ns)
{
    size_t n;
    const char *members = cached_members(x, key, &n, render, arg);
    gw_json_newline(x->j);
    if (members) {
        gw_json_object(x->j);
        gw_json_members(x->j, members, n);
    } else {
        render(x, arg);
    }
    event_ts(x, ts_ns);
}

static void event(struct export *x, const char *ph, const char *name, const char *cat,
                  uint64_t tid, uint64_t ts_ns)
{
    event_named(x, ph, name, 0, cat, tid, ts_ns);
}

static void duration(struct export *x, uint64_t dur_ns)
{
    GW_JSON_KEY(x->j, "dur");
    gw_json_ns_as_us(x->j, (int64_t)dur_ns);
}

static void metadata(struct export *x, const char *what, uint64_t tid, const char *name)
{
    struct gw_json *j = x->j;
    gw_json_newline(j);
    gw_json_object(j);
    GW_JSON_KEY(j, "ph");
    gw_json_str(j, "M");
    GW_JSON_KEY(j, "name");
    gw_json_str(j, what);
    GW_JSON_KEY(j, "pid");
    gw_json_u64(j, x->pid);
    GW_JSON_KEY(j, "tid");
    gw_json_u64(j, tid);
    GW_JSON_KEY(j, "args");
    gw_json_object(j);
    GW_JSON_KEY(j, "name");
    gw_json_str(j, name);
    gw_json_object_end(j);
    gw_json_object_end(j);
}

static void counter(struct export *x, const char *name, uint64_t ts_ns, const char *series,
                    double value)
{
    event(x, "C", name, NULL, 0, ts_ns);
    GW_JSON_KEY(x->j, "args");
    gw_json_object(x->j);
    gw_json_key(x->j, series);
    gw_json_double(x->j, value);
    gw_json_object_end(x->j);
    gw_json_object_end(x->j);
}

static const char *string_of(const struct export *x, uint64_t id)
{
    const char *s = id ? gw_reader_string(x->r, id, NULL) : NULL;
    return s ? s : "";
}

static void name_thread(struct export *x, uint32_t tid)
{
    if (tid == x->named_last)  /* (calls come in runs from one thread) */
        return;
    x->named_last = tid;
    if (gw_map_get(&x->threads, tid))
        return;
    gw_map_put(&x->threads, tid, 1);
    const char *name = gw_reader_thread_name(x->r, tid);
    char text[160];
    snprintf(text, sizeof text, "%s%sthread %" PRIu32, name ? name : "", name ? " · " : "",
             tid);
    metadata(x, "thread_name", tid, text);
}

static uint64_t gpu_track(struct export *x, uint64_t device, uint64_t cupti_stream)
{
    uint64_t tid = TRACK_GPU_BASE + (device & 0xFF) * 65536u + (cupti_stream & 0xFFFF);
    if (tid == x->track_last)  /* (records come in runs on one stream) */
        return tid;
    x->track_last = tid;
    if (!gw_map_get(&x->tracks, tid)) {
        gw_map_put(&x->tracks, tid, 1);
        char text[96];
        snprintf(text, sizeof text, "GPU %" PRIu64 " stream %" PRIu64, device, cupti_stream);
        metadata(x, "thread_name", tid, text);
    }
    return tid;
}

static void add_busy(struct export *x, uint64_t ts, uint64_t dur)
{
    uint64_t start = x->trace->hdr.start_ns;
    if (ts < start || !dur)
        return;
    uint64_t from = ts - start, to = from + dur;
    size_t last = (size_t)((to - 1) / BUSY_BIN_NS);
    if (last >= x->nbusy) {
        size_t n = last + 1 > 2 * x->nbusy ? last + 1 : 2 * x->nbusy;
        uint64_t *grown = realloc(x->busy, n * sizeof *grown);
        if (!grown)
            return;
        memset(grown + x->nbusy, 0, (n - x->nbusy) * sizeof *grown);
        x->busy = grown;
        x->nbusy = n;
    }
    for (size_t b = (size_t)(from / BUSY_BIN_NS); b <= last; b++) {
        uint64_t lo = b * BUSY_BIN_NS, hi = lo + BUSY_BIN_NS;
        uint64_t a = from > lo ? from : lo, z = to < hi ? to : hi;
        x->busy[b] += z - a;
    }
}

/* The flow from a call to its GPU work: bind_id is the call id; out: the call's end. */
static void flow(struct export *x, const struct gw_json_number *call_id, int out)
{
    GW_JSON_KEY(x->j, "bind_id");
    gw_json_number(x->j, call_id);
    if (out)
        GW_JSON_KEY(x->j, "flow_out");
    else
        GW_JSON_KEY(x->j, "flow_in");
    gw_json_bool(x->j, 1);
}

/* A call's stream: "stream" in Kineto's layout is what marks GPU work, never a call's. */
static void stream_key(struct export *x)
{
    if (x->kineto)
        GW_JSON_KEY(x->j, "gpuwatch_stream");
    else
        GW_JSON_KEY(x->j, "stream");
}

static void render_kernel_member(struct export *x, uint64_t shape)
{
    const char *kernel = gw_reader_kernel_name(x->r, shape);
    if (kernel) {
        GW_JSON_KEY(x->j, "kernel");
        gw_json_str(x->j, kernel);
    }
}

/* (rendered into an object of its own, as cached_members wants) */
static void render_kernel(struct export *x, const void *shape)
{
    gw_json_object(x->j);
    render_kernel_member(x, *(const uint64_t *)shape);
}

static void call_args(struct export *x, const struct gw_event *ev,
                      const struct gw_json_number *call_id)
{
    struct gw_json *j = x->j;
    GW_JSON_KEY(j, "args");
    gw_json_object(j);
    if (x->kineto)
        GW_JSON_KEY(j, "correlation");
    else
        GW_JSON_KEY(j, "call_id");
    gw_json_number(j, call_id);
    if (ev->result) {
        GW_JSON_KEY(j, "result");
        gw_json_str(j, gw_cu_result_name(ev->result));
    }
    switch (ev->family) {
    case GW_FAM_LAUNCH: {
        uint64_t shape = ev->u.launch.shape_id;
        size_t n;
        const char *member = cached_members(x, cache_key(CACHED_KERNEL_MEMBER, 0, shape), &n,
                                            render_kernel, &shape);
        if (member)
            gw_json_members(j, member, n);
        else
            render_kernel_member(x, shape);
        stream_key(x);
        gw_json_u64(j, ev->u.launch.stream_id);
        break;
    }
    case GW_FAM_COPY:
        GW_JSON_KEY(j, "bytes");
        gw_json_u64(j, ev->u.copy.bytes);
        GW_JSON_KEY(j, "direction");
        gw_json_str(j, gw_copy_dir_name(ev->u.copy.dir));
        GW_JSON_KEY(j, "host_memory");
        gw_json_str(j, gw_host_kind_name(ev->u.copy.host_kind));
        stream_key(x);
        gw_json_u64(j, ev->u.copy.stream_id);
        break;
    case GW_FAM_SET:
        GW_JSON_KEY(j, "bytes");
        gw_json_u64(j, ev->u.set.bytes);
        stream_key(x);
        gw_json_u64(j, ev->u.set.stream_id);
        break;
    case GW_FAM_ALLOC:
        GW_JSON_KEY(j, "bytes");
        gw_json_u64(j, ev->u.alloc.bytes);
        GW_JSON_KEY(j, "address");  /* (read back: the free of the same block pairs with it) */
        gw_json_u64(j, ev->u.alloc.ptr);
        break;
    case GW_FAM_FREE:
        GW_JSON_KEY(j, "address");
        gw_json_u64(j, ev->u.memfree.ptr);
        break;
    case GW_FAM_HOSTMEM:
        GW_JSON_KEY(j, "bytes");
        gw_json_u64(j, ev->u.hostmem.bytes);
        break;
    case GW_FAM_SYNC:
        stream_key(x);
        gw_json_u64(j, ev->u.sync.stream_id);
        break;
    default:
        break;
    }
    gw_json_object_end(j);
}

/* Memory held through a map of live pointers (bytes; 0 once freed): an allocation adds, a
 * free of a pointer it knows gives back. 1 when *held changed. */
static int held_alloc(struct gw_map *live, uint64_t *held, uint64_t ptr, uint64_t bytes)
{
    gw_map_put(live, ptr, bytes);
    *held += bytes;
    return 1;
}

static int held_free(struct gw_map *live, uint64_t *held, uint64_t ptr)
{
    uint64_t *bytes = gw_map_get(live, ptr);
    if (!bytes || !*bytes)
        return 0;
    *held -= *bytes;
    *bytes = 0;
    return 1;
}

static void on_memory(struct export *x, const struct gw_event *ev)
{
    if (ev->result)
        return;
    uint64_t end = ev->ts_ns + ev->dur_ns;
    if ((ev->family == GW_FAM_ALLOC &&
         held_alloc(&x->live, &x->held, ev->u.alloc.ptr, ev->u.alloc.bytes)) ||
        (ev->family == GW_FAM_FREE && held_free(&x->live, &x->held, ev->u.memfree.ptr)))
        counter(x, "device memory", end, "held", (double)x->held);
    if (ev->family != GW_FAM_HOSTMEM)
        return;
    int alloc = ev->api_id == GW_API_cuMemAllocHost_v2 || ev->api_id == GW_API_cuMemHostAlloc;
    if ((alloc && held_alloc(&x->pinned, &x->pinned_held, ev->u.hostmem.ptr,
                             ev->u.hostmem.bytes)) ||
        (ev->api_id == GW_API_cuMemFreeHost &&
         held_free(&x->pinned, &x->pinned_held, ev->u.hostmem.ptr)))
        counter(x, "pinned host memory", end, "bytes", (double)x->pinned_held);
}

/* A step boundary at ts on tid: the step since the previous one becomes ProfilerStep#N
 * (the name PyTorch's profiler gives its steps, which HTA and TensorBoard group by). */
static void step_boundary(struct export *x, uint32_t tid, uint64_t ts)
{
    if (x->step_start && ts > x->step_start) {
        char name[48];
        snprintf(name, sizeof name, "ProfilerStep#%" PRIu64, x->nsteps++);
        event(x, "X", name, "user_annotation", tid, x->step_start);
        /* (a nanosecond short of the next step: viewers that add ts and dur in floating
         * point, TensorBoard's profiler plugin among them, would see the two overlap) */
        duration(x, ts - x->step_start > 1 ? ts - x->step_start - 1 : 1);
        gw_json_object_end(x->j);
    }
    x->step_start = ts;
    x->step_tid = tid;
}

static void find_step_boundary(struct export *x, const struct gw_event *ev)
{
    const struct an_steps *s = x->steps;
    if (!s || s->source == AN_STEPS_NONE)
        return;
    switch (s->marker_tier) {
    case AN_TIER_NVTX:
        if ((ev->kind == GW_EV_RANGE_PUSH || ev->kind == GW_EV_RANGE_START ||
             ev->kind == GW_EV_MARK) && ev->u.nvtx.name_id == s->marker_name)
            step_boundary(x, ev->tid, ev->ts_ns);
        break;
    case AN_TIER_KERNEL:
        if (ev->kind == GW_EV_CALL && ev->family == GW_FAM_LAUNCH &&
            ev->u.launch.shape_id == s->marker_name)
            step_boundary(x, ev->tid, ev->ts_ns);
        break;
    case AN_TIER_H2D:
        if (ev->kind == GW_EV_CALL && ev->api_id == s->marker_api)
            step_boundary(x, ev->tid, ev->ts_ns);
        break;
    default:  /* a drain: its end */
        if (ev->kind == GW_EV_CALL && ev->api_id == s->marker_api)
            step_boundary(x, ev->tid, ev->ts_ns + ev->dur_ns);
    }
}

static void on_call(struct export *x, const struct gw_event *ev)
{
    name_thread(x, ev->tid);
    uint64_t key = cache_key(CACHED_CALL_HEAD, ev->tid, ev->api_id);
    const char *name = gw_api_name(ev->api_id);
    struct head_args head = {.ph = "X", .name = name ? name : "unknown call", .name_plain = 1,
                             .cat = "cuda_driver", .tid = ev->tid};
    event_cached(x, key, render_head, &head, ev->ts_ns);
    duration(x, ev->dur_ns);
    struct gw_json_number call_id;
    gw_json_number_of(&call_id, ev->call_id);
    if (ev->family == GW_FAM_LAUNCH || ev->family == GW_FAM_COPY || ev->family == GW_FAM_SET)
        flow(x, &call_id, 1);
    call_args(x, ev, &call_id);
    gw_json_object_end(x->j);
    on_memory(x, ev);
}

/* "Memcpy HtoD (pageable → device)": made once per kinds (a copy record is formatted
 * millions of times otherwise). */
static const char *memcpy_name(struct export *x, unsigned kind, unsigned src, unsigned dst)
{
    if (kind >= MEMCPY_KINDS || src >= MEMORY_KINDS || dst >= MEMORY_KINDS) {
        snprintf(x->memcpy_other, sizeof x->memcpy_other, "Memcpy %s (%s \xE2\x86\x92 %s)",
                 gw_gpu_copy_kind_name(kind), gw_gpu_memory_kind_name(src),
                 gw_gpu_memory_kind_name(dst));
        return x->memcpy_other;
    }
    char *name = x->memcpy_names[kind][src][dst];
    if (!name[0])
        snprintf(name, sizeof x->memcpy_names[0][0][0], "Memcpy %s (%s \xE2\x86\x92 %s)",
                 gw_gpu_copy_kind_name(kind), gw_gpu_memory_kind_name(src),
                 gw_gpu_memory_kind_name(dst));
    return name;
}

/* A GPU record's event name (text: room for a memset's) and category. */
static void gpu_name(struct export *x, const struct gw_event *ev, char text[128],
                     struct head_args *head)
{
    if (ev->kind == GW_EV_GPU_KERNEL) {
        head->name = gw_reader_kernel_name(x->r, ev->u.gpu_kernel.shape_id);
        if (!head->name)
            head->name = "kernel";
        head->cat = "kernel";
    } else if (ev->kind == GW_EV_GPU_MEMCPY) {
        head->name = memcpy_name(x, ev->u.gpu_memcpy.copy_kind, ev->u.gpu_memcpy.src_kind,
                                 ev->u.gpu_memcpy.dst_kind);
        head->cat = "gpu_memcpy";
    } else {
        snprintf(text, 128, "Memset (%s)",
                 gw_gpu_memory_kind_name(ev->u.gpu_memset.memory_kind));
        head->name = text;
        head->cat = "gpu_memset";
    }
}

/* What names a GPU record's event on its track, as a cache key's sub. */
static uint64_t gpu_name_sub(const struct gw_event *ev)
{
    if (ev->kind == GW_EV_GPU_KERNEL)
        return ev->u.gpu_kernel.shape_id < SUB_LIMIT ? SUB_SHAPE + ev->u.gpu_kernel.shape_id
                                                      : UINT64_MAX;
    if (ev->kind == GW_EV_GPU_MEMCPY)
        return SUB_MEMCPY + (ev->u.gpu_memcpy.copy_kind & 0xFF) * 65536u +
               (ev->u.gpu_memcpy.src_kind & 0xFF) * 256u + (ev->u.gpu_memcpy.dst_kind & 0xFF);
    return SUB_MEMSET + (ev->u.gpu_memset.memory_kind & 0xFFFF);
}

/* (the cache's render: gpu_name is made only when the head is not kept yet) */
struct gpu_head {
    const struct gw_event *ev;
    uint64_t tid;
};

static void render_gpu_head(struct export *x, const void *arg)
{
    const struct gpu_head *g = arg;
    char text[128];
    struct head_args head = {.ph = "X", .tid = g->tid};
    gpu_name(x, g->ev, text, &head);
    render_head(x, &head);
}

static void on_gpu(struct export *x, const struct gw_event *ev)
{
    uint64_t correlation, device, stream;
    if (ev->kind == GW_EV_GPU_KERNEL) {
        correlation = ev->u.gpu_kernel.correlation_id;
        device = ev->u.gpu_kernel.device;
        stream = ev->u.gpu_kernel.stream_id;
    } else if (ev->kind == GW_EV_GPU_MEMCPY) {
        correlation = ev->u.gpu_memcpy.correlation_id;
        device = ev->u.gpu_memcpy.device;
        stream = ev->u.gpu_memcpy.stream_id;
    } else {
        correlation = ev->u.gpu_memset.correlation_id;
        device = ev->u.gpu_memset.device;
        stream = ev->u.gpu_memset.stream_id;
    }
    const struct corr_slot *slot = &x->corr[correlation & (CORR_SLOTS - 1)];
    uint64_t call_id = slot->call_id && slot->correlation == correlation ? slot->call_id : 0;
    uint32_t pid = x->pid;
    uint64_t tid;
    if (x->kineto) {  /* Kineto: the device is the process, the stream the thread */
        x->pid = (uint32_t)device;
        tid = stream;
    } else {
        tid = gpu_track(x, device, stream);
    }
    /* (a copy's kinds fit the sub's bits, a memset's too; the track is the device's and
     * stream's, which fit it unless device > 255 or stream > 65535) */
    uint64_t key = device < 256 && stream < 65536
        ? cache_key(CACHED_GPU_HEAD, device << 16 | stream, gpu_name_sub(ev))
        : 0;
    struct gpu_head g = {.ev = ev, .tid = tid};
    event_cached(x, key, render_gpu_head, &g, ev->ts_ns);
    x->pid = pid;
    duration(x, ev->dur_ns);
    struct gw_json_number call_text;
    if (call_id) {
        gw_json_number_of(&call_text, call_id);
        flow(x, &call_text, 0);
    }
    GW_JSON_KEY(x->j, "args");
    gw_json_object(x->j);
    GW_JSON_KEY(x->j, "correlation");
    /* Kineto links a call and its GPU work by one correlation: the call id is it */
    if (x->kineto && call_id)
        gw_json_number(x->j, &call_text);
    else
        gw_json_u64(x->j, correlation);
    if (x->kineto) {
        GW_JSON_KEY(x->j, "device");
        gw_json_u64(x->j, device);
        GW_JSON_KEY(x->j, "stream");
        gw_json_u64(x->j, stream);
    }
    if (call_id) {
        GW_JSON_KEY(x->j, "call_id");
        gw_json_number(x->j, &call_text);
    }
    if (ev->kind == GW_EV_GPU_MEMCPY || ev->kind == GW_EV_GPU_MEMSET) {
        GW_JSON_KEY(x->j, "bytes");
        gw_json_u64(x->j, ev->kind == GW_EV_GPU_MEMCPY ? ev->u.gpu_memcpy.bytes
                                                       : ev->u.gpu_memset.bytes);
    }
    gw_json_object_end(x->j);
    gw_json_object_end(x->j);
    add_busy(x, ev->ts_ns, ev->dur_ns);
}

static void on_nvtx(struct export *x, const struct gw_event *ev)
{
    name_thread(x, ev->tid);
    const char *name = string_of(x, ev->u.nvtx.name_id);
    switch (ev->kind) {
    case GW_EV_RANGE_PUSH:
        event(x, "B", name, "nvtx", ev->tid, ev->ts_ns);
        break;
    case GW_EV_RANGE_POP:
        event(x, "E", "", "nvtx", ev->tid, ev->ts_ns);
        break;
    case GW_EV_MARK:
        event(x, "i", name, "nvtx", ev->tid, ev->ts_ns);
        GW_JSON_KEY(x->j, "s");
        gw_json_str(x->j, "t");
        break;
    case GW_EV_RANGE_START:
        gw_map_put(&x->range_names, ev->u.nvtx.range_id, ev->u.nvtx.name_id);
        event(x, "b", name, "nvtx", ev->tid, ev->ts_ns);
        GW_JSON_KEY(x->j, "id");
        gw_json_u64(x->j, ev->u.nvtx.range_id);
        break;
    default: {  /* GW_EV_RANGE_END */
        uint64_t *id = gw_map_get(&x->range_names, ev->u.nvtx.range_id);
        event(x, "e", id ? string_of(x, *id) : "", "nvtx", ev->tid, ev->ts_ns);
        GW_JSON_KEY(x->j, "id");
        gw_json_u64(x->j, ev->u.nvtx.range_id);
        break;
    }
    }
    gw_json_object_end(x->j);
}

/* CPU use between two samples, as a share of one CPU. */
static void on_cpu(struct export *x, const struct gw_event *ev)
{
    if (ev->kind == GW_EV_CPU_THREAD) {
        uint64_t tid = ev->u.cpu_thread.tid;
        uint64_t *ts = gw_map_get(&x->cpu_ts, tid), *ns = gw_map_get(&x->cpu_ns, tid);
        if (ts && ns && ev->ts_ns > *ts && ev->u.cpu_thread.cpu_ns >= *ns) {
            char name[64];
            snprintf(name, sizeof name, "CPU thread %" PRIu64, tid);
            counter(x, name, ev->ts_ns, "cpus",
                    (double)(ev->u.cpu_thread.cpu_ns - *ns) / (double)(ev->ts_ns - *ts));
        }
        gw_map_put(&x->cpu_ts, tid, ev->ts_ns);
        gw_map_put(&x->cpu_ns, tid, ev->u.cpu_thread.cpu_ns);
        return;
    }
    uint64_t desc = ev->u.cpu_proc.descendants_cpu_ns;
    if (x->proc_ts && ev->ts_ns > x->proc_ts && desc >= x->proc_desc_ns)
        counter(x, "CPU worker processes", ev->ts_ns, "cpus",
                (double)(desc - x->proc_desc_ns) / (double)(ev->ts_ns - x->proc_ts));
    x->proc_ts = ev->ts_ns;
    x->proc_desc_ns = desc;
}

static void findings_track(struct export *x, const struct an_run *run)
{
    int named = 0;
    const struct an_findings *list = &run->findings;
    for (size_t i = 0; i < list->count; i++) {
        const struct an_finding *f = &list->items[i];
        if (f->pid != x->pid)
            continue;
        if (!named) {
            metadata(x, "thread_name", TRACK_FINDINGS, "gpuwatch findings");
            named = 1;
        }
        char name[224];
        snprintf(name, sizeof name, "%s: %s", f->id, f->title);
        uint64_t start = f->first_ts ? f->first_ts : x->trace->hdr.start_ns;
        uint64_t end = f->last_ts > start ? f->last_ts : start;
        event(x, "X", name, "gpuwatch_finding", TRACK_FINDINGS, start);
        duration(x, end - start);
        GW_JSON_KEY(x->j, "args");
        gw_json_object(x->j);
        GW_JSON_KEY(x->j, "id");
        gw_json_str(x->j, f->id);
        GW_JSON_KEY(x->j, "risk");
        gw_json_bool(x->j, f->risk);
        GW_JSON_KEY(x->j, "saving_ns");
        gw_json_u64(x->j, f->saving_ns);
        GW_JSON_KEY(x->j, "evidence");
        gw_json_str(x->j, f->evidence);
        GW_JSON_KEY(x->j, "change");
        gw_json_str(x->j, f->change);
        gw_json_object_end(x->j);
        gw_json_object_end(x->j);
    }
}

static void process_names(struct export *x)
{
    const struct gw_file_header *h = &x->trace->hdr;
    char name[256];
    int n = snprintf(name, sizeof name, "%.*s (pid %" PRIu32 ")", 80,
                     h->cmdline[0] ? h->cmdline : "process", h->pid);
    if (h->rank >= 0 && n > 0 && (size_t)n < sizeof name)
        snprintf(name + n, sizeof name - (size_t)n, " rank %" PRId32, h->rank);
    metadata(x, "process_name", 0, name);
    if (h->device_total_mem) {
        counter(x, "device memory", h->start_ns, "capacity", (double)h->device_total_mem);
        if (h->device_free_at_start && h->device_free_at_start <= h->device_total_mem)
            counter(x, "device memory", h->start_ns, "others",
                    (double)(h->device_total_mem - h->device_free_at_start));
    }
}

/* One trace's events that need nothing of the analysis (written while it runs: see
 * gw_export_begin): origin is the first trace's clock of ts 0, shift what to add to this
 * trace's clock to read that one. */
static int export_body(struct gw_json *j, const struct an_trace *t, uint64_t origin,
                       int64_t shift, int kineto)
{
    struct gw_reader *r;
    char err[512];
    if (gw_reader_open(t->path, &r, err, sizeof err) != 0) {
        fprintf(stderr, "gpuwatch export: %s\n", err);
        return -1;
    }
    /* (origin on this trace's own clock) */
    struct export x = {.j = j, .r = r, .trace = t, .pid = t->hdr.pid,
                       .origin = origin - (uint64_t)shift, .kineto = kineto};
    x.corr = calloc(CORR_SLOTS, sizeof *x.corr);
    if (!x.corr) {
        gw_reader_close(r);
        return -1;
    }
    gw_reader_load_defs(r);
    process_names(&x);
    struct gw_event ev;
    while (gw_reader_next(r, &ev) > 0) {
        switch (ev.kind) {
        case GW_EV_CALL:
            on_call(&x, &ev);
            break;
        case GW_EV_CORRELATION: {
            struct corr_slot *slot = &x.corr[ev.u.correlation.correlation_id & (CORR_SLOTS - 1)];
            slot->correlation = ev.u.correlation.correlation_id;
            slot->call_id = ev.u.correlation.call_id;
            break;
        }
        case GW_EV_GPU_KERNEL:
        case GW_EV_GPU_MEMCPY:
        case GW_EV_GPU_MEMSET:
            on_gpu(&x, &ev);
            break;
        case GW_EV_RANGE_PUSH:
        case GW_EV_RANGE_POP:
        case GW_EV_MARK:
        case GW_EV_RANGE_START:
        case GW_EV_RANGE_END:
            on_nvtx(&x, &ev);
            break;
        case GW_EV_CPU_THREAD:
        case GW_EV_CPU_PROC:
            on_cpu(&x, &ev);
            break;
        default:
            break;
        }
    }
    for (size_t b = 0; b < x.nbusy; b++) {
        double share = (double)x.busy[b] / (double)BUSY_BIN_NS;
        /* (summed over streams: work on several at once counts once, up to all of it) */
        counter(&x, "GPU busy", t->hdr.start_ns + b * BUSY_BIN_NS, "share",
                share > 1 ? 1 : share);
    }
    int damaged = gw_reader_stats(r)->damage_reports != 0;
    if (damaged)
        fprintf(stderr, "gpuwatch export: %s: %" PRIu64 " damage report(s): exported what is "
                "intact ('gpuwatch dump' names them)\n",
                t->path, gw_reader_stats(r)->damage_reports);
    free(x.corr);
    free(x.busy);
    free(x.scratch);
    gw_text_cache_free(&x.texts);
    gw_map_free(&x.tracks);
    gw_map_free(&x.threads);
    gw_map_free(&x.live);
    gw_map_free(&x.pinned);
    gw_map_free(&x.range_names);
    gw_map_free(&x.cpu_ts);
    gw_map_free(&x.cpu_ns);
    gw_reader_close(r);
    return 0;
}

/* One trace's events that need the analysis: ProfilerStep#N spans (the file read again
 * for the step marker the analysis chose, when it found steps) and the findings. */
static int export_tail(struct gw_json *j, const struct an_run *run, const struct an_trace *t,
                       uint64_t origin, int64_t shift, int kineto)
{
    struct export x = {.j = j, .trace = t, .pid = t->hdr.pid, .origin = origin - (uint64_t)shift,
                       .kineto = kineto, .steps = t->model ? &t->model->steps : NULL};
    int rc = 0;
    if (x.steps && x.steps->source != AN_STEPS_NONE) {
        char err[512];
        if (gw_reader_open(t->path, &x.r, err, sizeof err) != 0) {
            fprintf(stderr, "gpuwatch export: %s\n", err);
            rc = -1;
        } else {
            struct gw_event ev;
            while (gw_reader_next(x.r, &ev) > 0)
                find_step_boundary(&x, &ev);
            gw_reader_close(x.r);
            /* a step range's last step ends where it closed, with no boundary after it */
            if (x.steps->marker_tier == AN_TIER_NVTX)
                step_boundary(&x, x.step_tid, x.steps->last_end_ns);
        }
    }
    findings_track(&x, run);
    return rc;
}

/* What Kineto puts above its events: HTA reads the rank from distributedInfo. */
static void kineto_header(struct gw_json *j, const struct an_trace *t)
{
    const struct gw_file_header *h = &t->hdr;
    GW_JSON_KEY(j, "schemaVersion");
    gw_json_u64(j, 1);
    GW_JSON_KEY(j, "distributedInfo");
    gw_json_object(j);
    GW_JSON_KEY(j, "rank");
    gw_json_i64(j, h->rank >= 0 ? h->rank : 0);
    GW_JSON_KEY(j, "world_size");
    gw_json_i64(j, h->world_size > 0 ? h->world_size : 1);
    gw_json_object_end(j);
    GW_JSON_KEY(j, "deviceProperties");
    gw_json_array(j);
    if (h->device_ordinal >= 0) {
        gw_json_object(j);
        GW_JSON_KEY(j, "id");
        gw_json_i64(j, h->device_ordinal);
        GW_JSON_KEY(j, "name");
        gw_json_str_n(j, h->device_name, strnlen(h->device_name, sizeof h->device_name));
        GW_JSON_KEY(j, "totalGlobalMem");
        gw_json_u64(j, h->device_total_mem);
        gw_json_object_end(j);
    }
    gw_json_array_end(j);
}

struct gw_export {
    const struct an_run *run;
    struct gw_json *j;
    int kineto;
    size_t only;                 /* the one trace to write (SIZE_MAX: all of them) */
    uint64_t origin;
    int rc;
};

static int wanted(const struct gw_export *e, size_t i)
{
    return e->run->traces[i].readable && (e->only == SIZE_MAX || e->only == i);
}

struct gw_export *gw_export_begin(FILE *out, const struct an_run *run, int kineto, size_t only,
                                  int *rc)
{
    struct gw_export *e = calloc(1, sizeof *e);
    struct gw_json *j = malloc(sizeof *j);  /* (its buffer is 64 KiB) */
    if (!e || !j) {
        fprintf(stderr, "gpuwatch export: out of memory\n");
        free(e);
        free(j);
        *rc = -1;
        return NULL;
    }
    *e = (struct gw_export){.run = run, .j = j, .kineto = kineto, .only = only};
    /* (the run's earliest start, even for one of its traces: the ranks' files of one run
     * share a time axis, the first trace's host's clock, other hosts' aligned to it) */
    uint64_t origin = UINT64_MAX;
    size_t readable = 0;
    for (size_t i = 0; i < run->ntraces; i++)
        if (run->traces[i].readable) {
            readable += wanted(e, i);
            uint64_t start = run->traces[i].hdr.start_ns +
                             (uint64_t)an_run_clock_shift(run, &run->traces[i]);
            if (start < origin)
                origin = start;
        }
    if (kineto && readable != 1) {
        fprintf(stderr, "gpuwatch export: --format kineto writes one process per file "
                        "(HTA reads one file per rank): give one trace, not %zu\n", readable);
        free(j);
        free(e);
        *rc = -3;
        return NULL;
    }
    e->origin = origin == UINT64_MAX ? 0 : origin;
    gw_json_init(j, out);
    gw_json_object(j);
    GW_JSON_KEY(j, "displayTimeUnit");
    gw_json_str(j, "ns");
    GW_JSON_KEY(j, "otherData");
    gw_json_object(j);
    GW_JSON_KEY(j, "producer");
    gw_json_str(j, kineto ? "gpuwatch export --format kineto" : "gpuwatch export --format chrome");
    gw_json_object_end(j);
    for (size_t i = 0; kineto && i < run->ntraces; i++)
        if (wanted(e, i))
            kineto_header(j, &run->traces[i]);
    GW_JSON_KEY(j, "traceEvents");
    gw_json_array(j);
    *rc = 0;
    return e;
}

void gw_export_bodies(struct gw_export *e)
{
    const struct an_run *run = e->run;
    for (size_t i = 0; i < run->ntraces; i++) {
        if (e->only != SIZE_MAX && e->only != i)
            continue;
        if (!run->traces[i].readable) {
            fprintf(stderr, "gpuwatch export: %s\n", run->traces[i].error);
            e->rc = -1;
            continue;
        }
        if (export_body(e->j, &run->traces[i], e->origin,
                        an_run_clock_shift(run, &run->traces[i]), e->kineto) != 0)
            e->rc = -1;
    }
}

int gw_export_finish(struct gw_export *e)
{
    const struct an_run *run = e->run;
    struct gw_json *j = e->j;
    for (size_t i = 0; i < run->ntraces; i++)
        if (wanted(e, i) && export_tail(j, run, &run->traces[i], e->origin,
                                        an_run_clock_shift(run, &run->traces[i]),
                                        e->kineto) != 0)
            e->rc = -1;
    gw_json_newline(j);
    gw_json_array_end(j);
    gw_json_object_end(j);
    gw_json_newline(j);
    int rc = e->rc;
    if (gw_json_flush(j) != 0) {
        fprintf(stderr, "gpuwatch export: writing the output failed\n");
        rc = -2;
    }
    free(j);
    free(e);
    return rc;
}

static int export_run(FILE *out, const struct an_run *run, int kineto, size_t only)
{
    int rc;
    struct gw_export *e = gw_export_begin(out, run, kineto, only, &rc);
    if (!e)
        return rc;
    gw_export_bodies(e);
    return gw_export_finish(e);
}

int gw_export_chrome(FILE *out, const struct an_run *run)
{
    return export_run(out, run, 0, SIZE_MAX);
}

int gw_export_kineto(FILE *out, const struct an_run *run) { return export_run(out, run, 1, SIZE_MAX); }

int gw_export_kineto_trace(FILE *out, const struct an_run *run, size_t index)
{
    return export_run(out, run, 1, index);
}
