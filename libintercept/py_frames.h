/* Python call stacks of the calls findings are about (py_frames.c). */
#ifndef GW_PY_FRAMES_H
#define GW_PY_FRAMES_H

/* At tracing start: when the process runs CPython 3.10 or later (its C API in the global
 * scope) and depth > 0, stacks of up to depth frames are recorded from now on. Nothing
 * happens in a process that is not Python. */
void gw_py_init(unsigned depth);

#endif
