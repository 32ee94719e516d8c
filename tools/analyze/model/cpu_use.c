/* The CPU samples of cpu_use.h: series in bounded memory, and their sums over a span. */
#include "cpu_use.h"

#include <stdlib.h>
#include <string.h>

static void add_point(struct an_cpu_series *s, const struct an_cpu_point *p)
{
    /* cumulative counters: a point dropped loses only resolution, never time */
    if (s->stride > 1 && ++s->skipped < s->stride)
        return;
    s->skipped = 0;
    if (s->n == s->cap) {
        if (s->cap >= AN_CPU_MAX_SAMPLES) {
            size_t kept = 0;
            for (size_t i = 0; i < s->n; i += 2)
                s->points[kept++] = s->points[i];
            s->n = kept;
            s->stride = s->stride ? s->stride * 2 : 2;
        } else {
            size_t cap = s->cap ? s->cap * 2 : 64;
            struct an_cpu_point *grown = realloc(s->points, cap * sizeof *grown);
            if (!grown)
                return;
            s->points = grown;
            s->cap = cap;
        }
    }
    s->points[s->n++] = *p;
}

void an_cpu_sample(struct an_cpu_samples *s, const struct an_ev *ev)
{
    if (ev->kind == AN_CPU_PROC) {
        struct an_cpu_point p = {.ts = ev->ts, .cpu_ns = ev->ptr, .process_cpu_ns = ev->bytes,
                                 .count = (uint32_t)ev->key, .active = (uint32_t)ev->stream,
                                 .machine_ns = ev->end - ev->ts, .has_machine = ev->dir == 1};
        add_point(&s->process, &p);
        return;
    }
    struct an_cpu_series *t = NULL;
    for (size_t i = 0; i < s->nthreads && !t; i++)
        if (s->threads[i].id == ev->ptr)
            t = &s->threads[i];
    if (!t) {
        if (s->nthreads == AN_CPU_MAX_THREADS)
            return;
        t = &s->threads[s->nthreads++];
        t->id = ev->ptr;
    }
    struct an_cpu_point p = {.ts = ev->ts, .cpu_ns = ev->bytes, .wait_ns = ev->key,
                             .wait_cpu_ns = ev->stream, .runq_ns = ev->end - ev->ts,
                             .has_runq = ev->dir == 1};
    add_point(t, &p);
}

/* The points at or after start and at or before end: [*first, *last]; 0 when fewer than
 * two, or when they cover under half the span (the samples stopped, or started late). */
static int within(const struct an_cpu_series *s, uint64_t start, uint64_t end, size_t *first,
                  size_t *last)
{
    size_t a = 0;
    while (a < s->n && s->points[a].ts < start)
        a++;
    size_t b = a;
    while (b + 1 < s->n && s->points[b + 1].ts <= end)
        b++;
    if (a >= s->n || b <= a)
        return 0;
    uint64_t covered = s->points[b].ts - s->points[a].ts;
    if (covered * 2 < end - start)
        return 0;
    *first = a;
    *last = b;
    return 1;
}

/* How far a cumulative counter went from a to b (0 when it went back: a thread's counters
 * start again in a forked child, a sum of descendants drops when one exits). */
static uint64_t growth(uint64_t a, uint64_t b)
{
    return b > a ? b - a : 0;
}

/* A thread between points a and b: its CPU time per ns outside its waits for the GPU
 * (*busy), the share of the span it waited (*wait) and the share of the waits it spent on
 * a CPU (*wait_cpu). /proc's CPU time comes in clock ticks, the waits' exact: clamped. */
static void thread_shares(const struct an_cpu_series *s, size_t a, size_t b, double *busy,
                          double *wait, double *wait_cpu)
{
    const struct an_cpu_point *pa = &s->points[a], *pb = &s->points[b];
    uint64_t dt = pb->ts - pa->ts;
    uint64_t cpu = growth(pa->cpu_ns, pb->cpu_ns);
    uint64_t waited = growth(pa->wait_ns, pb->wait_ns);
    uint64_t waited_cpu = growth(pa->wait_cpu_ns, pb->wait_cpu_ns);
    waited = waited < dt ? waited : dt;
    waited_cpu = waited_cpu < waited ? waited_cpu : waited;
    uint64_t outside = dt - waited, outside_cpu = cpu > waited_cpu ? cpu - waited_cpu : 0;
    *busy = outside ? (double)outside_cpu / (double)outside : 0;
    *wait = dt ? (double)waited / (double)dt : 0;
    *wait_cpu = waited ? (double)waited_cpu / (double)waited : 0;
}

