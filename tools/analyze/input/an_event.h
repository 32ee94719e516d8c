/*
 * The analyzer's own event: what one trace record means for the analysis, in 64 bytes.
 * The reorder window holds these (not the reader's 200-byte struct gw_event), and the unit
 * tests build them directly to feed the model synthetic streams.
 */
#ifndef GPUWATCH_ANALYZE_AN_EVENT_H
#define GPUWATCH_ANALYZE_AN_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "gpuwatch/trace_format.h"

enum an_kind {
    AN_NONE = 0,       /* not for the analysis (definitions, correlation) */
    /* host calls: [ts, end) on thread tid */
    AN_CALL,           /* any other call: host activity only */
    AN_LAUNCH,         /* kernel, cooperative or graph launch, host function: issues work */
    AN_COPY,           /* copy (dir, host_kind, flags say sync/async/blocking) */
    AN_SET,            /* memset: issues work */
    AN_SYNC,           /* stream/context/event synchronize, query that found work done */
    AN_ALLOC,          /* device memory taken (ptr, bytes, mem kind); result may be an error */
    AN_FREE,           /* device memory given back (ptr) */
    AN_HOST_ALLOC,     /* pinned host memory taken / registered */
    AN_HOST_FREE,
    AN_MEMINFO,        /* cuMemGetInfo: bytes = free, ptr = total */
    AN_CAPTURE,        /* stream capture begins (dir = 1) or ends (dir = 0) on stream: what
                          it issues in between is recorded into a graph, not run */
    AN_LOST,           /* bytes = records the thread dropped */
    /* GPU timeline (CUPTI): [ts, end) on device, stream */
    AN_GPU_KERNEL,
    AN_GPU_COPY,       /* dir, host_kind from CUPTI's src/dst kinds */
    AN_GPU_SET,
    AN_GPU_LOST,       /* bytes = records CUPTI dropped */
    /* NVTX, on thread tid; key = name string id (a digit-blind hash for step names),
     * bytes = name string id */
    AN_RANGE_PUSH,
    AN_RANGE_POP,
    AN_MARK,
    AN_RANGE_START,    /* ptr = range id */
    AN_RANGE_END,
    /* CPU samples (cpu_use.h), on the writer's thread tid; cumulative ns */
    AN_CPU_THREAD,     /* ptr = the sampled thread, bytes = its CPU time, key = its time
                          in calls that may wait for the GPU, stream = its CPU time in them;
                          dir = 1 when the sample says how long it was runnable but waited
                          for a CPU (preempted), end - ts = that time */
    AN_CPU_PROC,       /* bytes = the process's CPU time, ptr = its descendants', key = how
                          many are alive, stream = how many ran since the previous sample;
                          dir = 1 when the sample says how busy the process's CPUs were,
                          every process's work, since the trace started: end - ts */
    AN_GPU_WINDOW,     /* a sampled timeline's window opened (dir = 1) or shut (dir = 0) */
    AN_MEM_BLOCK,      /* a caching allocator's block (PyTorch profiler traces' [memory]
                          events), not a driver call: taken (dir = 1) or given back (dir =
                          0), ptr its address, bytes its size, api the device, stream the
                          allocator's reserved total after it, key what the device held
                          before the trace began (its first block only, else 0) */
};

/* enum an_mem_kind: what device memory an allocation is */
enum an_mem_kind {
    AN_MEM_PLAIN = 0,  /* cuMemAlloc, cuMemAllocPitch */
    AN_MEM_POOL,       /* stream-ordered: cuMemAllocAsync, cuMemAllocFromPoolAsync */
    AN_MEM_VMM,        /* cuMemCreate (physical) */
    AN_MEM_MANAGED,
    AN_MEM_KINDS,
};

/* flags */
#define AN_F_ASYNC_API   0x01u  /* the *Async variant of a copy/set/alloc/free */
#define AN_F_BLOCKING    0x02u  /* the host waited for the transfer (sync API touching host
                                   memory, or an async one from pageable memory) */
#define AN_F_DRAINS      0x04u  /* the call returned only when earlier work was done */
#define AN_F_STEP_NAME   0x08u  /* NVTX: the range/mark name looks like a training step */
/* the replay's own AN_CALL mark where a step range ended (replay.c: step_boundary) */
#define AN_F_STEP_END    AN_F_STEP_NAME
#define AN_F_ERROR       0x10u  /* the call failed (result != 0) */
#define AN_F_OOM         0x20u  /* CUDA_ERROR_OUT_OF_MEMORY */
#define AN_F_ALL_STREAMS 0x40u  /* a drain of every stream (context sync, sync copy) */
#define AN_F_KERNEL      0x80u  /* a launch of a named kernel (key = shape id) */
/* GPU records (the bit host calls use for AN_F_ASYNC_API): run by a CUDA graph launch */
#define AN_F_GRAPH_NODE  0x01u

struct an_ev {
    uint64_t ts;        /* start, trace clock ns */
    uint64_t end;       /* end (>= ts) */
    uint64_t bytes;     /* copy/set/alloc bytes; lost counts; meminfo free; NVTX name */
    uint64_t ptr;       /* alloc/free pointer or VMM handle; meminfo total; range id;
                           GPU records: CUPTI correlation id (one per issuing call) */
    uint64_t stream;    /* host calls: our stream id; GPU records: CUPTI stream id */
    uint64_t key;       /* launch: shape id; sync: event handle; NVTX: name id;
                           allocs (AN_ALLOC, AN_HOST_ALLOC): the call's STACK id, 0 none */
    uint32_t tid;       /* host thread; GPU records: device ordinal */
    uint16_t api;       /* api id of host calls */
    uint8_t kind;       /* enum an_kind */
    uint8_t flags;      /* AN_F_* */
    uint8_t dir;        /* copies: enum gw_copy_dir */
    uint8_t host_kind;  /* copies: enum gw_host_kind; allocs: enum an_mem_kind */
    uint8_t after_hole; /* records were lost just before this one (damage, LOST): the time
                           since the previous one proves nothing */
    uint8_t pad[5];
};
_Static_assert(sizeof(struct an_ev) == 64, "an_ev is one cache line");

/* 1 when a range or mark name looks like one training step ("step", "ProfilerStep#12",
 * "train_step", "iteration 3", "iter", "batch"). */
int an_is_step_name(const char *name, size_t len);

static inline int an_is_host(const struct an_ev *e)
{
    return e->kind >= AN_CALL && e->kind <= AN_LOST;
}
static inline int an_is_gpu(const struct an_ev *e)
{
    return e->kind >= AN_GPU_KERNEL && e->kind <= AN_GPU_LOST;
}
/* A launch of a whole CUDA graph: one call for the kernels captured in it. (The flag is
 * tested first: a kernel launch, nearly every event, is decided by it alone.) */
static inline int an_is_graph_launch(const struct an_ev *ev)
{
    return !(ev->flags & AN_F_KERNEL) &&
           (ev->api == GW_API_cuGraphLaunch || ev->api == GW_API_cuGraphLaunch_ptsz);
}
static inline int an_issues_work(const struct an_ev *e)
{
    return e->kind == AN_LAUNCH || e->kind == AN_SET ||
           (e->kind == AN_COPY && !(e->flags & AN_F_ERROR));
}

#endif
