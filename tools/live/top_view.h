/*
 * What `gpuwatch top` shows of each process, one block of text per refresh: GPU busy, idle
 * by cause over the last 10 s of the trace and since start, device memory, H2D copies from
 * pageable and pinned memory, the top finding so far. The figures are the analysis's
 * (an_run); the last 10 s are differences of the totals this view saw at earlier refreshes.
 */
#ifndef GPUWATCH_LIVE_TOP_VIEW_H
#define GPUWATCH_LIVE_TOP_VIEW_H

#include <stdint.h>
#include <stdio.h>

#include "analyze.h"

#define GW_TOP_WINDOW_NS 10000000000ull  /* "the last 10 s": of the trace's own time */
#define GW_TOP_KEEP 64                   /* refreshes kept per process */

struct gw_top_snapshot {
    uint64_t wall_ns, busy_ns;
    double idle_ns[AN_CAUSE_COUNT];
};

struct gw_top_process {
    char host[64];
    uint32_t pid;
    int32_t rank;
    struct gw_top_snapshot seen[GW_TOP_KEEP];  /* oldest first */
    size_t nseen;
};

struct gw_top_history {
    struct gw_top_process *procs;
    size_t count, cap;
};

/* Writes one block for run (NULL: no trace yet) read from dir; *running: how many of its
 * processes still run. Remembers the figures in history for the next block's last 10 s. */
void gw_top_write(FILE *out, const char *dir, const struct an_run *run,
                  struct gw_top_history *history, size_t *running);
void gw_top_history_free(struct gw_top_history *history);

#endif
