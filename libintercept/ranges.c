#include "ranges.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpuwatch/trace_format.h"

struct range { uint64_t start, size; };

struct range_set {
    pthread_rwlock_t lock;
    struct range *items;   /* sorted by start, non-overlapping */
    size_t count, cap;
};

static struct range_set sets[GW_RANGE_KINDS] = {
    {PTHREAD_RWLOCK_INITIALIZER, NULL, 0, 0},
    {PTHREAD_RWLOCK_INITIALIZER, NULL, 0, 0},
    {PTHREAD_RWLOCK_INITIALIZER, NULL, 0, 0},
};

/* Index of the first range whose start is > addr. */
static size_t upper_bound(const struct range_set *set, uint64_t addr)
{
    size_t lo = 0, hi = set->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (set->items[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void gw_ranges_add(enum gw_range_kind kind, uint64_t start, uint64_t size)
{
    if (!start || !size)
        return;
    struct range_set *set = &sets[kind];
    pthread_rwlock_wrlock(&set->lock);
    if (set->count == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 64;
        struct range *grown = realloc(set->items, cap * sizeof *grown);
        if (!grown) {
            pthread_rwlock_unlock(&set->lock);
            return;
        }
        set->items = grown;
        set->cap = cap;
    }
    size_t at = upper_bound(set, start);
    if (at > 0 && set->items[at - 1].start == start) {
        set->items[at - 1].size = size; /* the driver reused an address we missed freeing */
    } else {
        memmove(&set->items[at + 1], &set->items[at], (set->count - at) * sizeof *set->items);
        set->items[at] = (struct range){start, size};
        set->count++;
    }
    pthread_rwlock_unlock(&set->lock);
}

uint64_t gw_ranges_remove(enum gw_range_kind kind, uint64_t start)
{
    struct range_set *set = &sets[kind];
    uint64_t size = 0;
    pthread_rwlock_wrlock(&set->lock);
    size_t at = upper_bound(set, start);
    if (at > 0 && set->items[at - 1].start == start) {
        size = set->items[at - 1].size;
        memmove(&set->items[at - 1], &set->items[at], (set->count - at) * sizeof *set->items);
        set->count--;
    }
    pthread_rwlock_unlock(&set->lock);
    return size;
}

int gw_ranges_contains(enum gw_range_kind kind, uint64_t addr)
{
    struct range_set *set = &sets[kind];
    pthread_rwlock_rdlock(&set->lock);
    size_t at = upper_bound(set, addr);
    int inside = at > 0 && addr - set->items[at - 1].start < set->items[at - 1].size;
    pthread_rwlock_unlock(&set->lock);
    return inside;
}

unsigned gw_host_kind(uint64_t addr)
{
    if (gw_ranges_contains(GW_RANGE_PINNED, addr))
        return GW_HOST_PINNED;
    if (gw_ranges_contains(GW_RANGE_MANAGED, addr))
        return GW_HOST_MANAGED;
    return GW_HOST_PAGEABLE;
}

int gw_is_device_pointer(uint64_t addr)
{
    return gw_ranges_contains(GW_RANGE_DEVICE, addr) || gw_ranges_contains(GW_RANGE_MANAGED, addr);
}

void gw_ranges_reset(void)
{
    for (int kind = 0; kind < GW_RANGE_KINDS; kind++) {
        pthread_rwlock_init(&sets[kind].lock, NULL);
    }
}
