/*
 * Random training-like runs for the analyzer's property tests (test_properties.c) and its
 * structure-aware fuzzer (fuzz_model.c): bytes drive a small simulated process (three
 * host threads, two devices, three streams that run their work in order) through the
 * events a converted trace holds, with the flags event_convert.c gives each call. A run is
 * a template of operations repeated many times, so that steps, warm-up and a steady state
 * exist, with extra operations between repetitions (pauses, OOM storms, lost records) so
 * that they are not perfect. Any byte string is a valid run: bytes past the end read as 0.
 */
#ifndef GPUWATCH_TESTS_ANALYZE_RANDOM_RUN_H
#define GPUWATCH_TESTS_ANALYZE_RANDOM_RUN_H

#include "synth.h"

#define RR_THREADS 3
#define RR_STREAMS 3          /* stream ids 1..3; stream 3 runs on device 1, the others on 0 */
#define RR_LIVE 64            /* device allocations the generator remembers to free */
#define RR_CAPACITY (1ull << 30)
#define RR_QUEUE_NS (500 * MS) /* a stream runs at most this far ahead of its host */

struct rr_bytes {
    const uint8_t *p;
    size_t n, at;
};

/* The bytes of a seed's run: xorshift from seed x golden ratio + salt (a test of its own
 * draws other runs from the same seeds with another salt). */
static inline void rr_seed_bytes(uint64_t seed, uint64_t salt, uint8_t *bytes, size_t n)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + salt;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes[i] = (uint8_t)(x >> 24);
    }
}

static inline unsigned rr_byte(struct rr_bytes *in)
{
    return in->at < in->n ? in->p[in->at++] : 0;
}

struct rr_block {
    uint64_t ptr, bytes;
    uint8_t mem_kind;     /* enum an_mem_kind */
};

struct rr {
    struct synth s;
    uint64_t now[RR_THREADS];
    uint64_t gpu_end[RR_STREAMS + 1];
    uint8_t hole[RR_THREADS];     /* the thread's next event follows lost records */
    struct rr_block live[RR_LIVE];
    size_t nlive;
    uint64_t live_bytes;
    uint64_t pinned[8];
    size_t npinned;
    uint64_t next_ptr;
    /* the start of the latest call: calls are made in time order, so that what a call
     * waits for is the work issued before it, as on a real GPU */
    uint64_t latest_start;
};

static inline uint32_t rr_device(unsigned stream)
{
    return stream == 3 ? 1 : 0;
}

/* A host call [now, now + dur) on thread t; advances its clock. */
static inline struct an_ev *rr_call(struct rr *r, unsigned t, uint8_t kind, unsigned api,
                                    uint64_t dur, uint8_t flags)
{
    struct an_ev e = {0};
    e.ts = r->now[t];
    e.end = e.ts + dur;
    e.tid = 100 + t;
    e.api = (uint16_t)api;
    e.kind = kind;
    e.flags = flags;
    e.after_hole = r->hole[t];
    r->hole[t] = 0;
    synth_push(&r->s, &e);
    r->now[t] += dur;
    r->latest_start = e.ts;
    return &r->s.ev[r->s.n - 1];
}

/* Work issued at `issued` on a stream for dur: its record (when the run has GPU records);
 * returns its end. */
static inline uint64_t rr_gpu(struct rr *r, uint8_t kind, unsigned stream, uint64_t issued,
                              uint64_t dur, uint8_t dir, uint8_t host_kind, uint64_t bytes)
{
    uint64_t start = issued > r->gpu_end[stream] ? issued : r->gpu_end[stream];
    r->gpu_end[stream] = start + dur;
    if (r->s.gpu_records) {
        struct an_ev e = {0};
        e.ts = start;
        e.end = start + dur;
        e.kind = kind;
        e.tid = rr_device(stream);
        e.stream = stream;
        e.dir = dir;
        e.host_kind = host_kind;
        e.bytes = bytes;
        synth_push(&r->s, &e);
    }
    return start + dur;
}

/* When every stream (or the one given) has run what it was given. */
static inline uint64_t rr_done(const struct rr *r, unsigned stream)
{
    if (stream)
        return r->gpu_end[stream];
    uint64_t end = 0;
    for (unsigned s = 1; s <= RR_STREAMS; s++)
        if (r->gpu_end[s] > end)
            end = r->gpu_end[s];
    return end;
}

/* Host time from now until `until` (0 when it is past), plus a call's own cost. */
static inline uint64_t rr_wait(const struct rr *r, unsigned t, uint64_t until, uint64_t own)
{
    return (until > r->now[t] ? until - r->now[t] : 0) + own;
}

