/* Whether this thread is inside one of the shim's hooks: the driver calling itself, CUPTI's
 * own driver calls and the shim's calls into the driver are never recorded. */
#ifndef GW_HOOK_GUARD_H
#define GW_HOOK_GUARD_H

#include "gw_cuda.h"

extern GW_TLS int gw_in_hook;

#endif
