/* Escaping for the CLI's text and JSON output. */
#ifndef GPUWATCH_TEXT_OUT_H
#define GPUWATCH_TEXT_OUT_H

#include <stddef.h>
#include <stdio.h>

/* Writes bytes with backslash, control and non-ASCII bytes as \xNN (for comment lines). */
void gw_put_escaped(FILE *out, const char *s, size_t len);
/* Writes a key=value value: bare when it is non-empty and has no space, quote, '=' or
 * control byte, else double-quoted with C escapes (logfmt style). */
void gw_put_value(FILE *out, const char *s, size_t len);
/* Writes a JSON string literal (with quotes). Valid UTF-8 passes through; other bytes
 * become \u00NN. */
void gw_put_json_string(FILE *out, const char *s, size_t len);
/* The length of the valid UTF-8 sequence at s (1 for ASCII), 0 when it is not one
 * (overlong, surrogate, cut by left). */
size_t gw_utf8_len(const unsigned char *s, size_t left);

#endif