static inline uint64_t rr_copy_ns(uint64_t bytes, int pageable)
{
    return 2 * US + bytes / (pageable ? 5 : 20);  /* 5 or 20 GB/s: bytes per ns */
}

static inline void rr_launch(struct rr *r, unsigned t, unsigned stream, unsigned b)
{
    int graph = b % 13 == 0;
    uint64_t host = (2 + b % 20) * US;
    /* a full queue: the launch waits until the stream is within RR_QUEUE_NS of the host */
    if (r->gpu_end[stream] > r->now[t] + RR_QUEUE_NS)
        host += r->gpu_end[stream] - r->now[t] - RR_QUEUE_NS;
    struct an_ev *e = rr_call(r, t, AN_LAUNCH,
                              graph ? GW_API_cuGraphLaunch : GW_API_cuLaunchKernel, host,
                              graph ? 0 : AN_F_KERNEL);
    e->stream = stream;
    e->key = graph ? 0 : 1 + b % 6;
    size_t before = r->s.n;
    rr_gpu(r, AN_GPU_KERNEL, stream, e->end, US << (b % 12), 0, 0, 0);
    if (graph && r->s.n > before)
        r->s.ev[r->s.n - 1].flags |= AN_F_GRAPH_NODE;  /* CUPTI: a graph ran it */
}

/* A host-to-device copy: how 0 pinned async, 1 pageable async, 2 synchronous. */
static inline void rr_h2d_copy(struct rr *r, unsigned t, unsigned stream, uint64_t bytes,
                               unsigned how)
{
    uint8_t host = how == 0 ? GW_HOST_PINNED : GW_HOST_PAGEABLE;
    uint64_t issued = r->now[t];
    if (how == 2)
        issued = rr_done(r, 0) > issued ? rr_done(r, 0) : issued;  /* the legacy stream */
    uint64_t end = rr_gpu(r, AN_GPU_COPY, stream, issued, rr_copy_ns(bytes, how != 0),
                          GW_COPY_HTOD, host, bytes);
    struct an_ev *e;
    if (how == 0)
        e = rr_call(r, t, AN_COPY, GW_API_cuMemcpyHtoDAsync_v2, 3 * US, AN_F_ASYNC_API);
    else if (how == 1)
        e = rr_call(r, t, AN_COPY, GW_API_cuMemcpyHtoDAsync_v2, rr_wait(r, t, end, US),
                    AN_F_ASYNC_API | AN_F_BLOCKING);
    else
        e = rr_call(r, t, AN_COPY, GW_API_cuMemcpyHtoD_v2, rr_wait(r, t, end, US),
                    AN_F_BLOCKING | AN_F_DRAINS | AN_F_ALL_STREAMS);
    e->stream = how == 2 ? 0 : stream;
    e->dir = GW_COPY_HTOD;
    e->host_kind = host;
    e->bytes = bytes;
}

static inline void rr_h2d(struct rr *r, unsigned t, unsigned stream, unsigned b)
{
    rr_h2d_copy(r, t, stream, 1024ull << (b % 15), (b >> 4) % 3);
}

/* .item() (4 bytes) or a larger result to pageable memory: waits for the stream. */
static inline void rr_d2h(struct rr *r, unsigned t, unsigned stream, unsigned b)
{
    uint64_t bytes = b & 1 ? 4 : 4096ull << (b % 8);
    int sync = (b >> 1) % 4 == 0;
    uint64_t issued = sync ? rr_done(r, 0) : r->now[t];
    if (issued < r->now[t])
        issued = r->now[t];
    uint64_t end = rr_gpu(r, AN_GPU_COPY, stream, issued, rr_copy_ns(bytes, 1), GW_COPY_DTOH,
                          GW_HOST_PAGEABLE, bytes);
    struct an_ev *e =
        sync ? rr_call(r, t, AN_COPY, GW_API_cuMemcpyDtoH_v2, rr_wait(r, t, end, US),
                       AN_F_BLOCKING | AN_F_DRAINS | AN_F_ALL_STREAMS)
             : rr_call(r, t, AN_COPY, GW_API_cuMemcpyDtoHAsync_v2, rr_wait(r, t, end, US),
                       AN_F_ASYNC_API | AN_F_BLOCKING | AN_F_DRAINS);
    e->stream = sync ? 0 : stream;
    e->dir = GW_COPY_DTOH;
    e->host_kind = GW_HOST_PAGEABLE;
    e->bytes = bytes;
}

