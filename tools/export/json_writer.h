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
#include <string.h>

#define GW_JSON_MAX_DEPTH 32

#define GW_JSON_BUFFER 65536

/* What a nesting level holds so far: whether the next value needs a comma first. */
enum gw_json_level { GW_JSON_EMPTY = 0, GW_JSON_HAS_VALUE = 1, GW_JSON_AFTER_KEY = 2 };

struct gw_json {
    FILE *out;
    size_t len;              /* bytes waiting in buf */
    int failed;              /* a write to out failed */
    char buf[GW_JSON_BUFFER];
    unsigned depth;
    uint8_t state[GW_JSON_MAX_DEPTH];  /* enum gw_json_level per level */
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
static inline void gw_json_key_n(struct gw_json *j, const char *key, size_t n);
/* gw_json_key of a string literal, its length known when compiled. */
#define GW_JSON_KEY(j, literal) gw_json_key_n((j), "" literal, sizeof(literal) - 1)
void gw_json_str(struct gw_json *j, const char *s);
void gw_json_str_n(struct gw_json *j, const char *s, size_t n);
static inline void gw_json_u64(struct gw_json *j, uint64_t v);
void gw_json_i64(struct gw_json *j, int64_t v);
/* ns / 1000 exactly, with three decimals: nanoseconds as microseconds (trace events' unit) */
static inline void gw_json_ns_as_us(struct gw_json *j, int64_t ns);
void gw_json_double(struct gw_json *j, double v);
void gw_json_bool(struct gw_json *j, int v);
void gw_json_null(struct gw_json *j);
/* Ends a line between top-level array elements (readable, still one JSON document). */
void gw_json_newline(struct gw_json *j);

/* The per-value path, inline: an export writes some thirty values per event. */

static inline char *gw_json__room(struct gw_json *j, size_t n)
{
    if (__builtin_expect(j->len + n > GW_JSON_BUFFER, 0))
        gw_json_flush(j);
    return j->buf + j->len;
}

/* The comma that separates a value from the one before, unless a key came. */
static inline void gw_json__before_value(struct gw_json *j)
{
    if (__builtin_expect(j->depth == 0 || j->depth > GW_JSON_MAX_DEPTH, 0))
        return;
    uint8_t *s = &j->state[j->depth - 1];
    if (*s == GW_JSON_HAS_VALUE)
        *gw_json__room(j, 1) = ',', j->len++;
    *s = GW_JSON_HAS_VALUE;
}

static inline void gw_json_key_n(struct gw_json *j, const char *key, size_t n)
{
    gw_json__before_value(j);
    char *p = gw_json__room(j, n + 3);
    p[0] = '"';
    memcpy(p + 1, key, n);
    p[n + 1] = '"';
    p[n + 2] = ':';
    j->len += n + 3;
    if (j->depth && j->depth <= GW_JSON_MAX_DEPTH)
        j->state[j->depth - 1] = GW_JSON_AFTER_KEY;  /* no comma before its value */
}

/* Decimal digits of v, at most 20, ending at end; returns where they start. Two at a time:
 * half the divisions. */
static inline char *gw_json__digits(uint64_t v, char *end)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    char *p = end;
    while (v >= 100) {
        unsigned k = (unsigned)(v % 100) * 2;
        v /= 100;
        *--p = pairs[k + 1];
        *--p = pairs[k];
    }
    if (v >= 10) {
        unsigned k = (unsigned)v * 2;
        *--p = pairs[k + 1];
        *--p = pairs[k];
    } else {
        *--p = (char)('0' + v);
    }
    return p;
}

static inline void gw_json__put_digits(struct gw_json *j, const char *p, const char *end)
{
    size_t n = (size_t)(end - p);
    memcpy(gw_json__room(j, n), p, n);
    j->len += n;
}

/* A string the caller knows needs no escaping (printable ASCII without " or \\: the names
 * of gpuwatch's own tables), copied as it is. */
static inline void gw_json_str_plain(struct gw_json *j, const char *s, size_t n)
{
    gw_json__before_value(j);
    char *p = gw_json__room(j, n + 2);
    p[0] = '"';
    memcpy(p + 1, s, n);
    p[n + 1] = '"';
    j->len += n + 2;
}

static inline void gw_json_u64(struct gw_json *j, uint64_t v)
{
    gw_json__before_value(j);
    char tmp[24], *end = tmp + sizeof tmp;
    gw_json__put_digits(j, gw_json__digits(v, end), end);
}

static inline void gw_json_ns_as_us(struct gw_json *j, int64_t ns)
{
    gw_json__before_value(j);
    uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    char tmp[32], *end = tmp + sizeof tmp;
    uint64_t frac = a % 1000;
    char *p = end;
    *--p = (char)('0' + frac % 10);
    *--p = (char)('0' + frac / 10 % 10);
    *--p = (char)('0' + frac / 100);
    *--p = '.';
    p = gw_json__digits(a / 1000, p);
    if (ns < 0)
        *--p = '-';
    gw_json__put_digits(j, p, end);
}

#endif
