#include "hook_table.h"

#include <string.h>

#include "gw_cuda.h"

/* cuda.h (with __CUDA_API_VERSION_INTERNAL) declares every exact name; our definitions
 * of them live in hooks_*.c, so &name below is the wrapper. */
const struct gw_hook gw_hooks[] = {
#define GW_API(id, name, family, base, version, per_thread, async) {id, #name, (void *)&name},
#include "gpuwatch/api_list.h"
#undef GW_API
};
const size_t gw_hook_count = sizeof gw_hooks / sizeof gw_hooks[0];

void *gw_real_fn[GW_API_ID_LIMIT];

const struct gw_hook *gw_hook_by_name(const char *name)
{
    for (size_t i = 0; i < gw_hook_count; i++)
        if (strcmp(gw_hooks[i].name, name) == 0)
            return &gw_hooks[i];
    return NULL;
}

const struct gw_hook *gw_hook_by_real(const void *real)
{
    for (size_t i = 0; i < gw_hook_count; i++)
        if (gw_real_fn[gw_hooks[i].api_id] == real)
            return &gw_hooks[i];
    return NULL;
}