static inline void rr_sync(struct rr *r, unsigned t, unsigned stream, unsigned b)
{
    struct an_ev *e;
    switch (b % 4) {
    case 0:
        e = rr_call(r, t, AN_SYNC, GW_API_cuStreamSynchronize,
                    rr_wait(r, t, rr_done(r, stream), 2 * US), AN_F_DRAINS);
        e->stream = stream;
        break;
    case 1:
        rr_call(r, t, AN_SYNC, GW_API_cuCtxSynchronize, rr_wait(r, t, rr_done(r, 0), 2 * US),
                AN_F_DRAINS | AN_F_ALL_STREAMS);
        break;
    case 2:  /* a query: done, or not ready (an error result, no drain) */
        if (rr_done(r, stream) <= r->now[t])
            e = rr_call(r, t, AN_SYNC, GW_API_cuStreamQuery, US, AN_F_DRAINS);
        else
            e = rr_call(r, t, AN_CALL, GW_API_cuStreamQuery, US, AN_F_ERROR);
        e->stream = stream;
        break;
    default:  /* an event recorded on the stream, then waited for */
        e = rr_call(r, t, AN_CALL, GW_API_cuEventRecord, US, 0);
        e->stream = stream;
        e->key = 0xE0 + stream;
        e = rr_call(r, t, AN_SYNC, GW_API_cuEventSynchronize,
                    rr_wait(r, t, rr_done(r, stream), 2 * US), AN_F_DRAINS);
        e->key = 0xE0 + stream;
        break;
    }
}

static inline void rr_forget(struct rr *r, size_t i)
{
    r->live_bytes -= r->live[i].bytes;
    r->live[i] = r->live[--r->nlive];
}

static inline void rr_free(struct rr *r, unsigned t, unsigned b)
{
    if (!r->nlive || b % 29 == 0) {  /* a pointer never seen allocated */
        struct an_ev *e = rr_call(r, t, AN_FREE, GW_API_cuMemFree_v2,
                                  rr_wait(r, t, rr_done(r, 0), 5 * US),
                                  AN_F_DRAINS | AN_F_ALL_STREAMS);
        e->ptr = 0xDEAD0000ull + b;
        return;
    }
    size_t i = b % r->nlive;
    struct rr_block k = r->live[i];
    struct an_ev *e;
    switch (k.mem_kind) {
    case AN_MEM_POOL:
        e = rr_call(r, t, AN_FREE, GW_API_cuMemFreeAsync, 2 * US, AN_F_ASYNC_API);
        e->stream = 1;
        break;
    case AN_MEM_VMM:
        e = rr_call(r, t, AN_FREE, GW_API_cuMemRelease, 3 * US, 0);
        break;
    default:  /* cudaFree waits for the device */
        e = rr_call(r, t, AN_FREE, GW_API_cuMemFree_v2, rr_wait(r, t, rr_done(r, 0), 5 * US),
                    AN_F_DRAINS | AN_F_ALL_STREAMS);
        break;
    }
    e->ptr = k.ptr;
    e->host_kind = k.mem_kind == AN_MEM_VMM || k.mem_kind == AN_MEM_POOL ? k.mem_kind : 0;
    rr_forget(r, i);
}

/* An allocation on a 1 GiB device; one that does not fit fails with an out-of-memory
 * error, and is then retried (after freeing what is cached) as PyTorch's allocator does. */
static inline void rr_alloc(struct rr *r, unsigned t, unsigned b)
{
    static const struct {
        unsigned api;
        uint8_t kind, flags;
    } how[] = {
        {GW_API_cuMemAlloc_v2, AN_MEM_PLAIN, 0},
        {GW_API_cuMemAllocAsync, AN_MEM_POOL, AN_F_ASYNC_API},
        {GW_API_cuMemAllocManaged, AN_MEM_MANAGED, 0},
        {GW_API_cuMemCreate, AN_MEM_VMM, 0},
    };
    unsigned h = (b >> 5) % 4;
    uint64_t bytes = (1ull << 20) << (b % 9);
    for (int attempt = 0; attempt < 2; attempt++) {
        int fits = r->live_bytes + bytes <= RR_CAPACITY && r->nlive < RR_LIVE;
        struct an_ev *e = rr_call(r, t, AN_ALLOC, how[h].api, (fits ? 20 : 50) * US,
                                  (uint8_t)(how[h].flags | (fits ? 0 : AN_F_ERROR | AN_F_OOM)));
        e->bytes = bytes;
        e->host_kind = how[h].kind;
        e->stream = how[h].kind == AN_MEM_POOL ? 1 : 0;
        e->key = b % 3;  /* a call stack id, or none */
        if (fits) {
            e->ptr = r->next_ptr += 1ull << 30;
            r->live[r->nlive++] = (struct rr_block){e->ptr, bytes, how[h].kind};
            r->live_bytes += bytes;
            return;
        }
        if (attempt || b % 4 == 0)
            return;  /* not retried: the program sees the error */
        for (unsigned k = 0; k < 1 + b % 5 && r->nlive; k++)
            rr_free(r, t, b + k);
    }
}

