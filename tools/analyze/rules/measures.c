/* What the rules measure the model by, shared by them all: savings and their shares, the
 * steady state's idle time, memory growth, the longest idle intervals. Apart from the
 * rule table (rules.c), which calls every rule, so that the rules call down to these and
 * nothing calls back up. */
#include "rules.h"

#include <stdio.h>

double an_steady_share(const struct an_model *m, enum an_cause c)
{
    uint64_t span = an_steady_span(m);
    return span ? an_idle_ns(m, &m->steady, c) / (double)span : 0;
}

int an_top_idle_cause(const struct an_model *m, double above, double *share)
{
    int top = -1;
    *share = above;
    for (int c = 0; c < AN_CAUSE_COUNT; c++)
        if (an_steady_share(m, (enum an_cause)c) > *share) {
            *share = an_steady_share(m, (enum an_cause)c);
            top = c;
        }
    return top;
}

uint64_t an_run_idle(const struct an_model *m, enum an_cause c)
{
    if (!m->steps.steady)
        return an_u64(an_idle_ns(m, &m->total, c));
    return an_run_from_steady(m, an_idle_ns(m, &m->steady, c));
}

uint64_t an_run_idle_all(const struct an_model *m)
{
    uint64_t idle = 0;
    for (int cause = 0; cause < AN_CAUSE_COUNT; cause++)
        idle += an_run_idle(m, (enum an_cause)cause);
    return idle;
}

uint64_t an_run_from_steady(const struct an_model *m, double steady_ns)
{
    if (!m->steps.steady)
        return an_u64(steady_ns);
    /* per steady step, over every step: start-up and teardown are not the loop's */
    return an_u64(steady_ns * (double)m->steps.count / (double)m->steps.steady);
}

/* The GPU's own work bounds every world that leaves it as it is: a change of the host's side
 * (no syncs, workers, no churn, pauses in the background, graphs: they remove gaps, not
 * kernel time) can give back at most the time the GPU sat idle. Only pinned copies shorten
 * GPU operations. Where the trace has the whole GPU timeline that idle time is measured; a
 * replay that ran out of host work to wait on (frees on a busy GPU, whose waits move to the
 * next sync) would claim more. Host-only and sampled timelines infer kernel lengths, and
 * there the replay's figure stands. */
uint64_t an_whatif_saving(const struct an_model *m, enum an_whatif w)
{
    return an_world_saving(m, 1u << w);
}

int an_loads_batches(const struct an_model *m)
{
    return m->steady.uploads > 0;
}

uint64_t an_world_saving(const struct an_model *m, unsigned changes)
{
    /* the workers change is moot in a loop that loads nothing: what the replay would move
     * off its thread is the loop's own host work (logging after a read, Python) */
    if ((changes & (1u << AN_WI_INPUT_WORKERS)) && !an_loads_batches(m)) {
        changes &= ~(1u << AN_WI_INPUT_WORKERS);
        if (!changes)
            return 0;
    }
    int world = an_world_of(changes);
    uint64_t base = m->replay.wall_ns[AN_WI_AS_MEASURED];
    if (!m->replay.done || world <= AN_WI_AS_MEASURED || m->replay.wall_ns[world] >= base)
        return 0;
    uint64_t saving = base - m->replay.wall_ns[world];
    if (!m->gpu_records || m->gpu_sampled)
        return saving;
    uint64_t cap = an_run_idle_all(m);
    /* pinned memory shortens the copies on the GPU too: at most their whole GPU time */
    if (changes & (1u << AN_WI_PINNED_ASYNC))
        cap += m->xfer[GW_COPY_HTOD][GW_HOST_PAGEABLE].gpu_ns +
               m->xfer[GW_COPY_DTOH][GW_HOST_PAGEABLE].gpu_ns;
    else if (changes & (1u << AN_WI_BACKGROUND))  /* (checkpoint reads saved pinned) */
        cap += m->xfer[GW_COPY_DTOH][GW_HOST_PAGEABLE].gpu_ns;
    return saving < cap ? saving : cap;
}

double an_whatif_share(const struct an_model *m, uint64_t saving_ns)
{
    /* of the loop: a one-off start-up (seconds of imports, compiles, data set-up before the
     * first step) would dilute any saving of a short profiled run */
    uint64_t base = m->steps.steady && an_steady_span(m) ? an_steady_span(m)
                                                         : m->replay.wall_ns[AN_WI_AS_MEASURED];
    return base ? (double)saving_ns / (double)base : 0;
}

