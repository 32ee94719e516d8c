/*
 * What gpuwatch stats counts over a set of traces: calls per entry point, kernels by
 * launches and by GPU time and copies and sets by kind for all of them together
 * (struct gw_stats), and per trace its header, the reader's counts, each device's busy
 * time and the NVTX ranges and marks (struct gw_trace_stat). The command prints them.
 *
 *   struct gw_stats st;
 *   gw_stats_init(&st, n);                // st.traces[i].path = ...
 *   for each i: gw_stats_read(&st, &st.traces[i], on_damage, user);
 *   gw_stats_sort(&st);                   // the order the command prints in
 *   ... gw_stats_totals(&st) ...
 *   gw_stats_free(&st);
 */
#ifndef GPUWATCH_TRACE_STATS_H
#define GPUWATCH_TRACE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "api_stats.h"
#include "device_stats.h"
#include "kernel_stats.h"
#include "trace_reader.h"
#include "transfer_stats.h"

struct gw_trace_stat {
    const char *path;
    uint64_t bytes;
    int readable;
    char error[512];              /* why it could not be opened */
    struct gw_file_header hdr;
    struct gw_reader_stats rs;
    struct gw_devices devices;
    uint64_t nvtx_ranges;         /* RANGE_PUSH + RANGE_START */
    uint64_t nvtx_marks;
};

struct gw_stats {
    struct gw_api_table apis;
    struct gw_kernel_table kernels;     /* host launches */
    struct gw_kernel_table gpu_kernels; /* GPU kernel records */
    struct gw_transfer_table memcpys, memsets;
    struct gw_trace_stat *traces;
    size_t ntraces;
    int out_of_memory;            /* some event could not be counted */
};

/* One pass over one trace's events: the trace and its shape ids' kernels. */
struct gw_stats_pass {
    struct gw_trace_stat *trace;
    const struct gw_reader *reader;   /* names kernels; NULL: "shape_<id>" */
    struct gw_shape_cache launches, gpu;
};

/* Zeroes st and makes room for ntraces traces. Returns 0, -1 when memory ran out. */
int gw_stats_init(struct gw_stats *st, size_t ntraces);
/* Opens and reads t->path into st and t (damage goes to on_damage, which may be NULL).
 * Returns 0, or -1 when the file could not be opened (t->error says why) or memory ran
 * out (st->out_of_memory). */
int gw_stats_read(struct gw_stats *st, struct gw_trace_stat *t, gw_damage_fn on_damage,
                  void *user);

/* The same, event by event, for events from elsewhere (tests, other readers). */
void gw_stats_pass_begin(struct gw_stats_pass *p, struct gw_trace_stat *t,
                         const struct gw_reader *r);
/* Counts one event; 0, or -1 when memory ran out (st->out_of_memory is then set). */
int gw_stats_add(struct gw_stats *st, struct gw_stats_pass *p, const struct gw_event *ev);
/* Settles the trace's devices (gw_devices_settle) and frees the pass. */
void gw_stats_pass_end(struct gw_stats_pass *p);

/* Entry points by calls, host kernels by launches, GPU kernels by time, copies and sets by
 * kinds. Once every trace is read. */
void gw_stats_sort(struct gw_stats *st);
void gw_stats_free(struct gw_stats *st);

#endif