static inline void rr_nvtx(struct rr *r, unsigned t, unsigned b)
{
    static const uint8_t kinds[] = {AN_RANGE_PUSH, AN_RANGE_POP, AN_MARK, AN_RANGE_START,
                                    AN_RANGE_END};
    int step = b % 3 != 0;
    struct an_ev *e = rr_call(r, t, kinds[b % 5], 0, 0, step ? AN_F_STEP_NAME : 0);
    e->key = step ? 1ull << 63 | 77 : 5 + b % 4;
    e->bytes = step ? 77 : e->key;
    e->ptr = b % 7;
}

/* Pinned host memory, memsets, cuMemGetInfo, other calls, lost records. */
static inline void rr_misc(struct rr *r, unsigned t, unsigned stream, unsigned b)
{
    struct an_ev *e;
    switch (b % 8) {
    case 0:
        if (r->npinned < 8) {
            e = rr_call(r, t, AN_HOST_ALLOC, GW_API_cuMemHostAlloc, 30 * US, 0);
            e->ptr = r->pinned[r->npinned++] = 0x7f0000000000ull + (r->next_ptr += 4096);
            e->bytes = 1ull << 20 << (b % 4);
        }
        break;
    case 1:
        if (r->npinned) {
            e = rr_call(r, t, AN_HOST_FREE, GW_API_cuMemFreeHost, 10 * US, 0);
            e->ptr = r->pinned[--r->npinned];
        }
        break;
    case 2:
        e = rr_call(r, t, AN_SET, GW_API_cuMemsetD8Async, 3 * US, AN_F_ASYNC_API);
        e->stream = stream;
        e->bytes = 4096ull << (b % 10);
        rr_gpu(r, AN_GPU_SET, stream, e->end, 2 * US, 0, 0, e->bytes);
        break;
    case 3:
        e = rr_call(r, t, AN_MEMINFO, GW_API_cuMemGetInfo_v2, 2 * US, 0);
        e->bytes = RR_CAPACITY - r->live_bytes;
        e->ptr = RR_CAPACITY;
        break;
    case 4:
        rr_call(r, t, AN_CALL, GW_API_cuDevicePrimaryCtxRetain, US, 0);
        break;
    case 5: {  /* the thread dropped records: what happened meanwhile is unknown */
        e = rr_call(r, t, AN_LOST, 0, 0, 0);
        e->bytes = 1 + b % 50;
        r->hole[t] = 1;
        r->now[t] += (b % 50) * US;
        break;
    }
    case 6:
        if (r->s.gpu_records) {
            struct an_ev g = {0};
            g.ts = g.end = r->gpu_end[stream] > r->now[t] ? r->gpu_end[stream] : r->now[t];
            g.kind = AN_GPU_LOST;
            g.tid = rr_device(stream);
            g.stream = stream;
            g.bytes = 1 + b % 9;
            synth_push(&r->s, &g);
        }
        break;
    default: {  /* another stream waits for this one's work so far (side-stream copies,
                 * a communication stream): on the GPU, not on the host */
        unsigned other = stream % RR_STREAMS + 1;
        e = rr_call(r, t, AN_CALL, GW_API_cuEventRecord, US, 0);
        e->stream = stream;
        e->key = 0xF0 + stream;
        e = rr_call(r, t, AN_CALL, GW_API_cuStreamWaitEvent, US, 0);
        e->stream = other;
        e->key = 0xF0 + stream;
        if (r->gpu_end[other] < r->gpu_end[stream])
            r->gpu_end[other] = r->gpu_end[stream];
        break;
    }
    }
}

/* The host does nothing for a while: a DataLoader batch, a pause. */
static inline void rr_idle(struct rr *r, unsigned t, unsigned b)
{
    r->now[t] += b == 255 ? 3000 * MS : US << (b % 19);
}

/* Many tiny kernels (launch-bound), or many small blocking copies (a batch moved tensor
 * by tensor). */
