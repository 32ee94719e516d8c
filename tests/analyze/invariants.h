/*
 * What must hold of every finished model and its findings, whatever the run: the
 * property tests (test_properties.c) and the model fuzzer (fuzz_model.c) check these on
 * random runs. Each check names the figure that broke it.
 */
#ifndef GPUWATCH_TESTS_ANALYZE_INVARIANTS_H
#define GPUWATCH_TESTS_ANALYZE_INVARIANTS_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "findings.h"
#include "model.h"
#include "rules.h"

struct inv {
    char why[512];
    int broken;
};

static inline __attribute__((format(printf, 3, 4))) int inv_check(struct inv *v, int holds,
                                                                 const char *fmt, ...)
{
    if (holds || v->broken)
        return holds;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->why, sizeof v->why, fmt, ap);
    va_end(ap);
    v->broken = 1;
    return 0;
}

/* Steady-state GPU figures come from time bins summed as doubles: a part may exceed the
 * whole by rounding, never by more than this. */
static inline uint64_t inv_slack(uint64_t whole)
{
    return whole / 1000 + 1000;
}

static inline void inv_totals(struct inv *v, const struct an_model *m)
{
    const struct an_totals *t = &m->total, *s = &m->steady;
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        inv_check(v, s->idle_gpu_ns[c] <= t->idle_gpu_ns[c] + inv_slack(t->idle_gpu_ns[c]),
                  "steady idle_gpu[%s] %llu > run %llu", an_cause_name(c),
                  (unsigned long long)s->idle_gpu_ns[c], (unsigned long long)t->idle_gpu_ns[c]);
        inv_check(v, s->idle_host_ns[c] <= t->idle_host_ns[c] + inv_slack(t->idle_host_ns[c]),
                  "steady idle_host[%s] %llu > run %llu", an_cause_name(c),
                  (unsigned long long)s->idle_host_ns[c],
                  (unsigned long long)t->idle_host_ns[c]);
    }
    inv_check(v, s->gpu_busy_ns <= t->gpu_busy_ns + inv_slack(t->gpu_busy_ns),
              "steady gpu_busy %llu > run %llu", (unsigned long long)s->gpu_busy_ns,
              (unsigned long long)t->gpu_busy_ns);
    /* the host's counters are exact differences of snapshots */
#define INV_LE(field)                                                                     \
    inv_check(v, s->field <= t->field, "steady " #field " %llu > run %llu",              \
              (unsigned long long)s->field, (unsigned long long)t->field)
    INV_LE(sync_wait_ns);
    INV_LE(syncs);
    INV_LE(launches);
    INV_LE(launch_ns);
    INV_LE(graph_launches);
    INV_LE(work_calls);
    INV_LE(h2d_blocked_ns);
    INV_LE(allocs);
    INV_LE(calls);
    INV_LE(host_gap_ns);
#undef INV_LE
    inv_check(v, t->graph_launches <= t->launches, "graph launches %llu > launches %llu",
              (unsigned long long)t->graph_launches, (unsigned long long)t->launches);
    inv_check(v, t->launches <= t->work_calls && t->work_calls <= t->calls,
              "launches %llu, work calls %llu, calls %llu out of order",
              (unsigned long long)t->launches, (unsigned long long)t->work_calls,
              (unsigned long long)t->calls);
}

/* Idle time and busy time fit in the time they were measured over. */
static inline void inv_timeline(struct inv *v, const struct an_model *m)
{
    inv_check(v, m->wall_ns == (m->last_ts > m->first_ts ? m->last_ts - m->first_ts : 0),
              "wall %llu != last - first", (unsigned long long)m->wall_ns);
    uint64_t host_idle = 0, gpu_idle = 0, span = 0;
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        host_idle += m->total.idle_host_ns[c];
        gpu_idle += m->total.idle_gpu_ns[c];
    }
    inv_check(v, host_idle <= m->wall_ns, "host-proven idle %llu > wall %llu",
              (unsigned long long)host_idle, (unsigned long long)m->wall_ns);
    for (size_t i = 0; i < m->ndev; i++) {
        const struct an_device_busy *d = &m->dev[i];
        inv_check(v, d->first <= d->last, "device %d: first %llu > last %llu", d->ordinal,
                  (unsigned long long)d->first, (unsigned long long)d->last);
        span += d->last - d->first;
    }
    /* each device's busy periods and the gaps between them tile its span; a late record
     * (released after later ones) may count twice, and the check is then off */
    if (!m->late_events)
        inv_check(v, m->total.gpu_busy_ns + gpu_idle <= span,
                  "GPU busy %llu + idle %llu > the devices' spans %llu",
                  (unsigned long long)m->total.gpu_busy_ns, (unsigned long long)gpu_idle,
                  (unsigned long long)span);
    double util = an_gpu_util(m), steady = an_steady_util(m);
    inv_check(v, util >= 0 && util <= 1, "utilization %g", util);
    inv_check(v, steady >= 0 && steady <= 1, "steady utilization %g", steady);
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        double share = an_steady_share(m, c);
        inv_check(v, share >= 0 && share <= 1.001 * (m->ndev ? m->ndev : 1),
                  "steady share of %s %g", an_cause_name(c), share);
    }
    inv_check(v, m->nlargest <= AN_KEEP_INTERVALS, "nlargest %zu", m->nlargest);
    for (size_t i = 0; i < m->nlargest; i++) {
        const struct an_interval *k = &m->largest[i];
        inv_check(v, k->start < k->end && k->start >= m->first_ts && k->end <= m->last_ts &&
                         k->cause < AN_CAUSE_COUNT,
                  "largest[%zu] [%llu, %llu) cause %u outside [%llu, %llu]", i,
                  (unsigned long long)k->start, (unsigned long long)k->end, k->cause,
                  (unsigned long long)m->first_ts, (unsigned long long)m->last_ts);
    }
}

