/* A thread's own Python stack read from the interpreter's memory, without the GIL
 * (py_raw_frames.c). */
#ifndef GW_PY_RAW_FRAMES_H
#define GW_PY_RAW_FRAMES_H

#include <stdint.h>

/* 0 when Python 3.`minor`'s layout is known (version: Py_GetVersion's text; a free-threaded
 * build's is not) and the interpreter's symbols were found. */
int gw_py_raw_init(unsigned minor, const char *version);
/* The calling thread's stack, its PyThreadState given: (key, line) pairs, innermost first,
 * at most max frames, for gw_rec_pystack with gw_py_raw_describe. */
unsigned gw_py_raw_stack(const void *thread_state, uint64_t *keys, unsigned max);
void gw_py_raw_describe(const uint64_t *key, uint64_t *frame);

#endif