static inline void rr_burst(struct rr *r, unsigned t, unsigned stream, unsigned b)
{
    unsigned n = 16 + b % 97;
    for (unsigned i = 0; i < n; i++) {
        if (b & 1) {
            rr_launch(r, t, stream, 12 * (b >> 1 & 7) + 1);  /* key 2..6, 2 us on the GPU */
        } else {
            rr_h2d_copy(r, t, stream, 512ull << (b >> 1) % 6, 1);
        }
    }
}

/* One operation: op selects what, b its details. */
static inline void rr_op(struct rr *r, unsigned op, unsigned b)
{
    unsigned t = op >> 6 == 3 ? 1 + (b & 1) : 0;  /* mostly the main thread */
    unsigned stream = 1 + (b >> 3) % RR_STREAMS;
    /* the thread was idle (or blocked) until now; a call of its own comes after the
     * latest one, never at the same nanosecond (which came first would be unknown) */
    if (r->now[t] <= r->latest_start)
        r->now[t] = r->latest_start + 1;
    switch (op % 16) {
    case 0: case 1: case 2: case 3: case 4: rr_launch(r, t, stream, b); break;
    case 5: b % 4 ? rr_launch(r, t, stream, b) : rr_burst(r, t, stream, b >> 2); break;
    case 6: rr_h2d(r, t, stream, b); break;
    case 7: rr_d2h(r, t, stream, b); break;
    case 8: rr_sync(r, t, stream, b); break;
    case 9: case 10: rr_idle(r, t, b); break;
    case 11: rr_alloc(r, t, b); break;
    case 12: rr_free(r, t, b); break;
    case 13: rr_nvtx(r, t, b); break;
    default: rr_misc(r, t, stream, b); break;
    }
}

/* The writer's CPU samples every 25 ms over the run, when `which` says so (odd): the main
 * thread (tid 100) on a CPU busy/255 of the time and, when `which` & 2, its run-queue time
 * (runnable without a CPU) runq/255 of the rest; workers as many as which >> 5. */
static inline void rr_cpu_samples(struct rr *r, unsigned which, unsigned busy, unsigned runq)
{
    if (!(which & 1))
        return;
    double on = busy / 255.0, waiting = (1 - on) * (runq / 255.0);
    unsigned workers = which >> 5;
    uint64_t start = 1000 * MS, end = r->now[0];
    for (uint64_t t = start; t <= end; t += 25 * MS) {
        uint64_t since = t - start;
        struct an_ev thread = {.ts = t, .end = t, .tid = 99, .kind = AN_CPU_THREAD, .ptr = 100,
                               .bytes = (uint64_t)((double)since * on)};
        if (which & 2) {
            thread.dir = 1;
            thread.end = t + (uint64_t)((double)since * waiting);
        }
        synth_push(&r->s, &thread);
        struct an_ev proc = {.ts = t, .end = t, .tid = 99, .kind = AN_CPU_PROC,
                             .bytes = (uint64_t)((double)since * on),
                             .ptr = (uint64_t)((double)since * 0.9 * workers), .key = workers,
                             .stream = workers};
        synth_push(&r->s, &proc);
    }
}

/* The run the bytes describe: a template of 2..33 operations repeated 1..256 times, an
 * extra operation after a repetition when its byte says so, a final synchronize. */
static inline void rr_generate(struct rr *r, struct rr_bytes *in, int gpu_records)
{
    memset(r, 0, sizeof *r);
    r->s.gpu_records = gpu_records;
    for (unsigned t = 0; t < RR_THREADS; t++)
        r->now[t] = 1000 * MS;
    unsigned len = 2 + rr_byte(in) % 32, reps = 1 + rr_byte(in);
    uint8_t tmpl[2 * 33];
    for (unsigned i = 0; i < 2 * len; i++)
        tmpl[i] = (uint8_t)rr_byte(in);
    for (unsigned k = 0; k < reps; k++) {
        for (unsigned i = 0; i < len; i++)
            rr_op(r, tmpl[2 * i], tmpl[2 * i + 1]);
        unsigned extra = rr_byte(in);
        if (extra & 1)
            rr_op(r, extra >> 1, rr_byte(in));
    }
    rr_call(r, 0, AN_SYNC, GW_API_cuCtxSynchronize, rr_wait(r, 0, rr_done(r, 0), 2 * US),
            AN_F_DRAINS | AN_F_ALL_STREAMS);
    rr_cpu_samples(r, rr_byte(in), rr_byte(in), rr_byte(in));
}

#endif
