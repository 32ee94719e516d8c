/* C++ symbol names as people read them, by the C++ runtime's own demangler. */
#ifndef GPUWATCH_DEMANGLE_H
#define GPUWATCH_DEMANGLE_H

#include <stddef.h>

/* The demangled form of a mangled C++ name ("_Z...") in out (cut to size), and out;
 * the name itself when it is not mangled, or no C++ runtime (libstdc++.so.6, loaded at
 * the first call, never linked) demangles it. Thread-safe. */
const char *gw_demangle(const char *name, char *out, size_t size);

#endif
