/*
 * Synthetic event streams for the analyzer's unit tests: single events, and a training
 * loop generator with a tiny simulated GPU (one stream, ops run in order, each starting
 * when both it was issued and the previous op ended), so that each rule can be fed a run
 * just below or just above its threshold. Host and GPU records come out as a real trace
 * would give them (GPU records in a separate stream, optional).
 */
#ifndef GPUWATCH_TESTS_ANALYZE_SYNTH_H
#define GPUWATCH_TESTS_ANALYZE_SYNTH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "an_event.h"
#include "findings.h"
#include "model.h"
#include "rules.h"

#define MS 1000000ull
#define US 1000ull

struct synth {
    unsigned cpus;       /* the CPUs the traced process could use (0: unknown, 1 worker) */
    uint64_t host_copy_bps;  /* the host's memcpy rate the shim measured (0: none) */
    uint64_t wake_ns;        /* a sleeping thread's wake-up latency it was handed (0: none) */
    struct an_ev *ev;
    size_t n, cap;
    uint64_t now;        /* host time */
    uint64_t gpu_end;    /* when the stream's last op ends */
    int gpu_records;     /* emit GPU records (a CUPTI trace) */
    uint64_t next_ptr;
};

static inline void synth_push(struct synth *s, const struct an_ev *e)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->ev = realloc(s->ev, s->cap * sizeof *s->ev);
        if (!s->ev)
            abort();
    }
    s->ev[s->n++] = *e;
}

static inline void synth_free(struct synth *s)
{
    free(s->ev);
    memset(s, 0, sizeof *s);
}

/* A host call [now, now + dur) on thread 1; advances the host clock. */
static inline struct an_ev *synth_call(struct synth *s, uint8_t kind, unsigned api,
                                       uint64_t dur, uint8_t flags)
{
    struct an_ev e = {0};
    e.ts = s->now;
    e.end = s->now + dur;
    e.tid = 1;
    e.api = (uint16_t)api;
    e.kind = kind;
    e.flags = flags;
    e.stream = 1;
    synth_push(s, &e);
    s->now += dur;
    return &s->ev[s->n - 1];
}

/* A GPU op issued at `issued` lasting dur: runs after the previous one. */
static inline void synth_gpu(struct synth *s, uint8_t kind, uint64_t issued, uint64_t dur,
                             uint8_t dir, uint8_t host_kind, uint64_t bytes)
{
    uint64_t start = issued > s->gpu_end ? issued : s->gpu_end;
    s->gpu_end = start + dur;
    if (!s->gpu_records)
        return;
    struct an_ev e = {0};
    e.ts = start;
    e.end = start + dur;
    e.kind = kind;
    e.stream = 1;  /* the stream the host calls issue on (the reader maps CUPTI's ids) */
    e.dir = dir;
    e.host_kind = host_kind;
    e.bytes = bytes;
    synth_push(s, &e);
}

static inline void synth_idle(struct synth *s, uint64_t ns)
{
    s->now += ns;
}

static inline void synth_launch(struct synth *s, uint64_t host_ns, uint64_t kernel_ns)
{
    struct an_ev *e = synth_call(s, AN_LAUNCH, GW_API_cuLaunchKernel, host_ns, AN_F_KERNEL);
    e->key = 1;
    synth_gpu(s, AN_GPU_KERNEL, e->end, kernel_ns, 0, 0, 0);
}

/* A CUDA graph replay: one call, gpu_ns of the graph's kernels on the GPU (CUPTI's record
 * says a graph ran it). */
static inline void synth_graph_launch(struct synth *s, uint64_t host_ns, uint64_t gpu_ns)
{
    synth_call(s, AN_LAUNCH, GW_API_cuGraphLaunch, host_ns, 0);
    size_t before = s->n;
    synth_gpu(s, AN_GPU_KERNEL, s->now, gpu_ns, 0, 0, 0);
    if (s->n > before)
        s->ev[s->n - 1].flags |= AN_F_GRAPH_NODE;
}

