/* Figures derived from the model that rules and reports share. */
#include "model.h"

int an_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

double an_idle_ns(const struct an_model *m, const struct an_totals *t, enum an_cause c)
{
    if ((unsigned)c >= AN_CAUSE_COUNT)
        return 0;
    return (double)(m->gpu_timeline ? t->idle_gpu_ns[c] : t->idle_host_ns[c]);
}

uint64_t an_busy_ns(const struct an_model *m, const struct an_totals *t, uint64_t span)
{
    if (m->gpu_timeline) {
        uint64_t devices = m->ndev ? m->ndev : 1;
        uint64_t busy = t->gpu_busy_ns / devices;
        return busy < span ? busy : span;
    }
    uint64_t idle = 0;
    for (int c = 0; c < AN_CAUSE_COUNT; c++)
        idle += t->idle_host_ns[c];
    return span > idle ? span - idle : 0;
}

uint64_t an_steady_span(const struct an_model *m)
{
    return m->steady_end > m->steady_start ? m->steady_end - m->steady_start : 0;
}

double an_gpu_util(const struct an_model *m)
{
    if (!m->wall_ns)
        return 0;
    return (double)an_busy_ns(m, &m->total, m->wall_ns) / (double)m->wall_ns;
}

double an_steady_util(const struct an_model *m)
{
    uint64_t span = an_steady_span(m);
    if (!span)
        return an_gpu_util(m);
    return (double)an_busy_ns(m, &m->steady, span) / (double)span;
}

uint64_t an_steady_steps(const struct an_model *m)
{
    return m->steps.steady ? m->steps.steady : 1;
}

double an_comm_overlap_share(const struct an_model *m)
{
    return m->comm_ns ? 1.0 - (double)m->comm_exposed_ns / (double)m->comm_ns : 0;
}

double an_phase_idle_ns(const struct an_model *m, const struct an_phase *p, enum an_cause c)
{
    if ((unsigned)c >= AN_CAUSE_COUNT)
        return 0;
    return m->gpu_timeline ? p->idle_gpu_ns[c] : p->idle_host_ns[c];
}
