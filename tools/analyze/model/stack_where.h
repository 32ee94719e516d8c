/* A native call stack in a few words, for people (stack_where.c). */
#ifndef GPUWATCH_ANALYZE_STACK_WHERE_H
#define GPUWATCH_ANALYZE_STACK_WHERE_H

#include <stddef.h>
#include <stdint.h>

struct gw_stack;

/* The first frames of st outside gpuwatch and the CUDA driver, innermost first, joined by
 * " ← ": demangled symbol names when known, else module+0xOFFSET; the first symbol's module
 * after them in parentheses ("leak_step ← main (train)"). When the first such frame is
 * PyTorch's (libc10*, libtorch*), "pytorch_label (library)" and nothing more: its C++
 * frames say nothing of the program. string resolves string ids (with user). "" when the
 * stack has no frame outside those. */
void an_stack_where(const struct gw_stack *st, const char *(*string)(void *user, uint64_t id),
                    void *user, const char *pytorch_label, char *out, size_t size);

#endif
