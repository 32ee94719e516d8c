/* Which calls get call stacks beyond allocations, native and Python (call_sites.c). */
#ifndef GW_CALL_SITES_H
#define GW_CALL_SITES_H

/* At tracing start, after gw_stack_init and gw_py_init: watches calls from now on when
 * native stacks are on (native: at most one every native_every_ms per thread, 0 no limit)
 * or Python stacks are (gw_py_on()). */
void gw_call_sites_start(int native, unsigned native_every_ms);

#endif
