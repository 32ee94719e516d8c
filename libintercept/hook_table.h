/* The table of hooked driver functions: exact exported name, our wrapper, and the slot
 * for the real driver's function. Rows come from include/gpuwatch/api_list.h. */
#ifndef GW_HOOK_TABLE_H
#define GW_HOOK_TABLE_H

#include <stddef.h>

#include "gpuwatch/trace_format.h"

struct gw_hook {
    unsigned api_id;
    const char *name;
    void *wrapper;
};

extern const struct gw_hook gw_hooks[];
extern const size_t gw_hook_count;
/* The real driver function for each api id; filled by gw_resolve_init(). */
extern void *gw_real_fn[GW_API_ID_LIMIT];

const struct gw_hook *gw_hook_by_name(const char *name);
/* The hook whose real function is exactly this pointer, or NULL. */
const struct gw_hook *gw_hook_by_real(const void *real);

#endif