/* Async pinned H2D (returns at once) or blocking pageable H2D (waits for the copy). */
static inline void synth_h2d(struct synth *s, uint64_t bytes, uint64_t copy_ns, int pageable)
{
    uint64_t issued = s->now;
    if (!pageable) {
        struct an_ev *e = synth_call(s, AN_COPY, GW_API_cuMemcpyHtoDAsync_v2, 2 * US,
                                     AN_F_ASYNC_API);
        e->dir = GW_COPY_HTOD;
        e->host_kind = GW_HOST_PINNED;
        e->bytes = bytes;
        synth_gpu(s, AN_GPU_COPY, issued, copy_ns, GW_COPY_HTOD, GW_HOST_PINNED, bytes);
        return;
    }
    synth_gpu(s, AN_GPU_COPY, issued, copy_ns, GW_COPY_HTOD, GW_HOST_PAGEABLE, bytes);
    uint64_t dur = s->gpu_end - issued;
    struct an_ev *e = synth_call(s, AN_COPY, GW_API_cuMemcpyHtoDAsync_v2, dur,
                                 AN_F_ASYNC_API | AN_F_BLOCKING);
    e->dir = GW_COPY_HTOD;
    e->host_kind = GW_HOST_PAGEABLE;
    e->bytes = bytes;
}

/* loss.item(): a 4-byte copy to pageable memory that waits for the stream. */
static inline void synth_item(struct synth *s)
{
    uint64_t issued = s->now;
    synth_gpu(s, AN_GPU_COPY, issued, 1 * US, GW_COPY_DTOH, GW_HOST_PAGEABLE, 4);
    uint64_t dur = s->gpu_end - issued + 2 * US;
    struct an_ev *e = synth_call(s, AN_COPY, GW_API_cuMemcpyDtoHAsync_v2, dur,
                                 AN_F_ASYNC_API | AN_F_BLOCKING | AN_F_DRAINS);
    e->dir = GW_COPY_DTOH;
    e->host_kind = GW_HOST_PAGEABLE;
    e->bytes = 4;
}

/* tensor.cpu() into pageable memory: a blocking download that waits for the stream, then
 * moves `bytes` in copy_ns. */
static inline void synth_download(struct synth *s, uint64_t bytes, uint64_t copy_ns)
{
    uint64_t issued = s->now;
    synth_gpu(s, AN_GPU_COPY, issued, copy_ns, GW_COPY_DTOH, GW_HOST_PAGEABLE, bytes);
    uint64_t dur = s->gpu_end - issued + 2 * US;
    struct an_ev *e = synth_call(s, AN_COPY, GW_API_cuMemcpyDtoH_v2, dur,
                                 AN_F_BLOCKING | AN_F_DRAINS);
    e->dir = GW_COPY_DTOH;
    e->host_kind = GW_HOST_PAGEABLE;
    e->bytes = bytes;
}

static inline void synth_stream_sync(struct synth *s)
{
    uint64_t wait = s->gpu_end > s->now ? s->gpu_end - s->now : 0;
    synth_call(s, AN_SYNC, GW_API_cuStreamSynchronize, wait + 2 * US, AN_F_DRAINS);
}

static inline uint64_t synth_alloc(struct synth *s, uint64_t bytes, int oom)
{
    uint64_t ptr = oom ? 0 : (s->next_ptr += 1ull << 32);
    struct an_ev *e = synth_call(s, AN_ALLOC, GW_API_cuMemAlloc_v2, 20 * US,
                                 oom ? AN_F_ERROR | AN_F_OOM : 0);
    e->ptr = ptr;
    e->bytes = bytes;
    e->host_kind = AN_MEM_PLAIN;
    return ptr;
}

static inline void synth_free_ptr(struct synth *s, uint64_t ptr, uint64_t wait)
{
    struct an_ev *e = synth_call(s, AN_FREE, GW_API_cuMemFree_v2, wait + 10 * US,
                                 AN_F_DRAINS | AN_F_ALL_STREAMS);
    e->ptr = ptr;
}

/* One training loop, each knob planting one thing. */
struct loop {
    unsigned steps;
    uint64_t input_ns;        /* host time with no CUDA call before each step */
    uint64_t h2d_bytes, h2d_ns;   /* each H2D copy */
    int h2d_pageable;
    unsigned h2d_copies;      /* H2D copies per step (0 or 1: one) */
    unsigned kernels;         /* per step */
    uint64_t kernel_ns, launch_ns;
    unsigned graphs;          /* CUDA graph replays per step, before the kernels */
    uint64_t graph_ns;        /* ... each running this long on the GPU */
    int item;                 /* loss.item() at the end of each step */
    unsigned item_every;      /* ... only every N steps (0 or 1: every step) */
    uint64_t after_item_ns;   /* host work after it (logging) */
    uint64_t leak_bytes;      /* allocated every step, never freed */
    unsigned churn_every;     /* an alloc + free pair every N steps (0: never) */
};

