#include "kernel_stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats_grow.h"
#include "trace_reader.h"

/* FNV-1a: names are keyed by hash and probed on collision, so any spread will do. */
static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

struct gw_kernel_stat *gw_kernel_by_name(struct gw_kernel_table *t, const char *name)
{
    uint64_t key = hash_name(name);
    for (;; key++) {
        uint64_t *slot = gw_map_get(&t->ids, key);
        if (!slot)
            break;
        if (!strcmp(t->items[*slot].name, name))
            return &t->items[*slot];
    }
    struct gw_kernel_stat *items = gw_stats_grow(t->items, &t->cap, t->count, sizeof *t->items);
    if (!items)
        return NULL;
    t->items = items;
    struct gw_kernel_stat *k = &t->items[t->count];
    k->name = strdup(name);
    k->launches = k->total_ns = 0;
    if (!k->name)
        return NULL;
    if (gw_map_put(&t->ids, key, t->count) != 0) {
        free(k->name);
        return NULL;
    }
    t->count++;
    return k;
}

struct gw_kernel_stat *gw_kernel_by_shape(struct gw_kernel_table *t,
                                          struct gw_shape_cache *cache,
                                          const struct gw_reader *r, uint64_t shape_id)
{
    size_t front = (size_t)(shape_id % GW_SHAPE_FRONT);
    if (cache->ids[front] == shape_id + 1)
        return &t->items[cache->index[front]];
    uint64_t *slot = gw_map_get(&cache->map, shape_id);
    if (slot) {
        cache->ids[front] = shape_id + 1, cache->index[front] = *slot;
        return &t->items[*slot];
    }
    char fallback[32];
    const char *name = r ? gw_reader_kernel_name(r, shape_id) : NULL;
    if (!name || !*name) {
        snprintf(fallback, sizeof fallback, "shape_%" PRIu64, shape_id);
        name = fallback;
    }
    struct gw_kernel_stat *k = gw_kernel_by_name(t, name);
    if (!k || gw_map_put(&cache->map, shape_id, (uint64_t)(k - t->items)) != 0)
        return NULL;
    return k;
}

static int by_launches(const void *a, const void *b)
{
    const struct gw_kernel_stat *x = a, *y = b;
    if (x->launches != y->launches)
        return x->launches < y->launches ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int by_time(const void *a, const void *b)
{
    const struct gw_kernel_stat *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

void gw_kernel_sort_by_launches(struct gw_kernel_table *t)
{
    if (t->count)
        qsort(t->items, t->count, sizeof *t->items, by_launches);
}

void gw_kernel_sort_by_time(struct gw_kernel_table *t)
{
    if (t->count)
        qsort(t->items, t->count, sizeof *t->items, by_time);
}

void gw_kernel_table_free(struct gw_kernel_table *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->items[i].name);
    free(t->items);
    gw_map_free(&t->ids);
    memset(t, 0, sizeof *t);
}

void gw_shape_cache_reset(struct gw_shape_cache *cache)
{
    gw_map_free(&cache->map);
    memset(cache, 0, sizeof *cache);
}
