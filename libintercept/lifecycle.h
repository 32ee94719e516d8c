/* When tracing starts and stops: lazily on the first driver call, never in a constructor;
 * at exit, on SIGINT/SIGTERM and crashes (then the program's own handling), and anew after fork. */
#ifndef GW_LIFECYCLE_H
#define GW_LIFECYCLE_H

#include "gw_cuda.h"
#include "hook_guard.h"

enum gw_state { GW_STATE_UNINIT = 0, GW_STATE_STARTING, GW_STATE_READY, GW_STATE_OFF };

extern int gw_state;

int gw_enter_slow(void);

/* Returns 1 when this call should be recorded; then gw_leave() must follow. Calls made
 * while a hook is already running on this thread (the driver calling itself, our own
 * calls into the driver) are never recorded. */
static inline int gw_enter(void)
{
    if (GW_LIKELY(__atomic_load_n(&gw_state, __ATOMIC_RELAXED) == GW_STATE_READY &&
                  !gw_in_hook)) {
        gw_in_hook = 1;
        return 1;
    }
    return gw_enter_slow();
}

static inline void gw_leave(void) { gw_in_hook = 0; }

/* Starts tracing if it has not started; 1 when tracing is on. Safe to call anywhere. */
int gw_tracing_start(void);

#endif
