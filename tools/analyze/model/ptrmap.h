/*
 * Live allocations: pointer (or VMM handle) -> size, kind, time, thread. Open addressing
 * with linear probing and backward-shift deletion, so a long run of alloc/free leaves no
 * tombstones behind: memory follows the number of live allocations only.
 */
#ifndef GPUWATCH_ANALYZE_PTRMAP_H
#define GPUWATCH_ANALYZE_PTRMAP_H

#include <stddef.h>
#include <stdint.h>

struct an_alloc {
    uint64_t key;      /* pointer or tagged handle; 0 = empty slot */
    uint64_t bytes;
    uint64_t ts;
    uint32_t tid;
    uint8_t kind;      /* enum an_mem_kind */
    uint64_t stack;    /* STACK id of the allocating call, 0 unknown */
};

struct an_ptrmap {
    struct an_alloc *slots;
    size_t cap, count;  /* cap: power of two or 0 */
};

/* Inserts or replaces (key must not be 0). Returns 0, or -1 when out of memory. */
int an_ptrmap_put(struct an_ptrmap *m, const struct an_alloc *a);
/* Removes key into *out (when out is not NULL); returns 1 when it was there. */
int an_ptrmap_take(struct an_ptrmap *m, uint64_t key, struct an_alloc *out);
const struct an_alloc *an_ptrmap_get(const struct an_ptrmap *m, uint64_t key);
void an_ptrmap_free(struct an_ptrmap *m);

#endif
