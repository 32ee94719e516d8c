/*
 * A small streaming JSON writer: values go straight to a FILE, commas and nesting are kept
 * here, so callers never build JSON text by hand. Strings are escaped (and invalid UTF-8
 * made valid) by gw_put_json_string; doubles that are not finite are written as null.
 */
#ifndef GPUWATCH_JSON_WRITER_H
#define GPUWATCH_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GW_JSON_MAX_DEPTH 32

struct gw_json {
    FILE *out;
    unsigned depth;
    /* per level: 1 once it holds a value (the next needs a comma); 2 right after a key */
    uint8_t state[GW_JSON_MAX_DEPTH];
    int overflow;            /* nesting went past GW_JSON_MAX_DEPTH: the output is invalid */
};

void gw_json_init(struct gw_json *j, FILE *out);
void gw_json_object(struct gw_json *j);
void gw_json_object_end(struct gw_json *j);
void gw_json_array(struct gw_json *j);
void gw_json_array_end(struct gw_json *j);
/* The key of the next value, in an object. */
void gw_json_key(struct gw_json *j, const char *key);
void gw_json_str(struct gw_json *j, const char *s);
void gw_json_str_n(struct gw_json *j, const char *s, size_t n);
void gw_json_u64(struct gw_json *j, uint64_t v);
void gw_json_i64(struct gw_json *j, int64_t v);
/* %.*f with decimals digits after the point: timestamps in microseconds */
void gw_json_fixed(struct gw_json *j, double v, int decimals);
void gw_json_double(struct gw_json *j, double v);
void gw_json_bool(struct gw_json *j, int v);
void gw_json_null(struct gw_json *j);
/* Ends a line between top-level array elements (readable, still one JSON document). */
void gw_json_newline(struct gw_json *j);

#endif
