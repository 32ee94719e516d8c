/* A small open-addressing hash map from u64 keys to u64 values, used by the reader's
 * definition tables and per-thread sequence tracking. Ids in traces come from files we do
 * not trust, so tables are keyed by hash rather than indexed by id. */
#ifndef GPUWATCH_GW_MAP_H
#define GPUWATCH_GW_MAP_H

#include <stddef.h>
#include <stdint.h>

struct gw_map {
    uint64_t *keys;
    uint64_t *values;
    uint8_t *used;
    size_t cap;    /* power of two, or 0 */
    size_t count;
};

/* Returns a pointer to the value for key, or NULL when absent. The pointer stays valid
 * until the next gw_map_put. */
uint64_t *gw_map_get(const struct gw_map *map, uint64_t key);
/* Inserts or replaces. Returns 0, or -1 when out of memory (the map is unchanged). */
int gw_map_put(struct gw_map *map, uint64_t key, uint64_t value);
void gw_map_clear(struct gw_map *map);
void gw_map_free(struct gw_map *map);

#endif
