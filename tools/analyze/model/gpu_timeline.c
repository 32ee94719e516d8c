/*
 * GPU records (CUPTI): per device, the union of kernels, copies and sets across streams is
 * its busy time; the gaps between busy periods are its idle intervals. A gap is explained
 * from the host history, which may not have been read that far yet (the writer flushes
 * CUPTI's buffers apart from the threads' chunks): such gaps wait, in order, until the
 * host side has been seen past their end. Which records occupy a device is the model's
 * (an_model_feed_gpu); the waiting gaps are this file's own state (gpu_timeline.h).
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "history.h"
#include "model.h"
#include "timebins.h"
#include "totals.h"

#define MAX_PENDING (1u << 20)   /* waiting gaps beyond this are explained at once */

struct an_device_busy *an_gpu_device(struct an_model *m, uint32_t ordinal)
{
    for (size_t i = 0; i < m->ndev; i++)
        if (m->dev[i].ordinal == (int32_t)ordinal)
            return &m->dev[i];
    if (m->ndev == AN_MAX_DEVICES)
        return &m->dev[AN_MAX_DEVICES - 1];  /* absurdly many: lump the rest together */
    struct an_device_busy *d = &m->dev[m->ndev++];
    memset(d, 0, sizeof *d);
    d->ordinal = (int32_t)ordinal;
    return d;
}

static void explain(const struct an_gpu_timeline *t, struct an_model *m,
                    const struct an_history *h, const struct an_pending_gap *g)
{
    struct an_split split;
    an_history_attribute(h, &m->th, g->start, g->end, t->host_seen, &split);
    an_totals_add_idle(m, 1, g->start, g->end, &split);
}

void an_gpu_push_gap(struct an_gpu_timeline *st, struct an_model *m,
                     const struct an_history *h, uint64_t start, uint64_t end)
{
    struct an_pending_gap g = {start, end};
    if (st->npending == 0 && end <= st->host_seen) {
        explain(st, m, h, &g);
        return;
    }
    if (st->npending == st->pending_cap) {
        if (st->pending_cap >= MAX_PENDING) {
            explain(st, m, h, &st->pending[st->pending_head]);
            st->pending_head = (st->pending_head + 1) & (st->pending_cap - 1);
            st->npending--;
        } else {
            size_t cap = st->pending_cap ? st->pending_cap * 2 : 256;
            struct an_pending_gap *grown = malloc(cap * sizeof *grown);
            if (!grown) {
                explain(st, m, h, &g);
                return;
            }
            for (size_t i = 0; i < st->npending; i++)
                grown[i] = st->pending[(st->pending_head + i) & (st->pending_cap - 1)];
            free(st->pending);
            st->pending = grown;
            st->pending_cap = cap;
            st->pending_head = 0;
        }
    }
    st->pending[(st->pending_head + st->npending) & (st->pending_cap - 1)] = g;
    st->npending++;
}

void an_gpu_close_period(struct an_model *m, struct an_timebins *bins,
                         struct an_device_busy *d)
{
    uint64_t len = d->open_end - d->open_start;
    d->busy_ns += len;
    m->total.gpu_busy_ns += len;
    if (len)
        an_bins_add(bins, AN_BIN_BUSY, d->open_start, d->open_end, (double)len);
}

void an_gpu_attribute_ready(struct an_gpu_timeline *st, struct an_model *m,
                            const struct an_history *h, int all)
{
    while (st->npending) {
        struct an_pending_gap *g = &st->pending[st->pending_head];
        if (!all && g->end > st->host_seen)
            break;
        explain(st, m, h, g);
        st->pending_head = (st->pending_head + 1) & (st->pending_cap - 1);
        st->npending--;
    }
}

void an_gpu_close(struct an_gpu_timeline *g, struct an_model *m, const struct an_history *h,
                  struct an_timebins *bins)
{
    for (size_t i = 0; i < m->ndev; i++) {
        struct an_device_busy *d = &m->dev[i];
        if (!d->records)
            continue;
        an_gpu_close_period(m, bins, d);
        d->open_start = d->open_end;
    }
    an_gpu_attribute_ready(g, m, h, 1);
}

void an_gpu_timeline_free(struct an_gpu_timeline *g)
{
    free(g->pending);
    memset(g, 0, sizeof *g);
}