void an_say_unproven(const struct an_model *m, const char *id, enum an_whatif w, uint64_t up_to,
                     uint64_t proven, const char *change, struct an_findings *out)
{
    struct an_unproven u = {.whatif = w, .up_to_ns = up_to, .proven_ns = proven,
                            .share = an_whatif_share(m, up_to)};
    snprintf(u.id, sizeof u.id, "%s", id);
    snprintf(u.change, sizeof u.change, "%s", change);
    an_unproven_keep(out, &u);
}

int an_whatif_worth(const struct an_model *m, enum an_whatif w)
{
    return an_whatif_share(m, an_whatif_saving(m, w)) >= m->th.min_share;
}

void an_set_whatif_saving(const struct an_model *m, struct an_finding *f, enum an_whatif w)
{
    an_set_saving(m, f, an_whatif_saving(m, w));
    f->whatif = w;
}

void an_set_saving(const struct an_model *m, struct an_finding *f, uint64_t saving_ns)
{
    if (m->wall_ns && saving_ns > m->wall_ns)
        saving_ns = m->wall_ns;
    f->saving_ns = saving_ns;
    f->saving_share = m->wall_ns ? (double)saving_ns / (double)m->wall_ns : 0;
    double steps_ns = (double)m->steps.count * (double)m->steps.mean_ns;
    f->step_share = f->saving_share;
    if (m->steps.steady && steps_ns > 0)
        f->step_share = saving_ns < steps_ns ? (double)saving_ns / steps_ns : 1;
}

void an_steady_phrase(const struct an_model *m, char *buf, size_t size)
{
    if (m->steps.steady)
        snprintf(buf, size, "steady state (steps %llu-%llu, %.2f-%.2f s)",
                 (unsigned long long)m->steps.warmup + 1, (unsigned long long)m->steps.count,
                 an_rel_s(m, m->steady_start), an_rel_s(m, m->steady_end));
    else
        snprintf(buf, size, "whole run (%.2f-%.2f s; no repeating step found)",
                 an_rel_s(m, m->steady_start), an_rel_s(m, m->steady_end));
}

enum an_growth an_growth_kind(const struct an_model *m)
{
    const struct an_steps *s = &m->steps;
    if (!s->sampled_steps || s->live_last <= s->live_first ||
        s->live_last - s->live_first < m->th.growth_min_bytes)
        return AN_GROWTH_NONE;
    double growth = (double)(s->live_last - s->live_first);
    if ((double)s->growth_steps >= m->th.growth_steps_share * (double)s->sampled_steps)
        return AN_GROWTH_EVERY_STEP;
    double first_half = s->live_mid > s->live_first ? (double)(s->live_mid - s->live_first) : 0;
    double second_half = s->live_last > s->live_mid ? (double)(s->live_last - s->live_mid) : 0;
    int even = first_half >= m->th.growth_half_share * growth &&
               second_half >= m->th.growth_half_share * growth;
    if (even && s->growth_steps >= m->th.growth_min_jumps && (double)s->live_dip * 4 <= growth)
        return AN_GROWTH_EVEN_JUMPS;
    return AN_GROWTH_JUMPS;
}

double an_per_step(const struct an_model *m, double steady_ns)
{
    return steady_ns / (double)an_steady_steps(m);
}

const struct an_interval *an_longest(const struct an_model *m, enum an_cause c)
{
    return an_longest_below(m, c, UINT64_MAX);
}

int an_in_steady(const struct an_model *m, const struct an_interval *iv)
{
    return iv->start + m->th.drain_slack_ns >= m->steady_start &&
           iv->end <= m->steady_end + m->th.drain_slack_ns;
}

const struct an_interval *an_longest_below(const struct an_model *m, enum an_cause c,
                                           uint64_t max_ns)
{
    const struct an_interval *fallback = NULL;
    for (size_t i = 0; i < m->nlargest; i++) {
        const struct an_interval *iv = &m->largest[i];
        if (iv->cause != c || iv->end - iv->start >= max_ns)
            continue;
        if (an_in_steady(m, iv))
            return iv;
        if (!fallback)
            fallback = iv;
    }
    return fallback;
}
