#include "text_out.h"

#include <stdint.h>

static void put_byte_escaped(FILE *out, unsigned char c)
{
    switch (c) {
    case '\n': fputs("\\n", out); return;
    case '\t': fputs("\\t", out); return;
    case '\r': fputs("\\r", out); return;
    case '\\': fputs("\\\\", out); return;
    }
    if (c < 0x20 || c >= 0x7F)
        fprintf(out, "\\x%02X", c);
    else
        fputc(c, out);
}

void gw_put_escaped(FILE *out, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        put_byte_escaped(out, (unsigned char)s[i]);
}

void gw_put_value(FILE *out, const char *s, size_t len)
{
    int bare = len > 0;
    for (size_t i = 0; i < len && bare; i++) {
        unsigned char c = (unsigned char)s[i];
        bare = c > 0x20 && c < 0x7F && c != '"' && c != '=' && c != '\\';
    }
    if (bare) {
        fwrite(s, 1, len, out);
        return;
    }
    fputc('"', out);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"')
            fputs("\\\"", out);
        else
            put_byte_escaped(out, (unsigned char)s[i]);
    }
    fputc('"', out);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one. */
size_t gw_utf8_len(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

void gw_put_json_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        size_t n = gw_utf8_len(u + i, len - i);
        if (n == 0) {
            fprintf(out, "\\u%04X", c);
            i++;
            continue;
        }
        if (n > 1) {
            fwrite(u + i, 1, n, out);
            i += n;
            continue;
        }
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        default:
            if (c < 0x20 || c == 0x7F)
                fprintf(out, "\\u%04X", c);
            else
                fputc(c, out);
        }
        i++;
    }
    fputc('"', out);
}
