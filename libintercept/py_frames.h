/* Python call stacks of the calls findings are about (py_frames.c). */
#ifndef GW_PY_FRAMES_H
#define GW_PY_FRAMES_H

#include <stdint.h>

/* At tracing start: when the process runs CPython 3.10 or later (its C API in the global
 * scope) and depth > 0, stacks of up to depth frames are recorded from now on. Nothing
 * happens in a process that is not Python. read_frames: a GIL-released call's stack is read
 * from the interpreter's memory where its version's layout is known (GPUWATCH_PY_FRAMES). */
void gw_py_init(unsigned depth, int read_frames);
/* Whether Python stacks are being recorded. */
int gw_py_on(void);
/* The calling thread's call numbered call_number (just recorded) wants its Python stack:
 * read now when the thread holds the GIL or its frames can be read without it, else when it
 * takes the GIL back (where that can be followed); named by a PYSITE record either way. */
void gw_py_site(uint64_t call_number);

#endif
