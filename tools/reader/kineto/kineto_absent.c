/* A gpuwatch built where yajl or zlib was missing (tools/reader/CMakeLists.txt): a PyTorch
 * profiler trace is recognised and refused with what to install, .gwt files read as ever. */
#include <stdio.h>

#include "kineto.h"
#include "../trace_reader_internal.h"

int gw_kineto_open(struct gw_reader *r, const char *path, char *err, size_t errlen)
{
    (void)r;
    if (err && errlen)
        snprintf(err, errlen, "%s: offset 0: a gzip or JSON file (a PyTorch profiler trace?), "
                 "but this gpuwatch was built without yajl and zlib: install libyajl-dev and "
                 "zlib1g-dev and build again to read it", path);
    return -1;
}

int gw_kineto_next(struct gw_reader *r, struct gw_event *ev)
{
    (void)r;
    (void)ev;
    return 0;
}

void gw_kineto_rewind(struct gw_reader *r) { (void)r; }
void gw_kineto_load_defs(struct gw_reader *r) { (void)r; }
void gw_kineto_close(struct gw_reader *r) { (void)r; }
