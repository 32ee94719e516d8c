/*
 * The user's source, read where the analysis runs (py_source.c): a batch fetched by a `for`
 * loop over a DataLoader shows in the trace only as the stretch before the loop body's
 * first CUDA call, whose line the Python stack names; the line that fetched it is the loop's
 * header above that call.
 */
#ifndef GPUWATCH_ANALYZE_PY_SOURCE_H
#define GPUWATCH_ANALYZE_PY_SOURCE_H

#include <stddef.h>
#include <stdint.h>

/* The `for ... in ...:` (or `async for`) header of the innermost loop enclosing `line` of
 * `path`: 1 with *loop_line and its text (stripped, cut to size) filled; 0 when the file
 * cannot be read, the line is not in it, or no loop encloses it in the same function. */
int an_py_loop_header(const char *path, uint64_t line, uint64_t *loop_line, char *text,
                      size_t size);

#endif
