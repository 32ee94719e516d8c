/*
 * The pass's running totals (struct an_totals in model.h): what the steps copy at their
 * boundaries, and each idle interval added, split by cause, into the totals, the time bins
 * and the largest intervals kept. Called by the model's parts (drains.c, gpu_timeline.c,
 * steps.c), which model.c calls: it calls nothing of theirs back.
 */
#include "totals.h"

#include <string.h>

#include "model_internal.h"
#include "pauses.h"

void an_totals_snapshot(const struct an_model *m, struct an_totals *out)
{
    *out = m->total;
    for (size_t i = 0; i < m->ndev; i++)
        out->gpu_busy_ns += m->dev[i].open_end - m->dev[i].open_start;
}

void an_totals_add_idle(struct an_model *m, int gpu, uint64_t start, uint64_t end,
                        const struct an_split *split)
{
    uint64_t *idle = gpu ? m->total.idle_gpu_ns : m->total.idle_host_ns;
    if (split->ns[AN_CAUSE_INPUT])
        an_pauses_add(&m->input_lengths[gpu ? 1 : 0], start, split->ns[AN_CAUSE_INPUT],
                      m->th.pause_min_ns);
    an_phases_idle(&m->state->phases, &m->phases, gpu, start, end, split->ns);
    int main_cause = 0;
    for (int c = 0; c < AN_CAUSE_COUNT; c++) {
        idle[c] += split->ns[c];
        if (split->ns[c])
            an_bins_add(&m->state->bins, (gpu ? AN_BIN_IDLE_GPU : AN_BIN_IDLE_HOST) + c, start,
                        end, (double)split->ns[c]);
        if (split->ns[c] > split->ns[main_cause])
            main_cause = c;
    }
    /* the largest intervals of each timeline; the one reported is chosen at the end */
    struct an_interval *keep = m->state->keep[gpu ? 1 : 0];
    size_t *count = &m->state->nkeep[gpu ? 1 : 0];
    if (end <= start)
        return;
    size_t n = *count, at = n;
    while (at > 0 && keep[at - 1].end - keep[at - 1].start < end - start)
        at--;
    if (at >= AN_KEEP_INTERVALS)
        return;
    if (n == AN_KEEP_INTERVALS)
        n--;
    memmove(&keep[at + 1], &keep[at], (n - at) * sizeof keep[0]);
    keep[at] = (struct an_interval){start, end, (uint8_t)main_cause};
    *count = n + 1;
}
