#include "device_stats.h"

#include <stdlib.h>
#include <string.h>

#include "stats_grow.h"

static struct gw_device_stat *device_stat(struct gw_devices *d, uint64_t device)
{
    for (size_t i = 0; i < d->count; i++)
        if (d->items[i].device == device)
            return &d->items[i];
    struct gw_device_stat *items = gw_stats_grow(d->items, &d->cap, d->count, sizeof *d->items);
    if (!items)
        return NULL;
    d->items = items;
    size_t at = d->count++;
    while (at > 0 && d->items[at - 1].device > device) {  /* kept by ordinal */
        d->items[at] = d->items[at - 1];
        at--;
    }
    d->items[at] = (struct gw_device_stat){.device = device};
    return &d->items[at];
}

struct gw_device_stat *gw_devices_add(struct gw_devices *d, uint64_t device, uint64_t ts_ns,
                                      uint64_t dur_ns)
{
    /* (an insertion moves entries, but `last` is only trusted when its slot still holds
     * the device asked for) */
    struct gw_device_stat *s = d->last && d->last->device == device ? d->last
                                                                     : device_stat(d, device);
    d->last = s;
    if (!s)
        return NULL;
    uint64_t end = ts_ns + dur_ns;
    if (end < ts_ns)
        d->bad_durations++;
    else
        gw_busy_add(&s->busy, ts_ns, end);
    return s;
}

void gw_devices_settle(struct gw_devices *d)
{
    for (size_t i = 0; i < d->count; i++) {
        struct gw_device_stat *s = &d->items[i];
        s->busy_ns = gw_busy_total(&s->busy);
        s->span_ns = gw_busy_span(&s->busy);
        s->late = s->busy.late;
        s->late_ns = s->busy.late_ns;
        s->busy_failed = s->busy.failed;
        gw_busy_free(&s->busy);
    }
    d->last = NULL;
}

uint64_t gw_devices_busy(const struct gw_devices *d)
{
    uint64_t busy = 0;
    for (size_t i = 0; i < d->count; i++)
        busy += d->items[i].busy_ns;
    return busy;
}

void gw_devices_free(struct gw_devices *d)
{
    for (size_t i = 0; i < d->count; i++)
        gw_busy_free(&d->items[i].busy);
    free(d->items);
    memset(d, 0, sizeof *d);
}
