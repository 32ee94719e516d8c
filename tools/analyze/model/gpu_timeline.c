/*
 * GPU records (CUPTI): per device, the union of kernels, copies and sets across streams is
 * its busy time; the gaps between busy periods are its idle intervals. A gap is explained
 * from the host history, which may not have been read that far yet (the writer flushes
 * CUPTI's buffers apart from the threads' chunks): such gaps wait, in order, until the
 * host side has been seen past their end.
 *
 * A host-to-device copy from pageable memory is not counted as busy: the driver stages it
 * through a pinned buffer on the host, one chunk after another, and the GPU computes
 * nothing meanwhile; its span is an idle interval that the host history explains (the
 * host was blocked in the copy: an H2D stall). Its bytes and time still count as a
 * transfer.
 */
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
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

static void explain(struct an_model *m, const struct an_pending_gap *g)
{
    struct an_split split;
    an_history_attribute(&m->state->hist, &m->th, g->start, g->end, m->state->host_seen,
                         &split);
    an_totals_add_idle(m, 1, g->start, g->end, &split);
}

void an_gpu_push_gap(struct an_model *m, uint64_t start, uint64_t end)
{
    struct an_model_state *st = m->state;
    struct an_pending_gap g = {start, end};
    if (st->npending == 0 && end <= st->host_seen) {
        explain(m, &g);
        return;
    }
    if (st->npending == st->pending_cap) {
        if (st->pending_cap >= MAX_PENDING) {
            explain(m, &st->pending[st->pending_head]);
            st->pending_head = (st->pending_head + 1) & (st->pending_cap - 1);
            st->npending--;
        } else {
            size_t cap = st->pending_cap ? st->pending_cap * 2 : 256;
            struct an_pending_gap *grown = malloc(cap * sizeof *grown);
            if (!grown) {
                explain(m, &g);
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

/* A copy record's figures (its call's are model.c's call_copy_figures). */
static void record_copy_figures(struct an_model *m, const struct an_ev *ev)
{
    if (ev->dir >= AN_DIRS || ev->host_kind >= AN_HOST_KINDS)
        return;
    struct an_xfer *x = &m->xfer[ev->dir][ev->host_kind];
    uint64_t ns = ev->end - ev->ts;
    x->gpu_count++;
    x->gpu_bytes += ev->bytes;
    x->gpu_ns += ns;
    an_note_bandwidth(m, ev->dir, ev->bytes, ns);
}

void an_gpu_close_period(struct an_model *m, struct an_device_busy *d)
{
    uint64_t len = d->open_end - d->open_start;
    d->busy_ns += len;
    m->total.gpu_busy_ns += len;
    if (len)
        an_bins_add(&m->state->bins, AN_BIN_BUSY, d->open_start, d->open_end, (double)len);
}

/* Every GPU record (the feeder inlines the kernels' path, an_model_feed_gpu_record). */
void an_model_feed_gpu(struct an_model *m, const struct an_ev *ev)
{
    an_note_time(m, ev);
    if (ev->kind == AN_GPU_LOST) {
        m->gpu_lost += ev->bytes;
        return;
    }
    m->gpu_records++;
    an_replay_gpu(&m->state->replay, ev);
    if (ev->kind == AN_GPU_KERNEL) {
        an_gpu_kernel_figures(m, ev);
    } else if (ev->kind == AN_GPU_COPY) {
        record_copy_figures(m, ev);
    }
    if (ev->kind == AN_GPU_COPY && ev->dir == GW_COPY_HTOD && ev->host_kind == GW_HOST_PAGEABLE)
        return;
    an_gpu_busy(m, ev);
}

void an_gpu_attribute_ready(struct an_model *m, int all)
{
    struct an_model_state *st = m->state;
    while (st->npending) {
        struct an_pending_gap *g = &st->pending[st->pending_head];
        if (!all && g->end > st->host_seen)
            break;
        explain(m, g);
        st->pending_head = (st->pending_head + 1) & (st->pending_cap - 1);
        st->npending--;
    }
}

void an_gpu_close(struct an_model *m)
{
    for (size_t i = 0; i < m->ndev; i++) {
        struct an_device_busy *d = &m->dev[i];
        if (!d->records)
            continue;
        an_gpu_close_period(m, d);
        d->open_start = d->open_end;
    }
    an_gpu_attribute_ready(m, 1);
}