static inline void synth_loop(struct synth *s, const struct loop *L)
{
    if (!s->now)
        s->now = 1000 * MS;
    if (!s->n)
        synth_alloc(s, 64ull << 20, 0);  /* weights, once */
    for (unsigned i = 0; i < L->steps; i++) {
        synth_idle(s, L->input_ns);
        for (unsigned c = 0; L->h2d_bytes && c < (L->h2d_copies ? L->h2d_copies : 1); c++)
            synth_h2d(s, L->h2d_bytes, L->h2d_ns, L->h2d_pageable);
        if (L->input_ns && !L->h2d_bytes)  /* a batch loaded is a batch uploaded */
            synth_h2d(s, 4096, 1 * US, 0);
        for (unsigned g = 0; g < L->graphs; g++)
            synth_graph_launch(s, L->launch_ns, L->graph_ns);
        for (unsigned k = 0; k < L->kernels; k++)
            synth_launch(s, L->launch_ns, L->kernel_ns);
        if (L->leak_bytes)
            synth_alloc(s, L->leak_bytes, 0);
        if (L->churn_every && i % L->churn_every == 0) {
            uint64_t p = synth_alloc(s, 1ull << 20, 0);
            /* cudaFree waits for the device */
            synth_free_ptr(s, p, s->gpu_end > s->now ? s->gpu_end - s->now : 0);
        }
        if (L->item && (L->item_every <= 1 || i % L->item_every == 0)) {
            synth_item(s);
            synth_idle(s, L->after_item_ns);
        } else {
            /* a host that never waits still marks the step: an event sync two steps back */
            synth_call(s, AN_SYNC, GW_API_cuEventSynchronize, 2 * US, AN_F_DRAINS)->key = 99;
        }
    }
    synth_stream_sync(s);
}

/* Model of the synthetic run (header: a 1 GiB device, nothing used by others). */
static inline struct an_model *synth_model(struct synth *s, const struct an_thresholds *th,
                                           uint64_t capacity, uint64_t others)
{
    struct gw_file_header h;
    memset(&h, 0, sizeof h);
    h.device_total_mem = capacity;
    h.device_free_at_start = capacity - others;
    h.cupti_status = s->gpu_records ? GW_CUPTI_ACTIVE : GW_CUPTI_DISABLED;
    struct an_model *m = an_model_new(th, &h);
    if (!m)
        abort();
    if (s->cpus)
        an_model_set_cpus(m, s->cpus);
    if (s->host_copy_bps || s->wake_ns)
        an_model_set_host_copy(m, s->host_copy_bps, s->wake_ns);
    an_model_feed_all(m, s->ev, s->n);
    return m;
}

/* Runs one rule on a model; returns its finding or NULL. */
static inline const struct an_finding *synth_rule(const struct an_model *m, an_rule_fn rule,
                                                  struct an_findings *out, unsigned cpus)
{
    struct an_rule_ctx ctx = {.cpus = cpus, .local_world = 1, .so_far = out};
    size_t before = out->count;
    rule(m, &ctx, out);
    return out->count > before ? &out->items[out->count - 1] : NULL;
}

/* A finding's figure by key, or NULL. */
static inline const struct an_figure *synth_fig(const struct an_finding *f, const char *key)
{
    for (size_t i = 0; i < f->nfig; i++)
        if (!strcmp(f->fig[i].key, key))
            return &f->fig[i];
    return NULL;
}

/* A rule's threshold check, for sweeps across min_share (thresholds.h): the share of the
 * loop the replay of w saves (*share), whether it reaches min_share (*worth); returns 1 when
 * the rule's finding f (NULL: none) fired exactly then. */
static inline int synth_fires_at_min_share(const struct an_model *m, const struct an_finding *f,
                                           enum an_whatif w, double *share, int *worth)
{
    *share = an_whatif_share(m, an_replay_saving(&m->replay, w));
    *worth = *share >= m->th.min_share;
    return (f != NULL) == *worth;
}

#endif
