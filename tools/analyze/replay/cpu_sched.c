/* The host's CPUs shared among a world's threads (cpu_sched.h says the model). */
#include "cpu_sched.h"

#include <math.h>
#include <string.h>

/* (times are ns as doubles: a step ends when what is left is below this) */
#define EPS_NS 1e-3

static double cap_of(const struct an_cs_thread *t)
{
    return t->cap > 0 ? t->cap : 1.0;
}

static int forever(const struct an_cs_thread *t)
{
    return t->repeat == AN_CS_FOREVER;
}

static const struct an_cs_step *step_of(const struct an_cs_thread *t)
{
    return t->done || t->at >= t->nsteps ? NULL : &t->steps[t->at];
}

/* The step under way begins: what it has left to do. */
static void begin_step(struct an_cs *cs, struct an_cs_thread *t)
{
    const struct an_cs_step *s = step_of(t);
    if (!s)
        return;
    t->left = s->kind == AN_CS_WORK ? s->ns : s->kind == AN_CS_SLEEP ? cs->now + s->ns : 0;
}

/* The thread goes on to its next step; after its last, to its first again while it repeats. */
static void next_step(struct an_cs *cs, struct an_cs_thread *t)
{
    if (++t->at >= t->nsteps) {
        uint32_t rounds = t->repeat > 1 ? t->repeat : 1;
        if (forever(t) || ++t->round < rounds) {
            t->at = 0;
        } else {
            t->done = 1;
            t->end_ns = cs->now;
            return;
        }
    }
    begin_step(cs, t);
}

/* A wait whose event has a signal takes it and the thread goes on. */
static int try_wait(struct an_cs *cs, struct an_cs_thread *t, const struct an_cs_step *s)
{
    if (!cs->count[s->event])
        return 0;
    cs->count[s->event]--;
    next_step(cs, t);
    return 1;
}

/* The steps that take no time, done now, over and over while any thread moves (a signal
 * may free a thread earlier in the list). Thread order breaks ties between two waits on
 * one event. A thread's pass is bounded: a thread of instant steps only (a forever one)
 * would otherwise never let time move. */
static void settle(struct an_cs *cs)
{
    for (int moved = 1; moved;) {
        moved = 0;
        for (size_t i = 0; i < cs->nthreads; i++) {
            struct an_cs_thread *t = &cs->threads[i];
            for (size_t guard = 0; guard <= t->nsteps; guard++) {
                const struct an_cs_step *s = step_of(t);
                if (!s)
                    break;
                int went = 0;
                if (s->kind == AN_CS_SIGNAL) {
                    cs->count[s->event]++;
                    next_step(cs, t);
                    went = 1;
                } else if (s->kind == AN_CS_WAIT) {
                    went = try_wait(cs, t, s);
                } else if ((s->kind == AN_CS_WORK && t->left <= EPS_NS) ||
                           (s->kind == AN_CS_SLEEP && t->left <= cs->now + EPS_NS)) {
                    next_step(cs, t);
                    went = 1;
                }
                if (!went)
                    break;
                moved = 1;
            }
        }
    }
}

/* Whether t competes for a CPU now: working, or spinning in a wait. */
static int runnable(const struct an_cs_thread *t)
{
    const struct an_cs_step *s = step_of(t);
    return s && (s->kind == AN_CS_WORK || (s->kind == AN_CS_WAIT && s->spin));
}

/* Processor sharing with caps, in each pool apart: its runnable threads in order of their
 * caps, each takes the least of its cap and an equal part of what the ones before left
 * (water-filling). */
