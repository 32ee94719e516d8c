/*
 * gpuwatch dump's text for what a trace defines (strings, shapes, streams, devices,
 * clocks, threads, native and Python stacks) and for the sites that name calls' stacks;
 * and the key=value pieces its event lines (event_text.c) share. Format: tools/cmd_dump.c.
 */
#ifndef GPUWATCH_DEF_TEXT_H
#define GPUWATCH_DEF_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "trace_reader.h"

/* " KEY=value" with the string the trace defines as id, " KEY_id=ID" when it has none. */
void gw_text_string_value(FILE *out, const struct gw_reader *r, const char *key,
                          uint64_t id);
/* " grid=X,Y,Z block=X,Y,Z smem=N". */
void gw_text_shape(FILE *out, const struct gw_shape *s);
/* A definition's line, without its newline: "- TID def KIND - - details". */
void gw_def_text(FILE *out, const struct gw_reader *r, const struct gw_event *ev);
/* A PYSITE or STACKSITE line, without its newline: the calls it names and their stack's
 * frames, innermost first. */
void gw_site_text(FILE *out, const struct gw_reader *r, const struct gw_event *ev);

#endif
