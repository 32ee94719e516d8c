/*
 * One event of a trace as gpuwatch dump's line: "time_ns tid kind name dur_ns result
 * details..." (the format is described in tools/cmd_dump.c). Names, kernels, streams and
 * stacks are looked up in the reader's tables, so read the definitions first
 * (gw_reader_load_defs) for lines that name what the trace defines later.
 */
#ifndef GPUWATCH_EVENT_TEXT_H
#define GPUWATCH_EVENT_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "trace_reader.h"

/* Writes ev's line, newline included; times are ts_ns - origin. */
void gw_event_text(FILE *out, const struct gw_reader *r, uint64_t origin,
                   const struct gw_event *ev);

#endif
