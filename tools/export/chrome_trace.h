/* gpuwatch export: a run as Chrome trace-event JSON, or Kineto's flavour of it (chrome_trace.c). */
#ifndef GPUWATCH_CHROME_TRACE_H
#define GPUWATCH_CHROME_TRACE_H

#include <stddef.h>
#include <stdio.h>

struct an_run;

/* Writes every readable trace of the run (one process each) as one JSON document; the
 * run's findings (when it was analyzed: run->findings) on a track of their own, after the
 * processes' events with the ProfilerStep#N spans. Streams each file (twice when it has
 * steps): memory does not grow with the trace. 0; -1 when a file could not be
 * read (named on stderr; the others are written); -2 when the output could not be written. */
int gw_export_chrome(FILE *out, const struct an_run *run);

/* The same in the layout of PyTorch's profiler (Kineto), which HTA and torch_tb_profiler
 * read: one file holds one process (HTA wants one file per rank; run must hold one
 * trace, else -3); GPU work under the device's pid, by stream; a call and its GPU work
 * share args.correlation (gpuwatch's call id); ProfilerStep#N spans from the steps the
 * analysis found; distributedInfo and deviceProperties at the top. */
int gw_export_kineto(FILE *out, const struct an_run *run);
/* gw_export_kineto of the run's trace number index alone (one file per rank). */
int gw_export_kineto_trace(FILE *out, const struct an_run *run, size_t index);

/* The same in three steps, so that the files are read for the timeline while the analysis
 * runs on another thread (gpuwatch export): begin needs the run's headers alone
 * (an_run_open), and traces of one host (several hosts' clocks are aligned by the
 * analysis: analyze first then); bodies writes what needs no analysis; finish, once the
 * analysis is done, what needs it (ProfilerStep#N spans, reading each file again for the
 * step marker it chose, and the findings), ends the document and frees e. only: the one
 * trace to write (SIZE_MAX: all). begin returns NULL with *rc (as gw_export_chrome's)
 * when it cannot start; finish returns what gw_export_chrome would. */
struct gw_export;
struct gw_export *gw_export_begin(FILE *out, const struct an_run *run, int kineto, size_t only,
                                  int *rc);
void gw_export_bodies(struct gw_export *e);
int gw_export_finish(struct gw_export *e);

#endif
