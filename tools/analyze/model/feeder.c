#include "feeder.h"

#include <string.h>

/* What an_feeder_push does with a released event, for an_reorder_flush. */
static void emit_host(void *user, const struct an_ev *ev)
{
    an_model_feed_host_released(user, ev);
}

static void emit_gpu(void *user, const struct an_ev *ev)
{
    an_model_feed_gpu(user, ev);
}

int an_feeder_init(struct an_feeder *f, struct an_model *m, uint64_t max_window_ns,
                   size_t max_waiting)
{
    memset(f, 0, sizeof *f);
    f->m = m;
    f->host = an_reorder_new(AN_FEEDER_WINDOW_NS, max_window_ns, max_waiting, emit_host, m);
    f->gpu = an_reorder_new(AN_FEEDER_WINDOW_NS, max_window_ns, max_waiting, emit_gpu, m);
    if (!f->host || !f->gpu) {
        an_reorder_free(f->host);
        an_reorder_free(f->gpu);
        return -1;
    }
    f->slot_r = f->host;
    return 0;
}

uint64_t an_feeder_late(const struct an_feeder *f)
{
    const struct an_reorder_stats *h = an_reorder_stats(f->host), *g = an_reorder_stats(f->gpu);
    return h->late + g->late;
}

void an_feeder_finish(struct an_feeder *f)
{
    an_reorder_flush(f->host);
    an_reorder_flush(f->gpu);
    f->m->late_events += an_feeder_late(f);
    an_model_finish(f->m);
    an_reorder_free(f->host);
    an_reorder_free(f->gpu);
    f->host = f->gpu = NULL;
}

/* The loop over a run held in memory belongs here, not in model.c: the feeder calls the
 * model, never the other way round. */
void an_model_feed_all(struct an_model *m, const struct an_ev *events, size_t n)
{
    struct an_feeder f;
    if (an_feeder_init(&f, m, AN_FEEDER_MAX_WINDOW_NS, AN_FEEDER_MAX_WAITING) != 0) {
        an_model_finish(m);
        return;
    }
    for (size_t i = 0; i < n; i++)
        an_feeder_push(&f, &events[i]);
    an_feeder_finish(&f);
}
