/*
 * A small streaming JSON writer: values go to a FILE through a buffer of its own, commas and
 * nesting are kept here, so callers never build JSON text by hand. Strings are escaped as
 * gw_put_json_string does (invalid UTF-8 as \u00XX); doubles that are not finite are
 * written as null. Numbers are formatted without printf: an export writes a hundred bytes
 * for each of millions of events.
 */
#ifndef GPUWATCH_JSON_WRITER_H
#define GPUWATCH_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GW_JSON_MAX_DEPTH 32

#define GW_JSON_BUFFER 65536

struct gw_json {
    FILE *out;
    size_t len;              /* bytes waiting in buf */
    int failed;              /* a write to out failed */
    char buf[GW_JSON_BUFFER];
    unsigned depth;
    /* per level: 1 once it holds a value (the next needs a comma); 2 right after a key */
    uint8_t state[GW_JSON_MAX_DEPTH];
    int overflow;            /* nesting went past GW_JSON_MAX_DEPTH: the output is invalid */
};

/* (struct gw_json is large: keep it static or on the heap.) */
void gw_json_init(struct gw_json *j, FILE *out);
/* Writes what waits to out; 0, or -1 when a write failed (then or before). */
int gw_json_flush(struct gw_json *j);
void gw_json_object(struct gw_json *j);
void gw_json_object_end(struct gw_json *j);
void gw_json_array(struct gw_json *j);
void gw_json_array_end(struct gw_json *j);
/* The key of the next value, in an object: plain ASCII that needs no escaping. */
void gw_json_key(struct gw_json *j, const char *key);
void gw_json_key_n(struct gw_json *j, const char *key, size_t n);
/* gw_json_key of a string literal, its length known when compiled. */
#define GW_JSON_KEY(j, literal) gw_json_key_n((j), "" literal, sizeof(literal) - 1)
void gw_json_str(struct gw_json *j, const char *s);
void gw_json_str_n(struct gw_json *j, const char *s, size_t n);
void gw_json_u64(struct gw_json *j, uint64_t v);
void gw_json_i64(struct gw_json *j, int64_t v);
/* ns / 1000 exactly, with three decimals: nanoseconds as microseconds (trace events' unit) */
void gw_json_ns_as_us(struct gw_json *j, int64_t ns);
void gw_json_double(struct gw_json *j, double v);
void gw_json_bool(struct gw_json *j, int v);
void gw_json_null(struct gw_json *j);
/* Ends a line between top-level array elements (readable, still one JSON document). */
void gw_json_newline(struct gw_json *j);

#endif
