/* GPU copies by CUPTI copy kind and source and destination memory kinds, or sets by memory
 * kind: count, bytes and summed time (gpuwatch stats; bandwidth is bytes over time). */
#ifndef GPUWATCH_TRANSFER_STATS_H
#define GPUWATCH_TRANSFER_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "gw_map.h"

struct gw_transfer_stat {
    unsigned kind, src, dst;      /* memset: kind = memory kind, src = dst = 0 */
    uint64_t count, bytes, total_ns;
};

struct gw_transfer_table {
    struct gw_transfer_stat *items;
    size_t count, cap;
    struct gw_map ids;            /* kind << 40 | src << 20 | dst -> index */
};

/* The entry of those kinds (each kept to 20 bits: they key one 60-bit word), made at zero
 * when new; NULL when memory ran out. */
struct gw_transfer_stat *gw_transfer_get(struct gw_transfer_table *t, unsigned kind,
                                         unsigned src, unsigned dst);
/* By kind, then source, then destination. */
void gw_transfer_sort(struct gw_transfer_table *t);
void gw_transfer_table_free(struct gw_transfer_table *t);

#endif
