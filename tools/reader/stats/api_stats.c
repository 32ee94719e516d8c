#include "api_stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats_grow.h"
#include "trace_reader.h"

static struct gw_api_stat *api_stat(struct gw_api_table *t, uint32_t api_id)
{
    uint64_t *slot = gw_map_get(&t->ids, api_id);
    if (slot)
        return &t->items[*slot];
    struct gw_api_stat *items = gw_stats_grow(t->items, &t->cap, t->count, sizeof *t->items);
    if (!items)
        return NULL;
    t->items = items;
    struct gw_api_stat *a = &t->items[t->count];
    memset(a, 0, sizeof *a);
    a->api_id = api_id;
    const char *name = gw_api_name(api_id);
    if (name)
        snprintf(a->name, sizeof a->name, "%s", name);
    else  /* an id from a newer shim: still counted, by number */
        snprintf(a->name, sizeof a->name, "api_%" PRIu32, api_id);
    if (gw_map_put(&t->ids, api_id, t->count) != 0)
        return NULL;
    t->count++;
    return a;
}

int gw_api_table_add(struct gw_api_table *t, uint32_t api_id, uint32_t result,
                     uint64_t dur_ns)
{
    struct gw_api_stat *a;
    if (api_id < GW_API_ID_LIMIT) {
        if (t->known[api_id] == 0) {
            a = api_stat(t, api_id);
            if (!a)
                return -1;
            t->known[api_id] = (uint32_t)(a - t->items) + 1;
        }
        a = &t->items[t->known[api_id] - 1];
    } else {
        a = api_stat(t, api_id);
        if (!a)
            return -1;
    }
    a->count++;
    a->errors += result != 0;
    a->total_ns += dur_ns;
    return 0;
}

static int by_count(const void *a, const void *b)
{
    const struct gw_api_stat *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->name, y->name);
}

void gw_api_table_sort(struct gw_api_table *t)
{
    if (t->count)
        qsort(t->items, t->count, sizeof *t->items, by_count);
}

void gw_api_table_free(struct gw_api_table *t)
{
    free(t->items);
    gw_map_free(&t->ids);
    memset(t, 0, sizeof *t);
}
