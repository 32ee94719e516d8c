/* Kernels by name, from host launches or GPU records: count and summed time
 * (gpuwatch stats). Launches and records name their kernel by a shape id, whose name is
 * looked up once per shape of a trace (gw_shape_cache). */
#ifndef GPUWATCH_KERNEL_STATS_H
#define GPUWATCH_KERNEL_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "gw_map.h"

struct gw_reader;

struct gw_kernel_stat {
    char *name;
    uint64_t launches, total_ns;
};

struct gw_kernel_table {
    struct gw_kernel_stat *items;
    size_t count, cap;
    struct gw_map ids;            /* name hash (+ probe) -> index */
};

/* Shape id -> kernel index for one trace (shape ids are per trace), with a direct-mapped
 * front for the hot ones: a launch-bound trace looks one up per call. Zeroed to start. */
#define GW_SHAPE_FRONT 64
struct gw_shape_cache {
    struct gw_map map;
    uint64_t ids[GW_SHAPE_FRONT];  /* shape id + 1, 0 empty */
    uint64_t index[GW_SHAPE_FRONT];
};

/* The entry of the kernel named name, made (at zero) when new; NULL when memory ran out. */
struct gw_kernel_stat *gw_kernel_by_name(struct gw_kernel_table *t, const char *name);
/* The entry of the kernel of shape_id in the trace r reads: its name, "shape_<id>" when
 * the trace (or a NULL r) does not name it. */
struct gw_kernel_stat *gw_kernel_by_shape(struct gw_kernel_table *t,
                                          struct gw_shape_cache *cache,
                                          const struct gw_reader *r, uint64_t shape_id);
/* Most launched first / most time first; ties by name. */
void gw_kernel_sort_by_launches(struct gw_kernel_table *t);
void gw_kernel_sort_by_time(struct gw_kernel_table *t);
void gw_kernel_table_free(struct gw_kernel_table *t);
/* Frees and empties the cache, for the next trace. */
void gw_shape_cache_reset(struct gw_shape_cache *cache);

#endif