static void share_pool(struct an_cs *cs, uint32_t pool)
{
    size_t order[AN_CS_MAX_THREADS], n = 0;
    for (size_t i = 0; i < cs->nthreads; i++) {
        if (cs->threads[i].pool != pool || !runnable(&cs->threads[i]))
            continue;
        size_t k = n++;
        double cap = cap_of(&cs->threads[i]);
        for (; k > 0 && cap_of(&cs->threads[order[k - 1]]) > cap; k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    double left = cs->capacity[pool];
    for (size_t k = 0; k < n; k++) {
        struct an_cs_thread *t = &cs->threads[order[k]];
        double fair = left / (double)(n - k);
        t->rate = cap_of(t) < fair ? cap_of(t) : fair;
        left -= t->rate;
    }
}

static void share(struct an_cs *cs)
{
    unsigned used = 0;
    for (size_t i = 0; i < cs->nthreads; i++) {
        cs->threads[i].rate = 0;
        used |= 1u << cs->threads[i].pool;
    }
    for (uint32_t pool = 0; pool < AN_CS_MAX_POOLS; pool++)
        if (used & (1u << pool))
            share_pool(cs, pool);
}

int an_cs_set_pool(struct an_cs *cs, uint32_t pool, double capacity)
{
    if (pool == 0 || pool >= AN_CS_MAX_POOLS || capacity < 0)
        return -1;
    cs->capacity[pool] = capacity;
    return 0;
}

int an_cs_init(struct an_cs *cs, double cpus, struct an_cs_thread *threads, size_t nthreads)
{
    memset(cs, 0, sizeof *cs);
    if (nthreads > AN_CS_MAX_THREADS)
        return -1;
    for (size_t i = 0; i < nthreads; i++) {
        if (threads[i].pool >= AN_CS_MAX_POOLS)
            return -1;
        for (size_t k = 0; k < threads[i].nsteps; k++)
            if ((threads[i].steps[k].kind == AN_CS_WAIT ||
                 threads[i].steps[k].kind == AN_CS_SIGNAL) &&
                threads[i].steps[k].event >= AN_CS_MAX_EVENTS)
                return -1;
    }
    cs->capacity[0] = cpus;
    cs->threads = threads;
    cs->nthreads = nthreads;
    for (size_t i = 0; i < nthreads; i++) {
        struct an_cs_thread *t = &threads[i];
        t->at = 0, t->round = 0, t->rate = 0;
        t->cpu_ns = t->runq_ns = t->spin_ns = t->end_ns = 0;
        t->done = t->nsteps == 0;
        begin_step(cs, t);
    }
    return 0;
}

int an_cs_signal_at(struct an_cs *cs, uint32_t event, double at)
{
    if (event >= AN_CS_MAX_EVENTS || cs->ntimed == AN_CS_MAX_TIMED)
        return -1;
    size_t k = cs->ntimed++;
    for (; k > 0 && cs->timed[k - 1].at > at; k--)
        cs->timed[k] = cs->timed[k - 1];
    cs->timed[k].at = at;
    cs->timed[k].event = event;
    return 0;
}

/* The timed signals due by now, taken off the front. */
static void fire_due(struct an_cs *cs)
{
    size_t due = 0;
    while (due < cs->ntimed && cs->timed[due].at <= cs->now + EPS_NS)
        cs->count[cs->timed[due++].event]++;
    memmove(cs->timed, cs->timed + due, (cs->ntimed - due) * sizeof cs->timed[0]);
    cs->ntimed -= due;
}

static int all_done(const struct an_cs *cs)
{
    for (size_t i = 0; i < cs->nthreads; i++)
        if (!cs->threads[i].done && !forever(&cs->threads[i]))
            return 0;
    return 1;
}

/* How long until the next thing happens: a work or a sleep ends, a timed signal, `until`. */
static double next_event_in(const struct an_cs *cs, double until)
{
    double dt = INFINITY;
    for (size_t i = 0; i < cs->nthreads; i++) {
        const struct an_cs_thread *t = &cs->threads[i];
        const struct an_cs_step *s = step_of(t);
        if (s && s->kind == AN_CS_WORK && t->rate > 0)
            dt = fmin(dt, t->left / t->rate);
        else if (s && s->kind == AN_CS_SLEEP)
            dt = fmin(dt, t->left - cs->now);
    }
    if (cs->ntimed)
        dt = fmin(dt, cs->timed[0].at - cs->now);
    return fmax(fmin(dt, until - cs->now), 0);
}

/* Time moves by dt at the rates shared: CPU used, run-queue time, work done. */
static void advance(struct an_cs *cs, double dt)
{
    for (size_t i = 0; i < cs->nthreads; i++) {
        struct an_cs_thread *t = &cs->threads[i];
        if (!runnable(t))
            continue;
        t->cpu_ns += t->rate * dt;
        t->runq_ns += (cap_of(t) - t->rate) * dt;
        if (step_of(t)->kind == AN_CS_WORK)
            t->left -= t->rate * dt;
        else
            t->spin_ns += t->rate * dt;
    }
    cs->now += dt;
}

enum an_cs_status an_cs_run(struct an_cs *cs, double until)
{
    fire_due(cs);
    settle(cs);
    for (;;) {
        if (all_done(cs))
            return AN_CS_ALL_DONE;
        if (cs->now >= until)
            return AN_CS_UNTIL;
        share(cs);
        double dt = next_event_in(cs, until);
        if (!isfinite(dt))
            return AN_CS_STUCK;
        advance(cs, dt);
        fire_due(cs);
        settle(cs);
    }
}
