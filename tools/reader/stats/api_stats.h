/* Host calls per exact driver entry point: count, errors and host time (gpuwatch stats). */
#ifndef GPUWATCH_API_STATS_H
#define GPUWATCH_API_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "gpuwatch/trace_format.h"
#include "gw_map.h"

struct gw_api_stat {
    uint32_t api_id;
    char name[48];   /* exact names are at most 31 characters; "api_<id>" otherwise */
    uint64_t count, errors, total_ns;
};

struct gw_api_table {
    struct gw_api_stat *items;
    size_t count, cap;
    struct gw_map ids;            /* api id -> index */
    /* index + 1 for ids below the limit, 0 unseen: every call looks its entry up, and
     * the ids this build knows skip the hash */
    uint32_t known[GW_API_ID_LIMIT];
};

/* Counts one call of api_id (an error when result is not 0). Returns 0, or -1 when memory
 * ran out (the call is then not counted). */
int gw_api_table_add(struct gw_api_table *t, uint32_t api_id, uint32_t result,
                     uint64_t dur_ns);
/* Most called first, ties by name. Adding after sorting is not allowed (known[] is stale). */
void gw_api_table_sort(struct gw_api_table *t);
void gw_api_table_free(struct gw_api_table *t);

#endif
