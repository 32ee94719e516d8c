/* Doubling growth for the stats tables' arrays. A trace's ids are not trusted to be dense,
 * so the tables grow by what is seen rather than being sized by the largest id. */
#ifndef GPUWATCH_STATS_GROW_H
#define GPUWATCH_STATS_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* items with room for count + 1 (the same array when it has it), NULL when memory ran out
 * (items are then untouched). */
static inline void *gw_stats_grow(void *items, size_t *cap, size_t count, size_t size)
{
    if (count < *cap)
        return items;
    size_t ncap = *cap ? *cap * 2 : 32;
    void *grown = realloc(items, ncap * size);
    if (grown)
        *cap = ncap;
    return grown;
}

#endif
