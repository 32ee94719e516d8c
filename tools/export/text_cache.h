/*
 * JSON text rendered once and copied after: the start of a trace event ({"ph", "name",
 * "cat", "pid", "tid"), or a kernel's escaped name, is the same for millions of events of
 * one track and name, and rendering it key by key cost as much as the rest of the event.
 * Keys are the caller's; each maps to a piece of a pool that only grows.
 */
#ifndef GPUWATCH_TEXT_CACHE_H
#define GPUWATCH_TEXT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "gw_map.h"

struct gw_text_cache {
    struct gw_map index;     /* key -> offset << 24 | length in pool */
    char *pool;
    size_t used, cap;
};

/* The text kept under key, its length in *n; NULL when none is. */
const char *gw_text_cache_get(const struct gw_text_cache *c, uint64_t key, size_t *n);
/* Keeps a copy of text under key and returns it; NULL when out of memory or the text is
 * longer than 16 MiB (the caller then renders it each time). */
const char *gw_text_cache_put(struct gw_text_cache *c, uint64_t key, const char *text, size_t n);
void gw_text_cache_free(struct gw_text_cache *c);

#endif
