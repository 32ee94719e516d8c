/*
 * fakecuda: private header of the simulated CUDA driver (a test double for libcuda.so.1).
 *
 * Every file of the fake includes this header first. __CUDA_API_VERSION_INTERNAL makes cuda.h
 * declare each exact exported name (cuMemAlloc_v2, cuLaunchKernel_ptsz, ...) with no macro
 * renaming, so the definitions here get exactly those symbol names.
 *
 * Everything declared below the visibility pragma is internal (hidden); only the cu* entry
 * points keep default visibility and are exported.
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "fakecuda_activity.h"   /* before the pragma: fakecuda_set_activity_sink is exported */

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* ---- configuration and process state (config.c) ---- */
struct fc_config {
    uint64_t mem_bytes;        /* FAKECUDA_MEM_MB */
    uint64_t others_bytes;     /* FAKECUDA_MEM_USED_BY_OTHERS_MB */
    int64_t kernel_ns;         /* FAKECUDA_KERNEL_NS */
    double pinned_gbps;        /* FAKECUDA_PINNED_GBPS */
    double pageable_gbps;      /* FAKECUDA_PAGEABLE_GBPS */
    double d2d_gbps;           /* FAKECUDA_D2D_GBPS */
    int driver_version;        /* FAKECUDA_DRIVER_VERSION */
    CUresult probe_result;     /* FAKECUDA_PROBE_RESULT: answer to cuGetProcAddress("") */
    int verbose;               /* FAKECUDA_VERBOSE */
    int spin_wait;             /* FAKECUDA_SPIN_WAIT */
    int move_bytes;            /* FAKECUDA_MOVE_BYTES */
    int graph_records;         /* FAKECUDA_GRAPH_RECORDS */
};
extern struct fc_config fc_cfg;
extern atomic_int fc_initialized;

void fc_config_load(void);     /* idempotent; reads the environment once */
void fc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));   /* FAKECUDA_VERBOSE */
void fc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* always, stderr */

