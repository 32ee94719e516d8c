/*
 * fakecuda_activity.h: a TEST-ONLY hook of the simulated CUDA driver (tests/fakecuda).
 *
 * The simulated libcuda.so.1 exports fakecuda_set_activity_sink(). The simulated CUPTI
 * (tests/fakecupti, libcupti.so.13) finds it with dlsym and installs a sink; from then on the
 * fake driver reports every simulated GPU op it enqueues: kernel launches (every launch entry
 * point; cuGraphLaunch reports the graph's kernels, copies and memsets with graph_id set),
 * copies and memsets. The real driver has no such symbol, and gpuwatch itself never uses it.
 *
 * The sink is called on the thread that made the driver call, synchronously, inside that
 * call, once the op's simulated start and end are known. One driver API call gives one sink
 * call, except a graph launch (one per node) and cuMemcpyBatchAsync (one per copy): their
 * later calls have continues_call = 1, so a consumer can give all of them the API call's one
 * correlation id. Ops recorded into a capturing stream are not reported when captured; they
 * are reported each time the graph is launched.
 *
 * Pointers in the struct (name) are valid only during the sink call: copy what you keep.
 * With no sink installed the cost in the driver is one pointer load per op.
 */
#ifndef FAKECUDA_ACTIVITY_H
#define FAKECUDA_ACTIVITY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fakecuda_activity_kind {
    FAKECUDA_ACTIVITY_KERNEL = 1,
    FAKECUDA_ACTIVITY_MEMCPY = 2,
    FAKECUDA_ACTIVITY_MEMSET = 3,
};

/* copy_kind: the values of CUpti_ActivityMemcpyKind */
enum fakecuda_copy_kind {
    FAKECUDA_COPY_HTOD = 1,
    FAKECUDA_COPY_DTOH = 2,
    FAKECUDA_COPY_DTOD = 8,
    FAKECUDA_COPY_HTOH = 9,
    FAKECUDA_COPY_PTOP = 10,   /* cuMemcpyPeer(Async): the fake has one device, see README */
};

/* src_kind / dst_kind / mem_kind: the values of CUpti_ActivityMemoryKind */
enum fakecuda_mem_kind {
    FAKECUDA_MEM_PAGEABLE = 1,
    FAKECUDA_MEM_PINNED = 2,   /* cuMemHostAlloc / cuMemAllocHost / cuMemHostRegister */
    FAKECUDA_MEM_DEVICE = 3,   /* cuMemAlloc & co, async/pool allocations, VMM mappings */
    FAKECUDA_MEM_MANAGED = 5,  /* cuMemAllocManaged */
};

/* graph_id of the single 10 us kernel that a cuGraphLaunch of an exec handle the fake did not
 * make runs as */
#define FAKECUDA_FOREIGN_GRAPH_ID 0xffffffffu

struct fakecuda_activity {
    uint32_t kind;            /* enum fakecuda_activity_kind */
    uint32_t continues_call;  /* 1: another op of the same API call as this thread's previous
                                 sink call (graph node after the first, batch copy after the
                                 first); 0: the first (usually only) op of a new API call */
    int64_t start_ns;         /* simulated start and end, CLOCK_MONOTONIC ns (the fake's clock) */
    int64_t end_ns;
    uint32_t device;          /* device ordinal (always 0) */
    uint32_t graph_id;        /* 0, or the id of the graph whose launch ran this op */
    uint64_t graph_node_id;   /* 0, or the node's id inside that graph */
    uint64_t stream_id;       /* what cuStreamGetId returns for the stream (legacy and
                                 per-thread default streams have ids too) */

    /* FAKECUDA_ACTIVITY_KERNEL */
    const char *name;         /* the function's name (as in the PTX), valid during the call */
    uint32_t grid_x, grid_y, grid_z;
    uint32_t block_x, block_y, block_z;
    uint32_t dynamic_smem;    /* sharedMemBytes of the launch */
    uint32_t static_smem;     /* always 0 (= cuFuncGetAttribute SHARED_SIZE_BYTES) */
    uint32_t registers;       /* always 32 (= cuFuncGetAttribute NUM_REGS) */
    uint32_t cooperative;     /* 1: cuLaunchCooperativeKernel(_ptsz) */

    /* FAKECUDA_ACTIVITY_MEMCPY and FAKECUDA_ACTIVITY_MEMSET */
    uint64_t bytes;
    uint32_t async;           /* 1: an *Async entry point (CUPTI's MEMCPY/MEMSET_ASYNC flag) */

    /* FAKECUDA_ACTIVITY_MEMCPY */
    uint32_t copy_kind;       /* enum fakecuda_copy_kind */
    uint32_t src_kind;        /* enum fakecuda_mem_kind */
    uint32_t dst_kind;

    /* FAKECUDA_ACTIVITY_MEMSET */
    uint32_t mem_kind;        /* enum fakecuda_mem_kind of the destination */
    uint32_t value;           /* the byte, short or int value set */
};

typedef void (*fakecuda_activity_sink_fn)(const struct fakecuda_activity *activity);

/* Install (or, with NULL, remove) the process-wide sink. Exported by the fake libcuda.so.1
 * only; look it up with dlsym, never link it. */
void fakecuda_set_activity_sink(fakecuda_activity_sink_fn sink);

#ifdef __cplusplus
}
#endif

#endif