static inline void inv_steps(struct inv *v, const struct an_model *m)
{
    const struct an_steps *s = &m->steps;
    inv_check(v, s->warmup + s->steady == s->count, "warm-up %llu + steady %llu != %llu",
              (unsigned long long)s->warmup, (unsigned long long)s->steady,
              (unsigned long long)s->count);
    inv_check(v, m->first_ts <= m->steady_start && m->steady_start <= m->steady_end &&
                     m->steady_end <= m->last_ts,
              "steady state [%llu, %llu] outside the run [%llu, %llu]",
              (unsigned long long)m->steady_start, (unsigned long long)m->steady_end,
              (unsigned long long)m->first_ts, (unsigned long long)m->last_ts);
    if (!s->steady)
        return;
    inv_check(v, s->min_ns <= s->median_ns && s->median_ns <= s->p90_ns &&
                     s->p90_ns <= s->max_ns && s->min_ns <= s->mean_ns &&
                     s->mean_ns <= s->max_ns,
              "step times out of order: min %llu median %llu p90 %llu max %llu mean %llu",
              (unsigned long long)s->min_ns, (unsigned long long)s->median_ns,
              (unsigned long long)s->p90_ns, (unsigned long long)s->max_ns,
              (unsigned long long)s->mean_ns);
    inv_check(v, s->median_ns > 0, "median step 0");
    inv_check(v, s->live_min <= s->live_first && s->live_first <= s->live_max &&
                     s->live_min <= s->live_last && s->live_last <= s->live_max,
              "memory at step boundaries out of order");
    inv_check(v, s->growth_steps <= s->sampled_steps, "growth steps %llu > sampled %llu",
              (unsigned long long)s->growth_steps, (unsigned long long)s->sampled_steps);
    inv_check(v, s->live_max <= m->mem.peak_total, "held at a boundary %llu > peak %llu",
              (unsigned long long)s->live_max, (unsigned long long)m->mem.peak_total);
}

static inline void inv_memory(struct inv *v, const struct an_model *m)
{
    const struct an_memory *mem = &m->mem;
    uint64_t sum = 0, peak_sum = 0;
    for (int k = 0; k < AN_MEM_KINDS; k++) {
        sum += mem->live[k];
        peak_sum += mem->peak_by_kind[k];
    }
    inv_check(v, sum == mem->live_total, "live by kind %llu != live %llu",
              (unsigned long long)sum, (unsigned long long)mem->live_total);
    inv_check(v, peak_sum == mem->peak_total, "peak by kind %llu != peak %llu",
              (unsigned long long)peak_sum, (unsigned long long)mem->peak_total);
    inv_check(v, mem->live_total <= mem->peak_total, "live %llu > peak %llu",
              (unsigned long long)mem->live_total, (unsigned long long)mem->peak_total);
    inv_check(v, mem->at_exit_bytes == mem->live_total, "held at exit %llu != live %llu",
              (unsigned long long)mem->at_exit_bytes, (unsigned long long)mem->live_total);
    inv_check(v, mem->pinned_live <= mem->pinned_peak, "pinned live > peak");
    inv_check(v, mem->ooms <= mem->failed && mem->ooms_fragmented <= mem->ooms &&
                     mem->storms + mem->unrecovered_ooms <= mem->ooms,
              "failed %llu, ooms %llu, fragmented %llu, storms %llu + unrecovered %llu",
              (unsigned long long)mem->failed, (unsigned long long)mem->ooms,
              (unsigned long long)mem->ooms_fragmented, (unsigned long long)mem->storms,
              (unsigned long long)mem->unrecovered_ooms);
    inv_check(v, mem->noom <= AN_KEEP_OOMS && mem->noom <= mem->ooms, "noom %zu", mem->noom);
    uint64_t left = 0;
    for (size_t i = 0; i < mem->nleftover; i++)
        left += mem->leftover[i].bytes_each * mem->leftover[i].count;
    inv_check(v, left <= mem->at_exit_bytes, "leftover groups %llu > held at exit %llu",
              (unsigned long long)left, (unsigned long long)mem->at_exit_bytes);
    for (int d = 0; d < AN_DIRS; d++)
        for (int k = 0; k < AN_HOST_KINDS; k++) {
            const struct an_xfer *x = &m->xfer[d][k];
            inv_check(v, x->blocking <= x->count && x->blocking_ns <= x->host_ns &&
                             x->small <= x->count && x->sync_api <= x->count &&
                             x->blocking_bytes <= x->bytes,
                      "transfers [%d][%d] out of order", d, k);
        }
}

