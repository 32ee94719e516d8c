/* JSON in (yajl's tree) and out (the project's writer, into memory) for the MCP server. */
#include "mcp_json.h"

#include <stdlib.h>
#include <string.h>

int mcp_text_open(struct mcp_text *t)
{
    t->text = NULL;
    t->len = 0;
    t->f = open_memstream(&t->text, &t->len);
    return t->f ? 0 : -1;
}

char *mcp_text_close(struct mcp_text *t, int failed)
{
    if (!t->f)
        return NULL;
    if (ferror(t->f))
        failed = 1;
    if (fclose(t->f) != 0)
        failed = 1;
    t->f = NULL;
    if (failed) {
        free(t->text);
        t->text = NULL;
        t->len = 0;
    }
    return t->text;
}

int mcp_buf_open(struct mcp_buf *b)
{
    memset(b, 0, sizeof *b);
    b->j = malloc(sizeof *b->j);
    b->f = b->j ? open_memstream(&b->text, &b->len) : NULL;
    if (!b->f) {
        free(b->j);
        b->j = NULL;
        return -1;
    }
    gw_json_init(b->j, b->f);
    return 0;
}

int mcp_buf_close(struct mcp_buf *b)
{
    if (!b->j)
        return -1;
    int failed = gw_json_flush(b->j) != 0 || b->j->overflow;
    free(b->j);
    b->j = NULL;
    if (ferror(b->f))
        failed = 1;
    if (fclose(b->f) != 0)
        failed = 1;
    b->f = NULL;
    if (failed) {
        free(b->text);
        b->text = NULL;
        b->len = 0;
        return -1;
    }
    return 0;
}

void mcp_buf_free(struct mcp_buf *b)
{
    if (b->j) {
        free(b->j);
        b->j = NULL;
    }
    if (b->f) {
        fclose(b->f);
        b->f = NULL;
    }
    free(b->text);
    b->text = NULL;
    b->len = 0;
}

yajl_val mcp_get(yajl_val v, const char *key)
{
    if (!v || !YAJL_IS_OBJECT(v))
        return NULL;
    for (size_t i = 0; i < v->u.object.len; i++)
        if (!strcmp(v->u.object.keys[i], key))
            return v->u.object.values[i];
    return NULL;
}

yajl_val mcp_get_path(yajl_val v, const char *const *keys)
{
    for (; v && *keys; keys++)
        v = mcp_get(v, *keys);
    return v;
}

const char *mcp_get_str(yajl_val v, const char *key)
{
    yajl_val s = mcp_get(v, key);
    return s && YAJL_IS_STRING(s) ? s->u.string : NULL;
}

int mcp_get_num(yajl_val v, const char *key, double *out)
{
    yajl_val n = mcp_get(v, key);
    if (!n || !YAJL_IS_NUMBER(n))
        return 0;
    *out = YAJL_IS_INTEGER(n) ? (double)n->u.number.i : n->u.number.d;
    return 1;
}

const char *mcp_type_name(yajl_val v)
{
    if (!v || YAJL_IS_NULL(v))
        return "null";
    if (YAJL_IS_STRING(v))
        return "string";
    if (YAJL_IS_INTEGER(v))
        return "integer";
    if (YAJL_IS_NUMBER(v))
        return "number";
    if (YAJL_IS_OBJECT(v))
        return "object";
    if (YAJL_IS_ARRAY(v))
        return "array";
    return "boolean";
}

/* A parsed object's key: the writer takes plain ASCII keys (the report's own are), any
 * other byte is written as '_'. */
static void put_key(struct gw_json *j, const char *key)
{
    char plain[128];
    size_t n = 0;
    for (; key[n] && n < sizeof plain - 1; n++) {
        unsigned char c = (unsigned char)key[n];
        plain[n] = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? (char)c : '_';
    }
    plain[n] = 0;
    gw_json_key(j, plain);
}

void mcp_put_val(struct gw_json *j, yajl_val v)
{
    if (!v || YAJL_IS_NULL(v)) {
        gw_json_null(j);
    } else if (YAJL_IS_STRING(v)) {
        gw_json_str(j, v->u.string);
    } else if (YAJL_IS_NUMBER(v)) {
        /* the number's own text (yajl keeps it): the report's figures exactly as written */
        if (v->u.number.r && *v->u.number.r)
            mcp_put_raw(j, v->u.number.r, strlen(v->u.number.r));
        else
            gw_json_double(j, v->u.number.d);
    } else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
        gw_json_bool(j, YAJL_IS_TRUE(v));
    } else if (YAJL_IS_OBJECT(v)) {
        gw_json_object(j);
        for (size_t i = 0; i < v->u.object.len; i++) {
            put_key(j, v->u.object.keys[i]);
            mcp_put_val(j, v->u.object.values[i]);
        }
        gw_json_object_end(j);
    } else if (YAJL_IS_ARRAY(v)) {
        gw_json_array(j);
        for (size_t i = 0; i < v->u.array.len; i++)
            mcp_put_val(j, v->u.array.values[i]);
        gw_json_array_end(j);
    }
}

void mcp_put_member(struct gw_json *j, yajl_val obj, const char *key)
{
    yajl_val v = mcp_get(obj, key);
    if (!v)
        return;
    gw_json_key(j, key);
    mcp_put_val(j, v);
}

void mcp_put_raw(struct gw_json *j, const char *text, size_t n)
{
    gw_json_members(j, text, n);  /* (after a key, or in an array: one value as it is) */
}
