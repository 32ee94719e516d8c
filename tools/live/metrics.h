/*
 * The run read so far as Prometheus metrics (`gpuwatch serve`, README "Watch a run"):
 * every figure is the analysis's own (an_run from tools/analyze/, what `gpuwatch analyze`
 * prints for the same bytes), written in the Prometheus text format 0.0.4 or OpenMetrics
 * 1.0.0 text. Labels host, pid, rank on each series, and those the metric names.
 */
#ifndef GPUWATCH_LIVE_METRICS_H
#define GPUWATCH_LIVE_METRICS_H

#include <stdio.h>

#include "analyze.h"
#include "counter_floor.h"

#define GW_CONTENT_TYPE_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define GW_CONTENT_TYPE_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* A trace that could not be read whose file is this young and shorter than a header is
 * one a process is creating: not an error yet. */
#define GW_METRICS_YOUNG_S 5

/* Writes every metric of run (NULL: no trace yet) to out. openmetrics: OpenMetrics text
 * (ends with "# EOF"), else the Prometheus text format. Counters pass through floor
 * (counter_floor.h). */
void gw_metrics_write(FILE *out, const struct an_run *run, int openmetrics,
                      struct gw_counter_floor *floor);

#endif
