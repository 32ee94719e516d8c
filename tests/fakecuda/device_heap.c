/*
 * fakecuda: a first-fit range allocator over [0, capacity).
 *
 * Blocks tile the whole range in address order; free blocks are also on an address-ordered
 * free list, and used blocks are in a hash by offset. Allocation takes the first free block
 * that fits (so fragmentation is reproducible), splitting off any alignment padding and the
 * unused tail; freeing coalesces with free neighbours. Offsets only: the caller adds a base
 * address and does the locking.
 */
#include "fakecuda.h"

#include <stdlib.h>

static size_t hash_of(const fc_heap *h, uint64_t off)
{
    uint64_t k = off / h->align;
    k ^= k >> 17;
    k *= 0x9e3779b97f4a7c15ull;
    return (size_t)(k >> 20) & (h->nbuckets - 1);
}

static void hash_insert(fc_heap *h, fc_block *b)
{
    if (h->nused + 1 > h->nbuckets * 2) {
        size_t n = h->nbuckets * 4;
        fc_block **nb = calloc(n, sizeof *nb);
        if (nb) {                  /* on failure keep the old table, just longer chains */
            fc_block **old = h->buckets;
            size_t oldn = h->nbuckets;
            h->buckets = nb;
            h->nbuckets = n;
            for (size_t i = 0; i < oldn; i++)
                for (fc_block *x = old[i], *nx; x; x = nx) {
                    nx = x->hnext;
                    size_t k = hash_of(h, x->off);
                    x->hnext = nb[k];
                    nb[k] = x;
                }
            free(old);
        }
    }
    size_t k = hash_of(h, b->off);
    b->hnext = h->buckets[k];
    h->buckets[k] = b;
    h->nused++;
}

static void hash_remove(fc_heap *h, fc_block *b)
{
    fc_block **pp = &h->buckets[hash_of(h, b->off)];
    while (*pp && *pp != b)
        pp = &(*pp)->hnext;
    if (*pp) {
        *pp = b->hnext;
        h->nused--;
    }
    b->hnext = NULL;
}

int fc_heap_init(fc_heap *h, uint64_t capacity, uint64_t align)
{
    h->capacity = capacity;
    h->align = align;
    h->used = 0;
    h->nbuckets = 256;
    h->nused = 0;
    h->buckets = calloc(h->nbuckets, sizeof *h->buckets);
    fc_block *b = calloc(1, sizeof *b);
    if (!h->buckets || !b) {
        free(h->buckets);
        free(b);
        return -1;
    }
    b->size = capacity;
    h->head = h->free_head = b;
    return 0;
}

/* Split free block b at relative offset at: b keeps [off, off+at), a new free block takes
 * the rest and follows b on both lists. */
static fc_block *split(fc_block *b, uint64_t at)
{
    fc_block *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->off = b->off + at;
    n->size = b->size - at;
    b->size = at;
    n->prev = b;
    n->next = b->next;
    if (b->next)
        b->next->prev = n;
    b->next = n;
    n->fprev = b;
    n->fnext = b->fnext;
    if (b->fnext)
        b->fnext->fprev = n;
    b->fnext = n;
    return n;
}

static void free_list_remove(fc_heap *h, fc_block *b)
{
    if (b->fprev)
        b->fprev->fnext = b->fnext;
    else
        h->free_head = b->fnext;
    if (b->fnext)
        b->fnext->fprev = b->fprev;
    b->fprev = b->fnext = NULL;
}

fc_block *fc_heap_alloc(fc_heap *h, uint64_t size, uint64_t align)
{
    if (size == 0)
        return NULL;
    if (align < h->align)
        align = h->align;
    uint64_t need = (size + h->align - 1) / h->align * h->align;
    if (need < size)
        return NULL;               /* overflow */
    for (fc_block *b = h->free_head; b; b = b->fnext) {
        uint64_t start = (b->off + align - 1) / align * align;
        uint64_t pad = start - b->off;
        if (pad > b->size || b->size - pad < need)
            continue;
        if (pad) {
            fc_block *n = split(b, pad);
            if (!n)
                return NULL;
            b = n;
        }
        if (b->size > need && !split(b, need))
            return NULL;
        free_list_remove(h, b);
        b->used = 1;
        b->req = size;
        hash_insert(h, b);
        h->used += b->size;
        return b;
    }
    return NULL;
}

fc_block *fc_heap_find(fc_heap *h, uint64_t off)
{
    for (fc_block *b = h->buckets[hash_of(h, off)]; b; b = b->hnext)
        if (b->off == off)
            return b;
    return NULL;
}

fc_block *fc_heap_containing(fc_heap *h, uint64_t off)
{
    fc_block *b = fc_heap_find(h, off);
    if (b)
        return b;
    for (b = h->head; b && b->off <= off; b = b->next)
        if (off < b->off + b->size)
            return b->used ? b : NULL;
    return NULL;
}

static void merge_next(fc_heap *h, fc_block *a)
{
    fc_block *b = a->next;
    a->size += b->size;
    a->next = b->next;
    if (b->next)
        b->next->prev = a;
    free_list_remove(h, b);
    free(b);
}

void fc_heap_free(fc_heap *h, fc_block *b)
{
    hash_remove(h, b);
    h->used -= b->size;
    b->used = 0;
    b->kind = 0;
    b->owner = NULL;
    /* insert into the free list after the nearest free block below it */
    fc_block *p = b->prev;
    while (p && p->used)
        p = p->prev;
    b->fprev = p;
    b->fnext = p ? p->fnext : h->free_head;
    if (b->fnext)
        b->fnext->fprev = b;
    if (p)
        p->fnext = b;
    else
        h->free_head = b;
    if (b->next && !b->next->used)
        merge_next(h, b);
    if (b->prev && !b->prev->used)
        merge_next(h, b->prev);
}
