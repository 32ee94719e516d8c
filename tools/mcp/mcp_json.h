/*
 * JSON for the MCP server: what comes in is parsed with yajl's tree API (yajl_tree_parse),
 * what goes out is written with the project's writer (export/json_writer.h) into memory.
 * A value of a parsed tree (the analyzer's JSON report, a request's id) is copied out
 * through the writer as it is.
 */
#ifndef GPUWATCH_MCP_JSON_H
#define GPUWATCH_MCP_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <yajl/yajl_tree.h>

#include "export/json_writer.h"

/* A writer whose text is kept in memory (open_memstream): open, write through j, close. */
struct mcp_buf {
    struct gw_json *j;       /* on the heap (it is large) */
    FILE *f;
    char *text;              /* NUL-terminated after close */
    size_t len;
};
int mcp_buf_open(struct mcp_buf *b);
/* Flushes and ends the text: 0, or -1 when memory ran out (the text is then freed). */
int mcp_buf_close(struct mcp_buf *b);
void mcp_buf_free(struct mcp_buf *b);

/* Text printed to a FILE (an_report_json, gw_report_html) kept in memory: what
 * mcp_text_close returns, NUL-terminated, is the caller's to free (NULL when memory ran
 * out or the writer failed: failed nonzero). */
struct mcp_text {
    FILE *f;
    char *text;
    size_t len;
};
int mcp_text_open(struct mcp_text *t);
char *mcp_text_close(struct mcp_text *t, int failed);

/* The member key of an object (NULL when v is no object or has no such member). */
yajl_val mcp_get(yajl_val v, const char *key);
/* The same along a path of keys, NULL-terminated. */
yajl_val mcp_get_path(yajl_val v, const char *const *keys);
/* A string member's text, or NULL. */
const char *mcp_get_str(yajl_val v, const char *key);
/* A number member: 1 with *out, or 0 when absent or no number. */
int mcp_get_num(yajl_val v, const char *key, double *out);
/* The name of a value's type, for messages: "string", "number", "object"... */
const char *mcp_type_name(yajl_val v);

/* Writes a parsed value as it is (numbers in their own text). */
void mcp_put_val(struct gw_json *j, yajl_val v);
/* key: value of obj's member key, when obj has it (nothing otherwise). */
void mcp_put_member(struct gw_json *j, yajl_val obj, const char *key);
/* A value already rendered as JSON text (an object or array this writer or another made). */
void mcp_put_raw(struct gw_json *j, const char *text, size_t n);

#endif
