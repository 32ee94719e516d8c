/* GPU time by kernel (kernel_times.h). */
#include "kernel_times.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct an_kernel_sum *far_slot(struct an_kernel_times *kt, uint64_t shape)
{
    uint64_t *at = gw_map_get(&kt->far_index, shape);
    if (at)
        return &kt->far[*at - 1];
    struct an_kernel_sum *far = realloc(kt->far, (kt->nfar + 1) * sizeof *far);
    if (!far)
        return NULL;
    kt->far = far;
    uint64_t *shapes = realloc(kt->far_shape, (kt->nfar + 1) * sizeof *shapes);
    if (!shapes)
        return NULL;
    kt->far_shape = shapes;
    if (gw_map_put(&kt->far_index, shape, kt->nfar + 1) != 0)
        return NULL;
    kt->far_shape[kt->nfar] = shape;
    memset(&kt->far[kt->nfar], 0, sizeof kt->far[0]);
    return &kt->far[kt->nfar++];
}

struct an_kernel_sum *an_kernel_times_add_slow(struct an_kernel_times *kt, uint64_t shape,
                                               uint64_t ns)
{
    struct an_kernel_sum *sum = NULL;
    if (shape < AN_KERNEL_TABLE_MAX) {
        size_t cap = kt->cap ? kt->cap : 64;
        while (cap <= shape)
            cap *= 2;
        struct an_kernel_sum *table = realloc(kt->table, cap * sizeof *table);
        if (table) {
            memset(table + kt->cap, 0, (cap - kt->cap) * sizeof *table);
            kt->table = table;
            kt->cap = cap;
            sum = &table[shape];
        }
    } else {
        sum = far_slot(kt, shape);
    }
    if (sum) {  /* (out of memory: this record's time is not counted) */
        sum->records++;
        sum->gpu_ns += ns;
    }
    return sum;
}

/* Insertion into the short list, most GPU time first. */
static void consider(struct an_kernel_time *top, size_t *n, size_t max, uint64_t shape,
                     const struct an_kernel_sum *sum)
{
    if (!sum->records)
        return;
    size_t at = *n;
    while (at > 0 && (top[at - 1].gpu_ns < sum->gpu_ns ||
                      (top[at - 1].gpu_ns == sum->gpu_ns && top[at - 1].shape_id > shape)))
        at--;
    if (at >= max)
        return;
    size_t kept = *n < max ? *n : max - 1;
    memmove(&top[at + 1], &top[at], (kept - at) * sizeof top[0]);
    top[at] = (struct an_kernel_time){.shape_id = shape, .records = sum->records,
                                      .gpu_ns = sum->gpu_ns};
    *n = kept + 1;
}

size_t an_kernel_times_top(const struct an_kernel_times *kt, struct an_kernel_time *top,
                           size_t max, const char *(*resolve)(void *, int, uint64_t), void *user)
{
    size_t n = 0;
    if (!max)
        return 0;
    for (size_t s = 0; s < kt->cap; s++)
        consider(top, &n, max, s, &kt->table[s]);
    for (size_t i = 0; i < kt->nfar; i++)
        consider(top, &n, max, kt->far_shape[i], &kt->far[i]);
    for (size_t i = 0; i < n; i++) {
        const char *name = resolve ? resolve(user, 1, top[i].shape_id) : NULL;
        snprintf(top[i].name, sizeof top[i].name, "%s", name && *name ? name : "?");
    }
    return n;
}

void an_kernel_times_free(struct an_kernel_times *kt)
{
    free(kt->table);
    free(kt->far);
    free(kt->far_shape);
    gw_map_free(&kt->far_index);
    memset(kt, 0, sizeof *kt);
}
