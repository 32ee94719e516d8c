/*
 * fakecuda: the simulated GPU clock.
 *
 * Simulated time is host CLOCK_MONOTONIC in ns. Each stream remembers when its last op ends
 * (busy_until). An op enqueued now starts at max(now, busy_until, implicit dependencies) and
 * ends dur_ns later; nothing runs, so enqueueing is a few atomics and never blocks.
 *
 * Legacy default stream semantics, per context: an op on the legacy (NULL) stream waits for
 * every op already enqueued on blocking streams (ctx->blocking_max), and an op on a blocking
 * stream (not CU_STREAM_NON_BLOCKING; the per-thread default stream is blocking) waits for the
 * legacy stream's last op. ctx->all_max covers every op for cuCtxSynchronize.
 */
#include "fakecuda.h"

#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

int64_t fc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void fc_sleep_until(int64_t t)
{
    fc_copy_engine_drain_downloads(t);  /* the host may read what the GPU wrote */
    if (t <= 0)
        return;
    /* CUDA's default scheduling spins: the waiting thread stays on a CPU; a context made
     * with CU_CTX_SCHED_BLOCKING_SYNC (cudaDeviceScheduleBlockingSync) sleeps, as all do
     * with FAKECUDA_SPIN_WAIT=0 */
    const fc_ctx *ctx = fc_current_ctx();
    int blocking = ctx && (ctx->flags & CU_CTX_SCHED_MASK) == CU_CTX_SCHED_BLOCKING_SYNC;
    if (fc_cfg.spin_wait && !blocking) {
        while (fc_now() < t)
            ;
        return;
    }
    /* A driver's blocking wait ends on the GPU's interrupt, not on a timer: no timer slack
     * (Linux lets a normal thread's timed sleep end 50 us late, which no driver adds) */
    struct timespec ts = { .tv_sec = t / 1000000000, .tv_nsec = t % 1000000000 };
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack > 1)
        prctl(PR_SET_TIMERSLACK, 1ul, 0, 0, 0);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
    if (slack > 1)
        prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
}

void fc_atomic_max(_Atomic int64_t *a, int64_t v)
{
    int64_t cur = atomic_load_explicit(a, memory_order_relaxed);
    while (cur < v &&
           !atomic_compare_exchange_weak_explicit(a, &cur, v, memory_order_acq_rel,
                                                  memory_order_relaxed))
        ;
}

static inline int is_blocking(const fc_stream *s)
{
    return s->kind != FC_STREAM_LEGACY && !(s->flags & CU_STREAM_NON_BLOCKING);
}

/* The earliest time an op issued now on s may start, apart from s's own queue. */
static inline int64_t implicit_dep(const fc_stream *s)
{
    const fc_ctx *c = s->ctx;
    if (s->kind == FC_STREAM_LEGACY)
        return atomic_load_explicit(&c->blocking_max, memory_order_acquire);
    if (is_blocking(s))
        return atomic_load_explicit(&c->legacy.busy_until, memory_order_acquire);
    return 0;
}

int64_t fc_enqueue_op(fc_stream *s, int64_t dur_ns, struct fc_graph **captured)
{
    struct fc_graph *g = atomic_load_explicit(&s->capture, memory_order_acquire);
    if (g) {
        fc_graph_capture_op(g, dur_ns);
        if (captured)
            *captured = g;
        return FC_CAPTURED;
    }
    int64_t dep = fc_now();
    int64_t d = implicit_dep(s);
    if (d > dep)
        dep = d;
    int64_t old = atomic_load_explicit(&s->busy_until, memory_order_relaxed), end;
    do {
        end = (old > dep ? old : dep) + dur_ns;
    } while (!atomic_compare_exchange_weak_explicit(&s->busy_until, &old, end,
                                                    memory_order_acq_rel, memory_order_relaxed));
    fc_ctx *c = s->ctx;
    if (is_blocking(s))
        fc_atomic_max(&c->blocking_max, end);
    fc_atomic_max(&c->all_max, end);
    return end;
}

int64_t fc_stream_point(fc_stream *s)
{
    int64_t t = atomic_load_explicit(&s->busy_until, memory_order_acquire);
    int64_t d = implicit_dep(s);
    return d > t ? d : t;
}

void fc_stream_wait_until(fc_stream *s, int64_t t)
{
    fc_atomic_max(&s->busy_until, t);
    fc_atomic_max(&s->ctx->all_max, t);
}

void fc_stream_extend(fc_stream *s, int64_t t)
{
    fc_atomic_max(&s->busy_until, t);
    if (is_blocking(s))
        fc_atomic_max(&s->ctx->blocking_max, t);
    fc_atomic_max(&s->ctx->all_max, t);
}

int64_t fc_copy_ns(size_t bytes, double gbps)
{
    /* 1 GB/s moves one byte per ns */
    return (int64_t)((double)bytes / gbps + 0.999);
}

static _Atomic int64_t next_id = 1;

int64_t fc_next_id(void)
{
    return atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
}
