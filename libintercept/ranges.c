#include "ranges.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpuwatch/trace_format.h"

struct range { uint64_t start, size; };

/* Copies look ranges up on every call, from any thread, while allocations change them
 * rarely: readers take no lock and write nothing shared (a read-write lock's two atomic
 * updates per lookup were most of a copy hook's cost). Writers hold `lock` and keep `seq`
 * odd while they change the array; a reader that saw it odd, or changed, reads again.
 * A grown array replaces the old one, which a reader may still be searching: the old one
 * is kept (retired), never freed, at most as much again as the array in use. */
struct range_set {
    pthread_mutex_t lock;
    unsigned seq;            /* odd while a writer changes the set */
    struct range *items;     /* sorted by start, non-overlapping */
    size_t count, cap;
    struct retired { struct retired *next; struct range *items; } *retired;
};

static struct range_set sets[GW_RANGE_KINDS] = {
    {PTHREAD_MUTEX_INITIALIZER, 0, NULL, 0, 0, NULL},
    {PTHREAD_MUTEX_INITIALIZER, 0, NULL, 0, 0, NULL},
    {PTHREAD_MUTEX_INITIALIZER, 0, NULL, 0, 0, NULL},
};

/* Lookups that saw a writer this many times in a row take the lock instead of trying
 * again: a writer preempted mid-change must not keep a hooked call spinning. */
#define READ_TRIES 64

static inline uint64_t load(const uint64_t *word)
{
    return __atomic_load_n(word, __ATOMIC_RELAXED);
}

/* Index of the first range whose start is > addr, in items[0..count). */
static size_t upper_bound(const struct range *items, size_t count, uint64_t addr)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (load(&items[mid].start) <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int inside(const struct range *items, size_t count, uint64_t addr)
{
    size_t at = upper_bound(items, count, addr);
    return at > 0 && addr - load(&items[at - 1].start) < load(&items[at - 1].size);
}

static void write_begin(struct range_set *set)
{
    pthread_mutex_lock(&set->lock);
    __atomic_store_n(&set->seq, set->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void write_end(struct range_set *set)
{
    __atomic_store_n(&set->seq, set->seq + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&set->lock);
}

static void store_range(struct range *item, uint64_t start, uint64_t size)
{
    __atomic_store_n(&item->start, start, __ATOMIC_RELAXED);
    __atomic_store_n(&item->size, size, __ATOMIC_RELAXED);
}

/* Moves items [from, count) by one place, up (+1) or down (-1), a word at a time. */
static void shift(struct range *items, size_t from, size_t count, int up)
{
    if (up) {
        for (size_t i = count; i > from; i--)
            store_range(&items[i], load(&items[i - 1].start), load(&items[i - 1].size));
    } else {
        for (size_t i = from; i + 1 < count; i++)
            store_range(&items[i], load(&items[i + 1].start), load(&items[i + 1].size));
    }
}

/* How many ranges an array holds: in the slot before its first (grow). A reader may pair
 * an array with a count written after a later one replaced it (it notices and reads again,
 * but only after searching): it searches no further than this. */
static size_t capacity_of(const struct range *items)
{
    return (size_t)load(&items[-1].size);
}

/* A larger array with the same ranges, published before the old one is retired. */
static int grow(struct range_set *set)
{
    size_t cap = set->cap ? set->cap * 2 : 64;
    struct range *block = malloc((cap + 1) * sizeof *block);
    struct retired *old = set->items ? malloc(sizeof *old) : NULL;
    if (!block || (set->items && !old)) {
        free(block);
        free(old);
        return -1;
    }
    block[0] = (struct range){0, cap};
    struct range *grown = block + 1;
    if (set->count)
        memcpy(grown, set->items, set->count * sizeof *grown);
    if (old) {
        *old = (struct retired){set->retired, set->items};
        set->retired = old;
    }
    __atomic_store_n(&set->items, grown, __ATOMIC_RELEASE);
    set->cap = cap;
    return 0;
}

void gw_ranges_add(enum gw_range_kind kind, uint64_t start, uint64_t size)
{
    if (!start || !size)
        return;
    struct range_set *set = &sets[kind];
    write_begin(set);
    if (set->count == set->cap && grow(set) != 0) {
        write_end(set);
        return;
    }
    size_t at = upper_bound(set->items, set->count, start);
    if (at > 0 && set->items[at - 1].start == start) {
        store_range(&set->items[at - 1], start, size); /* an address we missed freeing */
    } else {
        shift(set->items, at, set->count, 1);
        store_range(&set->items[at], start, size);
        __atomic_store_n(&set->count, set->count + 1, __ATOMIC_RELAXED);
    }
    write_end(set);
}

uint64_t gw_ranges_remove(enum gw_range_kind kind, uint64_t start)
{
    struct range_set *set = &sets[kind];
    uint64_t size = 0;
    write_begin(set);
    size_t at = upper_bound(set->items, set->count, start);
    if (at > 0 && set->items[at - 1].start == start) {
        size = set->items[at - 1].size;
        shift(set->items, at - 1, set->count, 0);
        __atomic_store_n(&set->count, set->count - 1, __ATOMIC_RELAXED);
    }
    write_end(set);
    return size;
}

int gw_ranges_contains(enum gw_range_kind kind, uint64_t addr)
{
    struct range_set *set = &sets[kind];
    for (int tries = 0; tries < READ_TRIES; tries++) {
        unsigned seq = __atomic_load_n(&set->seq, __ATOMIC_ACQUIRE);
        if (seq & 1)
            continue;
        const struct range *items = __atomic_load_n(&set->items, __ATOMIC_ACQUIRE);
        size_t count = __atomic_load_n(&set->count, __ATOMIC_RELAXED);
        if (items && count > capacity_of(items))
            count = capacity_of(items);  /* (a count newer than the array: read again) */
        int found = count && items && inside(items, count, addr);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&set->seq, __ATOMIC_RELAXED) == seq)
            return found;
    }
    pthread_mutex_lock(&set->lock);
    int found = set->count && inside(set->items, set->count, addr);
    pthread_mutex_unlock(&set->lock);
    return found;
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
    /* (a forked child: the parent's writer, if one was inside, is gone) */
    for (int kind = 0; kind < GW_RANGE_KINDS; kind++) {
        pthread_mutex_init(&sets[kind].lock, NULL);
        sets[kind].seq &= ~1u;
    }
}
