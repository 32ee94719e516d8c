/*
 * Where the memory still held at exit was allocated: the live allocations grouped by the
 * STACK of their allocating call, each named by its first frames outside gpuwatch and the
 * CUDA libraries ("leak_step <- main (train)", with a real arrow), stacks of the same name
 * merged, largest first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_map.h"
#include "model_internal.h"
#include "stack_where.h"
#include "trace_reader.h"

static const char *model_string(void *user, uint64_t id)
{
    const struct an_model *m = user;
    return m->resolve ? m->resolve(m->resolve_user, 0, id) : NULL;
}

static void describe(const struct an_model *m, uint64_t id, char *out, size_t size)
{
    out[0] = 0;
    const struct gw_stack *st = m->stack ? m->stack(m->resolve_user, id) : NULL;
    if (st)
        an_stack_where(st, model_string, (void *)m, AN_SITE_PYTORCH, out, size);
}

/* Largest first; then more blocks; a recorded stack before none; then by id. */
static int by_bytes(const void *a, const void *b)
{
    const struct an_alloc_site *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    if (!x->stack != !y->stack)
        return !x->stack ? 1 : -1;
    return (x->stack > y->stack) - (x->stack < y->stack);
}

/* By name, the largest first within one name. */
static int by_name(const void *a, const void *b)
{
    const struct an_alloc_site *x = a, *y = b;
    int c = strcmp(x->where, y->where);
    return c ? c : by_bytes(a, b);
}

/* Stacks that differ only beyond the frames named, or in offsets within the same functions
 * (a function called from two places in main; in PyTorch, every stack through its
 * allocator), are one site to the user: merged, under the stack id of the largest. Sites
 * without a name stay apart. Returns how many sites are left. */
static size_t merge_same_names(struct an_alloc_site *sites, size_t nsites)
{
    qsort(sites, nsites, sizeof *sites, by_name);
    size_t kept = 0;
    for (size_t i = 0; i < nsites; i++) {
        struct an_alloc_site *last = kept ? &sites[kept - 1] : NULL;
        if (last && sites[i].where[0] && !strcmp(last->where, sites[i].where)) {
            last->bytes += sites[i].bytes;
            last->count += sites[i].count;
        } else {
            sites[kept++] = sites[i];
        }
    }
    return kept;
}

void an_alloc_sites(struct an_model *m)
{
    const struct an_ptrmap *live = &m->state->live;
    struct an_memory *mem = &m->mem;
    mem->nsites = 0;
    struct gw_map index = {0};   /* stack id -> index in sites */
    struct an_alloc_site *sites = NULL;
    size_t nsites = 0, cap = 0;
    int any_stack = 0;
    for (size_t i = 0; i < live->cap; i++) {
        const struct an_alloc *a = &live->slots[i];
        if (!a->key)
            continue;
        uint64_t *at = gw_map_get(&index, a->stack);
        if (!at) {
            if (nsites == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                struct an_alloc_site *grown = realloc(sites, ncap * sizeof *grown);
                if (!grown)
                    break;  /* out of memory: the sites found so far */
                sites = grown;
                cap = ncap;
            }
            if (gw_map_put(&index, a->stack, nsites) != 0)
                break;
            sites[nsites] = (struct an_alloc_site){.stack = a->stack};
            at = gw_map_get(&index, a->stack);
            nsites++;
        }
        sites[*at].bytes += a->bytes;
        sites[*at].count++;
        any_stack |= a->stack != 0;
    }
    gw_map_free(&index);
    if (any_stack) {
        for (size_t i = 0; i < nsites; i++)
            if (sites[i].stack)
                describe(m, sites[i].stack, sites[i].where, sizeof sites[i].where);
        nsites = merge_same_names(sites, nsites);
        qsort(sites, nsites, sizeof *sites, by_bytes);
        mem->nsites = nsites < AN_KEEP_SITES ? nsites : AN_KEEP_SITES;
        memcpy(mem->site, sites, mem->nsites * sizeof *sites);
    }
    free(sites);
}
