/* The streaming JSON writer (json_writer.h). */
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "text_out.h"

enum { EMPTY = 0, HAS_VALUE = 1, AFTER_KEY = 2 };

void gw_json_init(struct gw_json *j, FILE *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

/* Before any value: the comma that separates it from the one before, unless a key came. */
static void before_value(struct gw_json *j)
{
    if (j->depth == 0 || j->depth > GW_JSON_MAX_DEPTH)
        return;
    uint8_t *s = &j->state[j->depth - 1];
    if (*s == HAS_VALUE)
        fputc(',', j->out);
    *s = HAS_VALUE;
}

static void open_nested(struct gw_json *j, char c)
{
    before_value(j);
    fputc(c, j->out);
    if (j->depth >= GW_JSON_MAX_DEPTH)
        j->overflow = 1;
    else
        j->state[j->depth] = EMPTY;
    j->depth++;
}

static void close_nested(struct gw_json *j, char c)
{
    if (j->depth)
        j->depth--;
    fputc(c, j->out);
}

void gw_json_object(struct gw_json *j) { open_nested(j, '{'); }
void gw_json_object_end(struct gw_json *j) { close_nested(j, '}'); }
void gw_json_array(struct gw_json *j) { open_nested(j, '['); }
void gw_json_array_end(struct gw_json *j) { close_nested(j, ']'); }

void gw_json_key(struct gw_json *j, const char *key)
{
    before_value(j);
    gw_put_json_string(j->out, key, strlen(key));
    fputc(':', j->out);
    if (j->depth && j->depth <= GW_JSON_MAX_DEPTH)
        j->state[j->depth - 1] = AFTER_KEY;
}

void gw_json_str_n(struct gw_json *j, const char *s, size_t n)
{
    before_value(j);
    gw_put_json_string(j->out, s ? s : "", s ? n : 0);
}

void gw_json_str(struct gw_json *j, const char *s) { gw_json_str_n(j, s, s ? strlen(s) : 0); }

void gw_json_u64(struct gw_json *j, uint64_t v)
{
    before_value(j);
    fprintf(j->out, "%" PRIu64, v);
}

void gw_json_i64(struct gw_json *j, int64_t v)
{
    before_value(j);
    fprintf(j->out, "%" PRId64, v);
}

void gw_json_fixed(struct gw_json *j, double v, int decimals)
{
    before_value(j);
    if (isfinite(v))
        fprintf(j->out, "%.*f", decimals, v);
    else
        fputs("null", j->out);
}

void gw_json_double(struct gw_json *j, double v)
{
    before_value(j);
    if (isfinite(v))
        fprintf(j->out, "%.17g", v);
    else
        fputs("null", j->out);
}

void gw_json_bool(struct gw_json *j, int v)
{
    before_value(j);
    fputs(v ? "true" : "false", j->out);
}

void gw_json_null(struct gw_json *j)
{
    before_value(j);
    fputs("null", j->out);
}

void gw_json_newline(struct gw_json *j) { fputc('\n', j->out); }
