/* Finding the real driver, and the two lookup paths that bypass symbol interposition:
 * dlsym on a libcuda handle and cuGetProcAddress. */
#ifndef GW_RESOLVE_H
#define GW_RESOLVE_H

#include "gw_cuda.h"
#include "hook_table.h"

/* Finds libcuda.so.1 (loading it if the program has not) and every real function in the
 * table. Idempotent and thread-safe; 0 on success. */
int gw_resolve_init(void);

/* The real function for api_id, resolving on first use; NULL when the driver lacks it. */
static inline void *gw_real(unsigned api_id)
{
    void *real = __atomic_load_n(&gw_real_fn[api_id], __ATOMIC_ACQUIRE);
    if (GW_UNLIKELY(!real) && gw_resolve_init() == 0)
        real = __atomic_load_n(&gw_real_fn[api_id], __ATOMIC_ACQUIRE);
    return real;
}

/* A driver symbol outside the table (helpers the shim itself calls). */
void *gw_driver_symbol(const char *name);

/* A symbol of the program's global scope (RTLD_DEFAULT), or NULL; dlerror() left clear. */
void *gw_global_symbol(const char *name);
/* The next definition after the shim's own (RTLD_NEXT from the shim), or NULL. */
void *gw_next_symbol(const char *name);

/* 1 when code at this address belongs to the driver itself or to CUPTI: those lookups
 * must get the real functions, never our wrappers. */
int gw_caller_is_private(const void *address);

#endif
