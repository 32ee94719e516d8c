/*
 * The latest metrics of a directory of traces, for `gpuwatch serve`: a thread analyzes the
 * traces again whenever they changed (their fingerprint, live_run.h), at most once a
 * period, and keeps the metrics in both formats; a scrape copies the latest. A scrape thus
 * never waits for an analysis (a long run's traces take seconds to read) but the first.
 */
#ifndef GPUWATCH_LIVE_METRICS_CACHE_H
#define GPUWATCH_LIVE_METRICS_CACHE_H

#include <stddef.h>

#include "analyze.h"
#include "counter_floor.h"

struct gw_metrics_cache;

/* Starts the thread; NULL when it could not be. dir and opt must outlive the cache. */
struct gw_metrics_cache *gw_metrics_cache_start(const char *dir, const struct an_options *opt,
                                                unsigned period_ms);
/* A copy (malloc'd) of the latest metrics in that format, waiting at most wait_ms for the
 * first analysis; NULL when there is none yet (or no memory). */
char *gw_metrics_cache_get(struct gw_metrics_cache *c, int openmetrics, size_t *len,
                           int wait_ms);
void gw_metrics_cache_stop(struct gw_metrics_cache *c);

/* The metrics of the run in dir as it is now, in one format (malloc'd); counters through
 * floor. What the thread does each time, and `serve --print` once. */
char *gw_metrics_render(const char *dir, const struct an_options *opt, int openmetrics,
                        struct gw_counter_floor *floor, size_t *len);

#endif
