/* The streaming JSON writer (json_writer.h). */
#include "json_writer.h"

#include <math.h>
#include <string.h>

#include "text_out.h"

void gw_json_init(struct gw_json *j, FILE *out)
{
    j->out = out;
    j->len = 0;
    j->failed = 0;
    j->depth = 0;
    j->overflow = 0;
    memset(j->state, 0, sizeof j->state);
}

int gw_json_flush(struct gw_json *j)
{
    if (!j->out) {  /* text kept for gw_json_text outgrew the buffer, all there is */
        j->failed = 1;
        j->len = 0;
        return -1;
    }
    if (j->len && fwrite(j->buf, 1, j->len, j->out) != j->len)
        j->failed = 1;
    j->len = 0;
    return j->failed ? -1 : 0;
}

const char *gw_json_text(const struct gw_json *j, size_t *n)
{
    *n = j->failed ? 0 : j->len;
    return j->buf;
}

static inline void put(struct gw_json *j, const char *s, size_t n)
{
    while (n) {
        size_t chunk = n < GW_JSON_BUFFER ? n : GW_JSON_BUFFER;
        memcpy(gw_json__room(j, chunk), s, chunk);
        j->len += chunk;
        s += chunk;
        n -= chunk;
    }
}

static inline void put_char(struct gw_json *j, char c) { gw_json__put_char(j, c); }

void gw_json_key(struct gw_json *j, const char *key) { gw_json_key_n(j, key, strlen(key)); }

void gw_json_members(struct gw_json *j, const char *text, size_t n)
{
    if (!n)
        return;
    gw_json__before_value(j);
    put(j, text, n);
}

/* 1 for the bytes that go into a JSON string as they are: printable ASCII but " (0x22)
 * and \ (0x5C). (Range designators: a GNU C extension gcc and clang both take.) */
static const uint8_t plain_byte[256] = {
    [0x20 ... 0x21] = 1, [0x23 ... 0x5B] = 1, [0x5D ... 0x7F] = 1,
};

static void put_escaped(struct gw_json *j, const unsigned char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i = 0;
    while (i < n) {
        size_t plain = i;  /* a run that needs no escaping goes in one copy */
        while (plain < n && plain_byte[s[plain]])
            plain++;
        put(j, (const char *)s + i, plain - i);
        i = plain;
        if (i == n)
            break;
        unsigned char c = s[i];
        size_t len = gw_utf8_len(s + i, n - i);
        if (len > 1) {
            put(j, (const char *)s + i, len);
            i += len;
            continue;
        }
        char esc[6] = {'\\', 0};
        size_t k = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\t': esc[1] = 't'; break;
        case '\r': esc[1] = 'r'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            k = 6;
        }
        put(j, esc, k);
        i++;
    }
}

void gw_json_str_n(struct gw_json *j, const char *s, size_t n)
{
    gw_json__before_value(j);
    put_char(j, '"');
    if (s)
        put_escaped(j, (const unsigned char *)s, n);
    put_char(j, '"');
}

void gw_json_str(struct gw_json *j, const char *s) { gw_json_str_n(j, s, s ? strlen(s) : 0); }

void gw_json_i64(struct gw_json *j, int64_t v)
{
    gw_json__before_value(j);
    if (v < 0)
        put_char(j, '-');
    gw_json__put_u64(j, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

void gw_json_double(struct gw_json *j, double v)
{
    gw_json__before_value(j);
    if (!isfinite(v)) {
        put(j, "null", 4);
        return;
    }
    char tmp[40];
    int n = snprintf(tmp, sizeof tmp, "%.17g", v);
    put(j, tmp, n > 0 ? (size_t)n : 0);
}


void gw_json_null(struct gw_json *j)
{
    gw_json__before_value(j);
    put(j, "null", 4);
}

void gw_json_newline(struct gw_json *j) { put_char(j, '\n'); }
