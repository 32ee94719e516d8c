/*
 * Where gpuwatch's own parts are, found from the command's location so that the same binary
 * works installed by CMake (PREFIX/bin, PREFIX/lib), inside the Python package a wheel
 * installs (site-packages/gpuwatch/bin, .../lib), and in the build tree; and which CUPTI a
 * traced program would load (gpuwatch/cupti_search.h's order, said from outside it).
 */
#ifndef GPUWATCH_INSTALL_PATHS_H
#define GPUWATCH_INSTALL_PATHS_H

#include <stddef.h>
#include <stdio.h>

#define GW_SHIM_NAME "libgpuwatch.so"
#define GW_SHIM_ENV "GPUWATCH_LIB"

/* The shim's path into out (absolute where it was found; else the bare name for the loader
 * to find), and why that one (static text). */
const char *gw_find_shim(char *out, size_t outlen);

/* The lines of `gpuwatch --version`: the version, the shim and why, the CUPTI a traced
 * program would load and why. */
void gw_print_version(FILE *out, const char *version, unsigned format_version);

#endif