static inline CUresult fc_check_init(void)
{
    return atomic_load_explicit(&fc_initialized, memory_order_acquire)
               ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

/* handle magics: every handle the fake gives out starts with one */
enum {
    FC_MAGIC_CTX = 0x43545821u,
    FC_MAGIC_STREAM = 0x53545221u,
    FC_MAGIC_EVENT = 0x45564e21u,
    FC_MAGIC_MODULE = 0x4d4f4421u,
    FC_MAGIC_LIBRARY = 0x4c494221u,
    FC_MAGIC_FUNC = 0x46554e21u,
    FC_MAGIC_KERNEL = 0x4b524e21u,
    FC_MAGIC_GRAPH = 0x47525021u,
    FC_MAGIC_EXEC = 0x45584521u,
    FC_MAGIC_POOL = 0x504f4f21u,
    FC_MAGIC_DEAD = 0xdeaddeadu,
};

/* ---- simulated GPU timeline (timeline.c) ---- */
#define FC_CAPTURED ((int64_t)-1)

enum fc_stream_kind { FC_STREAM_USER, FC_STREAM_LEGACY, FC_STREAM_PER_THREAD };

struct fc_graph;
struct fc_ctx;

typedef struct fc_stream {
    uint32_t magic;
    uint32_t kind;                 /* enum fc_stream_kind */
    unsigned flags;                /* CU_STREAM_NON_BLOCKING */
    int priority;
    unsigned long long id;
    struct fc_ctx *ctx;
    _Atomic int64_t busy_until;    /* simulated time (CLOCK_MONOTONIC ns) the last op ends */
    struct fc_graph *_Atomic capture;   /* non-NULL while the stream is being captured */
} fc_stream;

int64_t fc_now(void);
void fc_sleep_until(int64_t t);  /* spins instead with FAKECUDA_SPIN_WAIT=1; first waits for
                                   the copy engine's downloads */

/* ---- the copy engine (copy_engine.c) ---- */
struct fc_move {                 /* depth slices of height rows of width bytes */
    uintptr_t dst, src;
    size_t dst_pitch, dst_slice, src_pitch, src_slice;
    size_t width, height, depth;
    int to_host;                 /* the destination is host memory (a download) */
    int64_t end;                 /* when the simulated transfer ends */
};
void fc_move_run(const struct fc_move *m);
/* Moves m's bytes on the copy engine's thread, after those submitted before. */
void fc_copy_engine_submit(const struct fc_move *m);
/* Returns when every submitted move is done. */
void fc_copy_engine_drain(void);
/* Returns when every pending move into host memory whose simulated transfer ended by t is
 * done: what a host that waited for the GPU until t may read next (waiting for a later
 * download too is a wait no GPU would make). Moves into device memory are read only by
 * later moves (in order on the engine), memsets and frees (which drain). */
void fc_copy_engine_drain_downloads(int64_t t);
/* fc_copy_engine_drain when a pending move reads or writes [base, base + size): what a free
 * of that range needs (waiting for unrelated uploads is a wait no GPU record shows). */
void fc_copy_engine_drain_range(uintptr_t base, size_t size);
/* Enqueue an op of dur_ns on s; returns its simulated end time (it starts at end - dur_ns),
 * or FC_CAPTURED when s is capturing (the op went into the graph and must not run; then
 * *captured, if given, is that graph). Lock-free. */
int64_t fc_enqueue_op(fc_stream *s, int64_t dur_ns, struct fc_graph **captured);
static inline int64_t fc_enqueue(fc_stream *s, int64_t dur_ns)
{
    return fc_enqueue_op(s, dur_ns, NULL);
}
/* When everything enqueued on s so far (including implicit legacy-stream dependencies
 * for an op issued now) has finished. */
int64_t fc_stream_point(fc_stream *s);
/* Make s wait for time t (cuStreamWaitEvent, host functions). */
void fc_stream_wait_until(fc_stream *s, int64_t t);
/* The op just enqueued on s ends at t instead, later than fc_enqueue_op said. */
void fc_stream_extend(fc_stream *s, int64_t t);
void fc_atomic_max(_Atomic int64_t *a, int64_t v);
int64_t fc_copy_ns(size_t bytes, double gbps);
int64_t fc_next_id(void);

/* ---- contexts (context.c) ---- */
typedef struct fc_ctx {
    uint32_t magic;
    int is_primary;
    CUdevice dev;
    unsigned flags;
    unsigned long long id;
    fc_stream legacy;               /* the NULL stream of this context */
    _Atomic int64_t blocking_max;   /* latest end of any op on a blocking (non-legacy) stream */
    _Atomic int64_t all_max;        /* latest end of any op in this context */
} fc_ctx;

fc_ctx *fc_current_ctx(void);
/* cuInit done and a current context: the two checks most entry points start with */
CUresult fc_need_ctx(fc_ctx **out);
/* Resolve a CUstream handle: NULL means the legacy stream, or the per-thread stream in a
 * _ptsz/_ptds variant; CU_STREAM_LEGACY / CU_STREAM_PER_THREAD are accepted everywhere. */
CUresult fc_stream_get(CUstream h, int per_thread, fc_stream **out);
int fc_ctx_valid(CUcontext c);

/* ---- first-fit range allocator (device_heap.c); the caller locks ---- */
typedef struct fc_block {
    uint64_t off, size;             /* size is the rounded size actually taken */
    uint64_t req;                   /* requested size */
    int used;
    int kind;                       /* enum fc_alloc_kind for used blocks */
    unsigned long long id;
    void *owner;                    /* context, pool, or VMM handle */
    struct fc_block *prev, *next;   /* all blocks in address order */
    struct fc_block *fprev, *fnext; /* free blocks in address order */
    struct fc_block *hnext;         /* hash chain of used blocks by off */
} fc_block;

typedef struct fc_heap {
    uint64_t capacity, align, used;
    fc_block *head, *free_head;
    fc_block **buckets;
    size_t nbuckets, nused;
} fc_heap;

int fc_heap_init(fc_heap *h, uint64_t capacity, uint64_t align);
fc_block *fc_heap_alloc(fc_heap *h, uint64_t size, uint64_t align);   /* NULL: no fit */
fc_block *fc_heap_find(fc_heap *h, uint64_t off);                     /* used block at off */
fc_block *fc_heap_containing(fc_heap *h, uint64_t off);               /* used block holding off */
void fc_heap_free(fc_heap *h, fc_block *b);

/* ---- device memory (memory.c) ---- */
enum fc_alloc_kind { FC_ALLOC_DEVICE = 1, FC_ALLOC_MANAGED, FC_ALLOC_ASYNC, FC_ALLOC_VMM,
                     FC_ALLOC_OTHERS };

enum fc_memkind { FC_MEM_PAGEABLE, FC_MEM_PINNED, FC_MEM_DEVICE };

typedef struct fc_range_info {
    int kind;                       /* enum fc_memkind */
    int alloc_kind;                 /* enum fc_alloc_kind for device memory */
    uintptr_t base;
    size_t size;
    unsigned long long id;
    void *ctx;
    unsigned host_flags;
} fc_range_info;

CUresult fc_memory_init(void);      /* maps the device range; called from cuInit */
/* Device-memory block: take/give bytes of the simulated device (also used by VMM). */
CUresult fc_dev_take(size_t size, int kind, void *owner, CUdeviceptr *out);
void fc_dev_give(CUdeviceptr p);
CUresult fc_dev_free_async(CUdeviceptr p, void **owner, uint64_t *size);
/* Where does [p, p+n) live? Device ranges must lie inside one allocation or VMM mapping. */
int fc_classify(uintptr_t p, size_t n, fc_range_info *info);
int fc_is_device_range(uintptr_t p, size_t n);

/* ---- stream-ordered allocation and pools (stream_alloc.c) ---- */
void fc_pool_note_free(void *owner, uint64_t size);   /* no-op unless owner is a pool */

/* ---- pinned host memory (hostmem.c) ---- */
int fc_host_lookup(uintptr_t p, size_t n, fc_range_info *info);

/* ---- VMM (vmm.c) ---- */
int fc_vmm_lookup(uintptr_t p, size_t n, fc_range_info *info);

/* ---- modules, functions, kernels (modules.c) ---- */
typedef struct fc_func {           /* shared by CUfunction and CUkernel handles */
    uint32_t magic;                 /* FC_MAGIC_FUNC or FC_MAGIC_KERNEL */
    int64_t dur_ns;                 /* simulated duration, from the name */
    const char *name;
    void *owner;                    /* module or library */
    struct fc_func *as_function;    /* for a kernel: its CUfunction twin */
} fc_func;

fc_func *fc_func_get(CUfunction f);   /* NULL unless a live function or kernel handle */

/* ---- collectives across processes (collective.c) ---- */
void fc_collective_init(void);      /* at cuInit: FAKECUDA_COLLECTIVE_FILE, RANK, WORLD_SIZE */
int fc_collective_on(void);
int fc_is_collective(const char *name);  /* an NCCL kernel's name */
/* The end of this process's next collective, which started at start and lasts dur_ns once
 * the last rank has started its own: waits until every rank has. */
int64_t fc_collective_end(int64_t start, int64_t dur_ns);

/* ---- events (events.c) ---- */
int64_t fc_event_time(CUevent hEvent);   /* completion time, 0 never recorded, -1 bad handle */

/* ---- graphs and capture (graph.c) ---- */
void fc_graph_capture_op(struct fc_graph *g, int64_t dur_ns);
/* Describe the op just captured into g (kernel, copy, memset), so that every launch of the
 * graph can report it to the activity sink. a->name is copied. */
void fc_graph_capture_node(struct fc_graph *g, const struct fakecuda_activity *a,
                           int64_t dur_ns);

/* ---- the test-only activity sink (activity.c, fakecuda_activity.h) ---- */
extern _Atomic(fakecuda_activity_sink_fn) fc_activity_sink;

/* One pointer load: NULL unless a sink (the simulated CUPTI) is installed. */
static inline fakecuda_activity_sink_fn fc_sink(void)
{
    return atomic_load_explicit(&fc_activity_sink, memory_order_acquire);
}

/* After fc_enqueue_op returned end for an op of dur_ns described by *a (kind-specific
 * fields filled): a captured op goes into graph g as a node; otherwise, with a sink,
 * the times, device and stream are filled in and the sink is called. */
void fc_activity_report(fakecuda_activity_sink_fn sink, fc_stream *s,
                        struct fakecuda_activity *a, int64_t end, int64_t dur_ns,
                        struct fc_graph *g);
/* CUpti_ActivityMemoryKind value of a classified range */
uint32_t fc_activity_mem_kind(const fc_range_info *info);

#pragma GCC visibility pop

#endif
