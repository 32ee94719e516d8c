/* Counters that never go down (counter_floor.h): a hash table of series -> last value. */
#include "counter_floor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct gw_floor_slot {
    char *key;               /* NULL: empty */
    double last;
};

static uint64_t hash(const char *s)  /* FNV-1a */
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static struct gw_floor_slot *find(struct gw_floor_slot *slots, size_t cap, const char *key)
{
    for (size_t i = hash(key) & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!slots[i].key || !strcmp(slots[i].key, key))
            return &slots[i];
}

static int grow(struct gw_counter_floor *f)
{
    size_t cap = f->cap ? f->cap * 2 : 256;
    struct gw_floor_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < f->cap; i++)
        if (f->slots[i].key)
            *find(slots, cap, f->slots[i].key) = f->slots[i];
    free(f->slots);
    f->slots = slots;
    f->cap = cap;
    return 0;
}

double gw_counter_floor(struct gw_counter_floor *f, const char *key, double value)
{
    if ((f->count + 1) * 2 > f->cap && grow(f) != 0)
        return value;  /* out of memory: the figure as it is */
    struct gw_floor_slot *s = find(f->slots, f->cap, key);
    if (!s->key) {
        s->key = strdup(key);
        if (!s->key)
            return value;
        s->last = value;
        f->count++;
        return value;
    }
    if (value > s->last)
        s->last = value;
    return s->last;
}

void gw_counter_floor_free(struct gw_counter_floor *f)
{
    for (size_t i = 0; i < f->cap; i++)
        free(f->slots[i].key);
    free(f->slots);
    memset(f, 0, sizeof *f);
}
