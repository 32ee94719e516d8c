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

/* (struct gw_json is large: keep it static or on the heap.) With out NULL, the writer keeps
 * what it writes in its buffer for gw_json_text, up to GW_JSON_BUFFER bytes (more fails). */
void gw_json_init(struct gw_json *j, FILE *out);
/* What a writer with no FILE has written, n bytes. */
const char *gw_json_text(const struct gw_json *j, size_t *n);
/* Members of the open object, as a writer rendered them ("key":value,… without braces):
 * text made once (gw_json_text) and copied for each of many objects. */
void gw_json_members(struct gw_json *j, const char *text, size_t n);
/* Writes what waits to out; 0, or -1 when a write failed (then or before). (Called on a
 * writer with no FILE only when its text outgrew the buffer: that fails it.) */
int gw_json_flush(struct gw_json *j);
static inline void gw_json_object(struct gw_json *j);
static inline void gw_json_object_end(struct gw_json *j);
static inline void gw_json_array(struct gw_json *j);
static inline void gw_json_array_end(struct gw_json *j);
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
static inline void gw_json_bool(struct gw_json *j, int v);
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

/* How many decimal digits v has (1 for 0): its bit length gives the count to within one. */
static inline unsigned gw_json__digit_count(uint64_t v)
{
    static const uint64_t pow10[20] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
        100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
        10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
        100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};
    unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
    unsigned n = (bits * 1233) >> 12;  /* floor(bits * log10(2)) */
    return n + (v >= pow10[n]) + (v == 0);
}

/* The digits of v < 10^8, two at a time, ending at end; returns where they start. */
static inline char *gw_json__digits32(uint32_t v, char *end)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    char *p = end;
    while (v >= 100) {
        unsigned k = (v % 100) * 2;
        v /= 100;
        *--p = pairs[k + 1];
        *--p = pairs[k];
    }
    if (v >= 10) {
        unsigned k = v * 2;
        *--p = pairs[k + 1];
        *--p = pairs[k];
    } else {
        *--p = (char)('0' + v);
    }
    return p;
}

/* The decimal digits of v written so that they end at end; returns where they start. In
 * chunks of eight, so that all but two divisions are 32-bit ones. */
static inline char *gw_json__digits(uint64_t v, char *end)
{
    char *p = end;
    while (v >= 100000000u) {
        uint32_t low = (uint32_t)(v % 100000000u);
        v /= 100000000u;
        char *q = gw_json__digits32(low, p);
        while (q > p - 8)  /* (the chunk's leading zeros) */
            *--q = '0';
        p -= 8;
    }
    return gw_json__digits32((uint32_t)v, p);
}

/* v's digits straight into the buffer (a copy through a scratch array cost as much as the
 * digits themselves). */
static inline void gw_json__put_u64(struct gw_json *j, uint64_t v)
{
    unsigned n = gw_json__digit_count(v);
    char *p = gw_json__room(j, n);
    gw_json__digits(v, p + n);
    j->len += n;
}

static inline void gw_json__put_char(struct gw_json *j, char c)
{
    *gw_json__room(j, 1) = c;
    j->len++;
}

static inline void gw_json__open(struct gw_json *j, char c)
{
    gw_json__before_value(j);
    gw_json__put_char(j, c);
    if (__builtin_expect(j->depth >= GW_JSON_MAX_DEPTH, 0))
        j->overflow = 1;
    else
        j->state[j->depth] = GW_JSON_EMPTY;
    j->depth++;
}

static inline void gw_json__close(struct gw_json *j, char c)
{
    if (j->depth)
        j->depth--;
    gw_json__put_char(j, c);
}

static inline void gw_json_object(struct gw_json *j) { gw_json__open(j, '{'); }
static inline void gw_json_object_end(struct gw_json *j) { gw_json__close(j, '}'); }
static inline void gw_json_array(struct gw_json *j) { gw_json__open(j, '['); }
static inline void gw_json_array_end(struct gw_json *j) { gw_json__close(j, ']'); }

static inline void gw_json_bool(struct gw_json *j, int v)
{
    gw_json__before_value(j);
    char *p = gw_json__room(j, 5);
    memcpy(p, v ? "true" : "false", v ? 4 : 5);
    j->len += v ? 4 : 5;
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

/* An unsigned number rendered once, for one that is written more than once (an event's
 * id as its flow's and as its argument). */
struct gw_json_number {
    char text[24];
    unsigned len;
};

static inline void gw_json_number_of(struct gw_json_number *num, uint64_t v)
{
    num->len = gw_json__digit_count(v);
    gw_json__digits(v, num->text + num->len);
}

static inline void gw_json_number(struct gw_json *j, const struct gw_json_number *num)
{
    gw_json__before_value(j);
    /* (the whole array: a copy of known size is two moves) */
    memcpy(gw_json__room(j, sizeof num->text), num->text, sizeof num->text);
    j->len += num->len;
}

static inline void gw_json_u64(struct gw_json *j, uint64_t v)
{
    gw_json__before_value(j);
    gw_json__put_u64(j, v);
}

static inline void gw_json_ns_as_us(struct gw_json *j, int64_t ns)
{
    gw_json__before_value(j);
    uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t whole = a / 1000;
    unsigned frac = (unsigned)(a % 1000), n = gw_json__digit_count(whole);
    char *p = gw_json__room(j, n + 5);
    if (ns < 0)
        *p++ = '-', j->len++;
    gw_json__digits(whole, p + n);
    p[n] = '.';
    p[n + 1] = (char)('0' + frac / 100);
    p[n + 2] = (char)('0' + frac / 10 % 10);
    p[n + 3] = (char)('0' + frac % 10);
    j->len += n + 4;
}

#endif
