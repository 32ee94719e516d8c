/*
 * fakecuda: a minimal CUDA graph model, enough for stream capture and cuGraphLaunch.
 *
 * While a stream is capturing, the ops enqueued on it are not run: their simulated durations
 * add up in the graph (copies and memsets move no bytes, host functions are not called).
 * An instantiated graph runs as one op of that total duration. cuGraphLaunch accepts any
 * non-NULL exec handle; one the fake did not make, or an empty graph, runs as a single
 * 10 us kernel.
 */
#include "fakecuda.h"

#include <stdlib.h>

#define FOREIGN_GRAPH_NS 10000

typedef struct fc_graph {
    uint32_t magic;
    _Atomic int64_t dur;
    atomic_int nodes;
} fc_graph;

typedef struct fc_exec {
    int64_t dur;
    struct fc_exec *next;
} fc_exec;

static pthread_mutex_t exec_lock = PTHREAD_MUTEX_INITIALIZER;
static fc_exec *execs;

void fc_graph_capture_op(struct fc_graph *g, int64_t dur_ns)
{
    atomic_fetch_add_explicit(&g->dur, dur_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&g->nodes, 1, memory_order_relaxed);
}

static fc_graph *graph_new(void)
{
    fc_graph *g = calloc(1, sizeof *g);
    if (g)
        g->magic = FC_MAGIC_GRAPH;
    return g;
}

static fc_graph *graph_get(CUgraph h)
{
    fc_graph *g = (fc_graph *)h;
    return g && g->magic == FC_MAGIC_GRAPH ? g : NULL;
}

CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    if (!phGraph || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    fc_graph *g = graph_new();
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *phGraph = (CUgraph)g;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    fc_graph *g = graph_get(hGraph);
    if (!g)
        return CUDA_ERROR_INVALID_VALUE;
    g->magic = FC_MAGIC_DEAD;
    free(g);
    return CUDA_SUCCESS;
}

/* ---- capture ---- */

static CUresult begin_capture(CUstream h, int per_thread, CUstreamCaptureMode mode)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    if (s->kind == FC_STREAM_LEGACY)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (atomic_load(&s->capture))
        return CUDA_ERROR_ILLEGAL_STATE;
    fc_graph *g = graph_new();
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    atomic_store(&s->capture, g);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{ return begin_capture(hStream, 0, mode); }
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{ return begin_capture(hStream, 1, mode); }
CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{ return begin_capture(hStream, 0, CU_STREAM_CAPTURE_MODE_GLOBAL); }
CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{ return begin_capture(hStream, 1, CU_STREAM_CAPTURE_MODE_GLOBAL); }

static CUresult end_capture(CUstream h, int per_thread, CUgraph *phGraph)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!phGraph)
        return CUDA_ERROR_INVALID_VALUE;
    fc_graph *g = atomic_exchange(&s->capture, NULL);
    if (!g)
        return CUDA_ERROR_ILLEGAL_STATE;
    *phGraph = (CUgraph)g;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{ return end_capture(hStream, 0, phGraph); }
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{ return end_capture(hStream, 1, phGraph); }

static CUresult is_capturing(CUstream h, int per_thread, CUstreamCaptureStatus *status)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    *status = atomic_load(&s->capture) ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                       : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{ return is_capturing(hStream, 0, captureStatus); }
CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{ return is_capturing(hStream, 1, captureStatus); }

/* ---- instantiate, launch ---- */

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                             unsigned long long flags)
{
    CUresult r = fc_check_init();
    if (r != CUDA_SUCCESS)
        return r;
    fc_graph *g = graph_get(hGraph);
    if (!phGraphExec || !g)
        return CUDA_ERROR_INVALID_VALUE;
    fc_exec *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->dur = atomic_load(&g->nodes) ? atomic_load(&g->dur) : FOREIGN_GRAPH_NS;
    pthread_mutex_lock(&exec_lock);
    e->next = execs;
    execs = e;
    pthread_mutex_unlock(&exec_lock);
    *phGraphExec = (CUgraphExec)e;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                                       CUgraphNode *phErrorNode, char *logBuffer,
                                       size_t bufferSize)
{
    if (logBuffer && bufferSize)
        logBuffer[0] = 0;
    return cuGraphInstantiateWithFlags(phGraphExec, hGraph, 0);
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&exec_lock);
    for (fc_exec **pp = &execs; *pp; pp = &(*pp)->next)
        if (*pp == (fc_exec *)hGraphExec) {
            fc_exec *e = *pp;
            *pp = e->next;
            free(e);
            r = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&exec_lock);
    return r;
}

static CUresult graph_launch(CUgraphExec x, CUstream h, int per_thread)
{
    fc_stream *s;
    CUresult r = fc_stream_get(h, per_thread, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!x)
        return CUDA_ERROR_INVALID_VALUE;
    int64_t dur = FOREIGN_GRAPH_NS;
    pthread_mutex_lock(&exec_lock);
    for (fc_exec *e = execs; e; e = e->next)
        if (e == (fc_exec *)x) {
            dur = e->dur;
            break;
        }
    pthread_mutex_unlock(&exec_lock);
    fc_enqueue(s, dur);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{ return graph_launch(hGraphExec, hStream, 0); }
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{ return graph_launch(hGraphExec, hStream, 1); }
