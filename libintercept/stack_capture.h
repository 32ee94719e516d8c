/* Native call stacks: of allocating calls (ALLOC, HOSTMEM allocations, cuMemCreate) and
 * of the other calls findings are about (call_sites.c). */
#ifndef GW_STACK_CAPTURE_H
#define GW_STACK_CAPTURE_H

#include <stdint.h>

/* Loads the unwinder once, for stacks of up to depth frames (0: none); at tracing start.
 * libunwind unless use_libc, or when libunwind is not installed: glibc's backtrace(). */
void gw_stack_init(unsigned depth, int use_libc);

/* The STACK id of the program's call into the hook that calls this (the shim's own
 * frames left out), defining it the first time; 0 when stacks are off or unwinding failed.
 * It costs an unwind: only for the calls findings are about. */
uint64_t gw_stack_here(void);

#endif
