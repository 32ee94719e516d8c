#include "transfer_stats.h"

#include <stdlib.h>
#include <string.h>

#include "stats_grow.h"

struct gw_transfer_stat *gw_transfer_get(struct gw_transfer_table *t, unsigned kind,
                                         unsigned src, unsigned dst)
{
    kind &= 0xFFFFF, src &= 0xFFFFF, dst &= 0xFFFFF;
    uint64_t key = (uint64_t)kind << 40 | (uint64_t)src << 20 | dst;
    uint64_t *slot = gw_map_get(&t->ids, key);
    if (slot)
        return &t->items[*slot];
    struct gw_transfer_stat *items =
        gw_stats_grow(t->items, &t->cap, t->count, sizeof *t->items);
    if (!items)
        return NULL;
    t->items = items;
    struct gw_transfer_stat *x = &t->items[t->count];
    *x = (struct gw_transfer_stat){.kind = kind, .src = src, .dst = dst};
    if (gw_map_put(&t->ids, key, t->count) != 0)
        return NULL;
    t->count++;
    return x;
}

static int by_kinds(const void *a, const void *b)
{
    const struct gw_transfer_stat *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return (x->dst > y->dst) - (x->dst < y->dst);
}

void gw_transfer_sort(struct gw_transfer_table *t)
{
    if (t->count)
        qsort(t->items, t->count, sizeof *t->items, by_kinds);
}

void gw_transfer_table_free(struct gw_transfer_table *t)
{
    free(t->items);
    gw_map_free(&t->ids);
    memset(t, 0, sizeof *t);
}
