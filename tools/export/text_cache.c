/* Rendered JSON text kept by key (text_cache.h). */
#include "text_cache.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TEXT ((1u << 24) - 1)

const char *gw_text_cache_get(const struct gw_text_cache *c, uint64_t key, size_t *n)
{
    const uint64_t *at = gw_map_get(&c->index, key);
    if (!at)
        return NULL;
    *n = (size_t)(*at & MAX_TEXT);
    return c->pool + (*at >> 24);
}

const char *gw_text_cache_put(struct gw_text_cache *c, uint64_t key, const char *text, size_t n)
{
    if (n > MAX_TEXT)
        return NULL;
    if (c->used + n > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->used + n)
            cap *= 2;
        char *grown = realloc(c->pool, cap);
        if (!grown)
            return NULL;
        c->pool = grown;
        c->cap = cap;
    }
    if (gw_map_put(&c->index, key, (uint64_t)c->used << 24 | n) != 0)
        return NULL;
    memcpy(c->pool + c->used, text, n);
    c->used += n;
    return c->pool + c->used - n;
}

void gw_text_cache_free(struct gw_text_cache *c)
{
    gw_map_free(&c->index);
    free(c->pool);
    memset(c, 0, sizeof *c);
}