void an_cpu_summarize(const struct an_cpu_samples *s, uint64_t start, uint64_t end,
                      uint32_t pid, struct an_cpu_use *out)
{
    memset(out, 0, sizeof *out);
    size_t a, b;
    if (end <= start || !within(&s->process, start, end, &a, &b))
        return;
    const struct an_cpu_point *p = s->process.points;
    uint64_t dt = p[b].ts - p[a].ts, workers_ns = 0;
    for (size_t i = a + 1; i <= b; i++) {
        /* the descendants' sum drops when one exits: its last interval is lost */
        workers_ns += growth(p[i - 1].cpu_ns, p[i].cpu_ns);
        out->workers = p[i].active > out->workers ? p[i].active : out->workers;
        out->processes = p[i].count > out->processes ? p[i].count : out->processes;
    }
    out->workers_cpus = (double)workers_ns / (double)dt;
    out->process_cpus = (double)growth(p[a].process_cpu_ns, p[b].process_cpu_ns) / (double)dt;
    if (p[a].has_machine && p[b].has_machine) {
        /* /proc/stat counts in clock ticks: the others' share is what is left, never below 0 */
        double machine = (double)growth(p[a].machine_ns, p[b].machine_ns) / (double)dt;
        double others = machine - out->process_cpus - out->workers_cpus;
        out->others_known = 1;
        out->others_cpus = others > 0 ? others : 0;
    }
    const struct an_cpu_series *train = NULL;
    double train_busy = 0, train_wait = 0, train_wait_cpu = 0;
    size_t train_a = 0, train_b = 0;
    double traced_cpus = 0, train_cpu_rate = 0;  /* every traced thread's CPU time / span */
    for (size_t i = 0; i < s->nthreads; i++) {
        size_t ta, tb;
        if (!within(&s->threads[i], start, end, &ta, &tb))
            continue;
        double share, wait, wait_cpu;
        thread_shares(&s->threads[i], ta, tb, &share, &wait, &wait_cpu);
        const struct an_cpu_point *pa = &s->threads[i].points[ta], *pb = &s->threads[i].points[tb];
        double rate = pb->ts > pa->ts ? (double)growth(pa->cpu_ns, pb->cpu_ns) /
                                            (double)(pb->ts - pa->ts)
                                      : 0;
        traced_cpus += rate;
        int main_thread = s->threads[i].id == pid;
        if (!train || main_thread || (train->id != pid && share > train_busy)) {
            train = &s->threads[i];
            train_a = ta, train_b = tb;
            train_busy = share;
            train_wait = wait;
            train_wait_cpu = wait_cpu;
            train_cpu_rate = rate;
        }
    }
    if (!train)
        return;
    out->traced_others_cpus = traced_cpus > train_cpu_rate ? traced_cpus - train_cpu_rate : 0;
    out->known = 1;
    out->train_tid = (uint32_t)train->id;
    out->train_busy = train_busy > 1 ? 1 : train_busy;
    out->train_wait = train_wait;
    out->train_wait_cpu = train_wait_cpu;
    out->train_cpus = out->train_busy * (1 - train_wait) + train_wait * train_wait_cpu;
    const struct an_cpu_point *ra = &train->points[train_a], *rb = &train->points[train_b];
    if (ra->has_runq && rb->has_runq && rb->ts > ra->ts) {
        out->runq_known = 1;
        out->train_runq = (double)growth(ra->runq_ns, rb->runq_ns) / (double)(rb->ts - ra->ts);
        if (out->train_runq > 1)
            out->train_runq = 1;
    }
}

/* The counter at t, on the line through the two points nearest t (s->n >= 2). */
static double runq_at(const struct an_cpu_series *s, uint64_t t)
{
    size_t b = 1;
    while (b + 1 < s->n && s->points[b].ts < t)
        b++;
    const struct an_cpu_point *pa = &s->points[b - 1], *pb = &s->points[b];
    if (pb->ts <= pa->ts)
        return (double)pa->runq_ns;
    double rate = (double)growth(pa->runq_ns, pb->runq_ns) / (double)(pb->ts - pa->ts);
    return (double)pa->runq_ns + rate * ((double)t - (double)pa->ts);
}

uint64_t an_cpu_preempted(const struct an_cpu_samples *s, uint32_t pid, uint64_t t0,
                          uint64_t t1)
{
    /* the main thread, else (not sampled) the one with the most CPU time */
    const struct an_cpu_series *t = NULL;
    for (size_t i = 0; i < s->nthreads; i++) {
        const struct an_cpu_series *c = &s->threads[i];
        if (!c->n || (t && t->id == pid))
            continue;
        if (!t || c->id == pid || c->points[c->n - 1].cpu_ns > t->points[t->n - 1].cpu_ns)
            t = c;
    }
    if (!t || t->n < 2 || t1 <= t0 || !t->points[0].has_runq || !t->points[t->n - 1].has_runq)
        return 0;
    double d = runq_at(t, t1) - runq_at(t, t0);
    if (d <= 0)
        return 0;
    return d < (double)(t1 - t0) ? (uint64_t)d : t1 - t0;
}

void an_cpu_free(struct an_cpu_samples *s)
{
    free(s->process.points);
    for (size_t i = 0; i < s->nthreads; i++)
        free(s->threads[i].points);
    memset(s, 0, sizeof *s);
}