/* Text that went wrong shows as a wrapped integer or a non-number. */
static inline int inv_text_ok(const char *text, size_t size)
{
    if (!memchr(text, 0, size))
        return 0;
    return !strstr(text, "nan") && !strstr(text, "inf ") && !strstr(text, "inf)") &&
           !strstr(text, "18446744073709");
}

static inline void inv_findings(struct inv *v, const struct an_model *m,
                                const struct an_findings *list)
{
    for (size_t i = 0; i < list->count; i++) {
        const struct an_finding *f = &list->items[i];
        for (size_t j = 0; j < i; j++)
            inv_check(v, strcmp(f->id, list->items[j].id) != 0, "finding %s twice", f->id);
        inv_check(v, f->saving_ns <= m->wall_ns, "%s saves %llu > wall %llu", f->id,
                  (unsigned long long)f->saving_ns, (unsigned long long)m->wall_ns);
        inv_check(v, f->saving_share >= 0 && f->saving_share <= 1, "%s share %g", f->id,
                  f->saving_share);
        /* a change that leaves the GPU's work as it is gives back at most its idle time
         * (measures.c), where the whole GPU timeline is recorded */
        uint64_t idle = 0;
        for (int c = 0; c < AN_CAUSE_COUNT; c++)
            idle += an_run_idle(m, (enum an_cause)c);
        inv_check(v, !f->whatif || f->whatif == AN_WI_PINNED_ASYNC || !m->gpu_records ||
                         m->gpu_sampled || f->saving_ns <= idle + inv_slack(idle),
                  "%s saves %llu, more than the GPU's idle %llu", f->id,
                  (unsigned long long)f->saving_ns, (unsigned long long)idle);
        inv_check(v, !f->risk || !f->saving_ns, "%s: a risk that saves time", f->id);
        inv_check(v, !f->risk || f->strikes_s == -1 || (f->strikes_s >= 0 && f->strikes_s < 1e12),
                  "%s: strikes in %g s", f->id, f->strikes_s);
        /* the re-ranked saving is the second change made on the run the first changed */
        inv_check(v, !f->after_id[0] || (f->whatif && !f->risk && f->after_ns <= m->wall_ns),
                  "%s: after %s %llu", f->id, f->after_id, (unsigned long long)f->after_ns);
        inv_check(v, f->title[0] && f->evidence[0] && f->change[0], "%s: empty text", f->id);
        inv_check(v, inv_text_ok(f->title, sizeof f->title), "%s title: %s", f->id, f->title);
        inv_check(v, inv_text_ok(f->evidence, sizeof f->evidence), "%s evidence: %s", f->id,
                  f->evidence);
        inv_check(v, inv_text_ok(f->change, sizeof f->change), "%s change: %s", f->id,
                  f->change);
        inv_check(v, f->nfig <= AN_MAX_FIGURES, "%s: %zu figures", f->id, f->nfig);
        for (size_t k = 0; k < f->nfig; k++)
            /* (leak's steps_to_full is -1 when unknown: docs/analyze-json.md) */
            inv_check(v, isfinite(f->fig[k].value) &&
                             (f->fig[k].value >= 0 ||
                              (f->fig[k].value == -1 && !strcmp(f->fig[k].key, "steps_to_full"))),
                      "%s figure %s = %g", f->id, f->fig[k].key, f->fig[k].value);
    }
}

/* 0 when everything holds; else 1 with v->why saying what broke first. */
static inline int inv_all(struct inv *v, const struct an_model *m,
                          const struct an_findings *list)
{
    memset(v, 0, sizeof *v);
    inv_totals(v, m);
    inv_timeline(v, m);
    inv_steps(v, m);
    inv_memory(v, m);
    inv_findings(v, m, list);
    return v->broken;
}

#endif
