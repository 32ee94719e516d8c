/*
 * fakecuda: a minimal CUDA graph model, enough for stream capture and cuGraphLaunch.
 *
 * While a stream is capturing, the ops enqueued on it are not run: their simulated durations
 * add up in the graph (copies and memsets move no bytes, host functions are not called).
 * An instantiated graph runs as one op of that total duration. cuGraphLaunch accepts any
 * non-NULL exec handle; one the fake did not make, or an empty graph, runs as a single
 * 10 us kernel.
 *
 * For the test-only activity sink (fakecuda_activity.h) each captured kernel, copy and memset
 * is also kept as a node description; every launch of the graph reports its nodes one after
 * the other inside the launch's simulated span, with the graph's id and each node's id (an
 * empty graph's or a foreign exec's 10 us run reports one kernel, `fakecuda_graph_10us`).
 */
#include "fakecuda.h"

#include <stdlib.h>
#include <string.h>

#define FOREIGN_GRAPH_NS 10000
#define GRAPH_KERNEL_NAME "fakecuda_graph_10us"

typedef struct fc_gnode {          /* a captured op, as the activity sink will see it */
    struct fakecuda_activity a;     /* kind-specific fields; a.name is owned */
    int64_t dur;
} fc_gnode;

typedef struct fc_nodes {
    fc_gnode *v;
    size_t n, cap;
} fc_nodes;

typedef struct fc_graph {
    uint32_t magic;
    uint32_t id;
    _Atomic int64_t dur;
    atomic_int nodes;
    pthread_mutex_t lock;           /* guards desc */
    fc_nodes desc;
} fc_graph;

typedef struct fc_exec {
    int64_t dur;
    uint32_t graph_id;
    fc_nodes desc;                  /* copied from the graph at instantiation */
    struct fc_exec *next;
} fc_exec;

static pthread_mutex_t exec_lock = PTHREAD_MUTEX_INITIALIZER;
static fc_exec *execs;
static _Atomic uint32_t next_graph_id = 1;
static _Atomic uint64_t next_node_id = 1;

void fc_graph_capture_op(struct fc_graph *g, int64_t dur_ns)
{
    atomic_fetch_add_explicit(&g->dur, dur_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&g->nodes, 1, memory_order_relaxed);
}

static void nodes_free(fc_nodes *d)
{
    for (size_t i = 0; i < d->n; i++)
        free((char *)d->v[i].a.name);
    free(d->v);
    d->v = NULL;
    d->n = d->cap = 0;
}

/* append a copy of a (name duplicated); a fresh node id unless keep_id */
static void nodes_add(fc_nodes *d, const struct fakecuda_activity *a, int64_t dur, int keep_id)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 8;
        fc_gnode *v = realloc(d->v, cap * sizeof *v);
        if (!v)
            return;               /* the op still runs, it is only not described */
        d->v = v;
        d->cap = cap;
    }
    fc_gnode *n = &d->v[d->n];
    n->a = *a;
    n->a.name = NULL;
    if (a->name && !(n->a.name = strdup(a->name)))
        return;
    n->a.continues_call = 0;
    n->a.graph_id = 0;
    if (!keep_id)
        n->a.graph_node_id = atomic_fetch_add_explicit(&next_node_id, 1, memory_order_relaxed);
    n->dur = dur;
    d->n++;
}

void fc_graph_capture_node(struct fc_graph *g, const struct fakecuda_activity *a,
                           int64_t dur_ns)
{
    pthread_mutex_lock(&g->lock);
    nodes_add(&g->desc, a, dur_ns, 0);
    pthread_mutex_unlock(&g->lock);
}

static fc_graph *graph_new(void)
{
    fc_graph *g = calloc(1, sizeof *g);
    if (g) {
        g->magic = FC_MAGIC_GRAPH;
        g->id = atomic_fetch_add_explicit(&next_graph_id, 1, memory_order_relaxed);
        pthread_mutex_init(&g->lock, NULL);
    }
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
    nodes_free(&g->desc);
    pthread_mutex_destroy(&g->lock);
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
    e->graph_id = g->id;
    pthread_mutex_lock(&g->lock);
    for (size_t i = 0; i < g->desc.n; i++)
        nodes_add(&e->desc, &g->desc.v[i].a, g->desc.v[i].dur, 1);
    pthread_mutex_unlock(&g->lock);
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
            nodes_free(&e->desc);
            free(e);
            r = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&exec_lock);
    return r;
}

/* Only with an activity sink or while capturing: report the exec's nodes one after the
 * other from the launch's start (or, captured into another graph, add them to it). The exec
 * must not be destroyed while it is being launched, as with the real driver. */
static __attribute__((noinline, cold)) void
report_graph(fakecuda_activity_sink_fn sink, fc_stream *s, const fc_exec *e, int64_t dur,
             int64_t end, struct fc_graph *g)
{
    if (!e || e->desc.n == 0) {
        if (dur <= 0)
            return;
        struct fakecuda_activity a = {
            .kind = FAKECUDA_ACTIVITY_KERNEL,
            .name = GRAPH_KERNEL_NAME,
            .grid_x = 1, .grid_y = 1, .grid_z = 1, .block_x = 1, .block_y = 1, .block_z = 1,
            .registers = 32,
        };
        if (end != FC_CAPTURED)
            a.graph_id = e ? e->graph_id : FAKECUDA_FOREIGN_GRAPH_ID;
        fc_activity_report(sink, s, &a, end, dur, g);
        return;
    }
    int64_t t = end == FC_CAPTURED ? 0 : end - dur;
    for (size_t i = 0; i < e->desc.n; i++) {
        struct fakecuda_activity a = e->desc.v[i].a;
        int64_t d = e->desc.v[i].dur;
        if (end == FC_CAPTURED) {
            if (g)
                fc_graph_capture_node(g, &a, d);
            continue;
        }
        t += d;
        a.graph_id = e->graph_id;
        a.continues_call = i > 0;
        fc_activity_report(sink, s, &a, t, d, NULL);
    }
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
    fc_exec *found = NULL;
    pthread_mutex_lock(&exec_lock);
    for (fc_exec *e = execs; e; e = e->next)
        if (e == (fc_exec *)x) {
            dur = e->dur;
            found = e;
            break;
        }
    pthread_mutex_unlock(&exec_lock);
    struct fc_graph *g = NULL;
    int64_t end = fc_enqueue_op(s, dur, &g);
    fakecuda_activity_sink_fn sink = fc_cfg.graph_records ? fc_sink() : NULL;
    if (__builtin_expect(sink != NULL || end == FC_CAPTURED, 0))
        report_graph(sink, s, found, dur, end, g);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{ return graph_launch(hGraphExec, hStream, 0); }
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{ return graph_launch(hGraphExec, hStream, 1); }
