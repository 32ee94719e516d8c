#include "gw_map.h"

#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

uint64_t *gw_map_get(const struct gw_map *map, uint64_t key)
{
    if (map->cap == 0)
        return NULL;
    for (size_t i = slot_of(key, map->cap);; i = (i + 1) & (map->cap - 1)) {
        if (!map->used[i])
            return NULL;
        if (map->keys[i] == key)
            return &map->values[i];
    }
}

static int grow(struct gw_map *map)
{
    size_t cap = map->cap ? map->cap * 2 : 64;
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint64_t *values = malloc(cap * sizeof *values);
    uint8_t *used = calloc(cap, 1);
    if (!keys || !values || !used) {
        free(keys);
        free(values);
        free(used);
        return -1;
    }
    for (size_t j = 0; j < map->cap; j++) {
        if (!map->used[j])
            continue;
        size_t i = slot_of(map->keys[j], cap);
        while (used[i])
            i = (i + 1) & (cap - 1);
        used[i] = 1;
        keys[i] = map->keys[j];
        values[i] = map->values[j];
    }
    free(map->keys);
    free(map->values);
    free(map->used);
    map->keys = keys;
    map->values = values;
    map->used = used;
    map->cap = cap;
    return 0;
}

int gw_map_put(struct gw_map *map, uint64_t key, uint64_t value)
{
    uint64_t *slot = gw_map_get(map, key);
    if (slot) {
        *slot = value;
        return 0;
    }
    if ((map->count + 1) * 4 > map->cap * 3 && grow(map) != 0)
        return -1;
    size_t i = slot_of(key, map->cap);
    while (map->used[i])
        i = (i + 1) & (map->cap - 1);
    map->used[i] = 1;
    map->keys[i] = key;
    map->values[i] = value;
    map->count++;
    return 0;
}

void gw_map_clear(struct gw_map *map)
{
    for (size_t i = 0; i < map->cap; i++)
        map->used[i] = 0;
    map->count = 0;
}

void gw_map_free(struct gw_map *map)
{
    free(map->keys);
    free(map->values);
    free(map->used);
    map->keys = map->values = NULL;
    map->used = NULL;
    map->cap = map->count = 0;
}
