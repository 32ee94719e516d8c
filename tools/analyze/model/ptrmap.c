#include "ptrmap.h"

#include <stdlib.h>
#include <string.h>

static inline size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

static int grow(struct an_ptrmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    struct an_alloc *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key)
            continue;
        size_t j = slot_of(m->slots[i].key, cap);
        while (slots[j].key)
            j = (j + 1) & (cap - 1);
        slots[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

int an_ptrmap_put(struct an_ptrmap *m, const struct an_alloc *a)
{
    if ((m->count + 1) * 4 > m->cap * 3 && grow(m) != 0)
        return -1;
    size_t i = slot_of(a->key, m->cap);
    while (m->slots[i].key && m->slots[i].key != a->key)
        i = (i + 1) & (m->cap - 1);
    if (!m->slots[i].key)
        m->count++;
    m->slots[i] = *a;
    return 0;
}

static size_t find(const struct an_ptrmap *m, uint64_t key)
{
    if (!m->cap || !key)
        return SIZE_MAX;
    size_t i = slot_of(key, m->cap);
    while (m->slots[i].key) {
        if (m->slots[i].key == key)
            return i;
        i = (i + 1) & (m->cap - 1);
    }
    return SIZE_MAX;
}

const struct an_alloc *an_ptrmap_get(const struct an_ptrmap *m, uint64_t key)
{
    size_t i = find(m, key);
    return i == SIZE_MAX ? NULL : &m->slots[i];
}

int an_ptrmap_take(struct an_ptrmap *m, uint64_t key, struct an_alloc *out)
{
    size_t i = find(m, key);
    if (i == SIZE_MAX)
        return 0;
    if (out)
        *out = m->slots[i];
    /* backward shift: move later members of the probe run into the hole */
    size_t mask = m->cap - 1, hole = i, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->slots[j].key)
            break;
        size_t home = slot_of(m->slots[j].key, m->cap);
        /* j may move to the hole when its home is not in (hole, j] cyclically */
        int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    memset(&m->slots[hole], 0, sizeof m->slots[hole]);
    m->count--;
    return 1;
}

void an_ptrmap_free(struct an_ptrmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}
