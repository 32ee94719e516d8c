/*
 * The truth a random run (random_run.h) knows and the model must agree with: the GPU's
 * busy time, as the run's own records give it. With GPU records the model's figure must be
 * exactly that; from host evidence alone it must be an upper bound (the report says "at
 * most"). Shared by the property tests and the model fuzzer.
 */
#ifndef GPUWATCH_TESTS_ANALYZE_RUN_ORACLE_H
#define GPUWATCH_TESTS_ANALYZE_RUN_ORACLE_H

#include <stdlib.h>

#include "invariants.h"
#include "random_run.h"

static inline int oracle_by_start(const void *a, const void *b)
{
    const struct an_ev *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The union, on one device (or on any, device < 0), of every GPU record but pageable
 * host-to-device copies (idle by design: the host stages them while the GPU computes
 * nothing). */
static inline uint64_t oracle_true_busy(const struct rr *r, int device)
{
    struct an_ev *busy = malloc((r->s.n + 1) * sizeof *busy);
    if (!busy)
        abort();
    size_t n = 0;
    for (size_t i = 0; i < r->s.n; i++) {
        const struct an_ev *e = &r->s.ev[i];
        if (!an_is_gpu(e) || e->kind == AN_GPU_LOST ||
            (device >= 0 && e->tid != (uint32_t)device))
            continue;
        if (e->kind == AN_GPU_COPY && e->dir == GW_COPY_HTOD &&
            e->host_kind == GW_HOST_PAGEABLE)
            continue;
        busy[n++] = *e;
    }
    qsort(busy, n, sizeof *busy, oracle_by_start);
    uint64_t total = 0, open_start = 0, open_end = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || busy[i].ts > open_end) {
            total += open_end - open_start;
            open_start = busy[i].ts;
            open_end = busy[i].end;
        } else if (busy[i].end > open_end) {
            open_end = busy[i].end;
        }
    }
    total += open_end - open_start;
    free(busy);
    return total;
}

/* 0 when the model's busy time agrees with the run made from these bytes (r, with or
 * without GPU records); 1 with v->why otherwise. */
static inline int oracle_busy(const uint8_t *bytes, size_t n, int gpu_records,
                              const struct rr *r, const struct an_model *m, struct inv *v)
{
    if (gpu_records) {
        if (m->late_events || !m->gpu_timeline)
            return 0;
        uint64_t want = oracle_true_busy(r, 0) + oracle_true_busy(r, 1);
        return !inv_check(v, m->total.gpu_busy_ns == want, "GPU busy %llu, the records' %llu",
                          (unsigned long long)m->total.gpu_busy_ns, (unsigned long long)want);
    }
    /* the bound holds for what calls proved; a stream taken as done without proof (the
     * documented two-drains assumption) may not be */
    if (m->assumed_drains)
        return 0;
    /* the same run with its records: the truth the host-only model bounds */
    struct rr *full = malloc(sizeof *full);
    if (!full)
        abort();
    struct rr_bytes in = {bytes, n, 0};
    rr_generate(full, &in, 1);
    uint64_t want = oracle_true_busy(full, -1);
    synth_free(&full->s);
    free(full);
    uint64_t bound = an_busy_ns(m, &m->total, m->wall_ns);
    return !inv_check(v, bound >= want, "host-only busy bound %llu < the GPU's busy %llu",
                      (unsigned long long)bound, (unsigned long long)want);
}

/* No world beats the device (issue 36, class 5): with GPU records, no replayed world ends
 * before the busiest stream's kernels could run one after the other, nor, on a device that
 * never ran two streams' kernels at once in the measured run, before all of that device's
 * kernels could. (Kernels only: a change may make copies faster; from the first record
 * on: the replay's clocks start at the first host event, no later.) */
static inline int oracle_worlds(const struct rr *r, const struct an_model *m, struct inv *v)
{
    if (!r->s.gpu_records || !m->replay.done || m->late_events)
        return 0;
    uint64_t on_stream[RR_STREAMS + 1] = {0}, on_device[2] = {0};
    uint64_t last_end[2] = {0}, last_stream[2] = {0};
    int overlapped[2] = {0};
    struct an_ev *k = malloc((r->s.n + 1) * sizeof *k);
    if (!k)
        abort();
    size_t n = 0;
    for (size_t i = 0; i < r->s.n; i++) {
        const struct an_ev *e = &r->s.ev[i];
        if (e->kind == AN_GPU_KERNEL && e->stream <= RR_STREAMS && e->tid < 2)
            k[n++] = *e;
    }
    qsort(k, n, sizeof *k, oracle_by_start);
    for (size_t i = 0; i < n; i++) {
        uint32_t d = k[i].tid;
        on_stream[k[i].stream] += k[i].end - k[i].ts;
        on_device[d] += k[i].end - k[i].ts;
        if (k[i].ts < last_end[d] && k[i].stream != last_stream[d])
            overlapped[d] = 1;
        if (k[i].end > last_end[d]) {
            last_end[d] = k[i].end;
            last_stream[d] = k[i].stream;
        }
    }
    free(k);
    uint64_t bound = 0;
    for (unsigned s = 1; s <= RR_STREAMS; s++)
        bound = on_stream[s] > bound ? on_stream[s] : bound;
    for (unsigned d = 0; d < 2; d++)
        if (!overlapped[d] && on_device[d] > bound)
            bound = on_device[d];
    for (int w = 0; w < AN_WORLDS; w++)
        if (!inv_check(v, m->replay.wall_ns[w] >= bound,
                       "world %d (%#x) replayed %llu ns, the device's kernels need %llu", w,
                       an_world_changes(w), (unsigned long long)m->replay.wall_ns[w],
                       (unsigned long long)bound))
            return 1;
    return 0;
}

/* The run these bytes make, analyzed (a device of RR_CAPACITY plus `others` bytes that
 * other processes held at start) and checked: 0 when every invariant and the busy time
 * hold, 1 with v->why. The model and findings are the caller's to free. */
static inline int oracle_check_run(const uint8_t *bytes, size_t n, int gpu_records,
                                   uint64_t others, struct rr *r, struct an_model **model,
                                   struct an_findings *found, struct inv *v)
{
    struct rr_bytes in = {bytes, n, 0};
    rr_generate(r, &in, gpu_records);
    struct an_thresholds th = AN_THRESHOLDS_DEFAULT;
    struct an_model *m = synth_model(&r->s, &th, RR_CAPACITY + others, others);
    struct an_rule_ctx ctx = {.cpus = 8, .local_world = 1};
    an_run_rules(m, &ctx, found);
    *model = m;
    return inv_all(v, m, found) || oracle_busy(bytes, n, gpu_records, r, m, v) ||
           oracle_worlds(r, m, v);
}

#endif
