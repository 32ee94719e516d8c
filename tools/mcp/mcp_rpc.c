/*
 * JSON-RPC 2.0 over stdio, as MCP's stdio transport frames it: one message a line, no
 * embedded newline. A request gets exactly one answer line, a result or an error whose
 * message names the problem; a notification (no id) gets none. Nothing the client sends
 * ends the server but the end of its input.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_json.h"
#include "mcp_server.h"

int mcp_fail(struct mcp_error *e, int code, const char *fmt, ...)
{
    va_list ap;
    e->code = code;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *const protocols[] = {MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26",
                                        "2024-11-05"};

static int initialize(struct mcp_server *s, yajl_val params, struct gw_json *j,
                      struct mcp_error *e)
{
    const char *asked = mcp_get_str(params, "protocolVersion");
    if (mcp_get(params, "protocolVersion") && !asked)
        return mcp_fail(e, MCP_INVALID_PARAMS, "initialize: protocolVersion must be a string");
    /* the client's revision when this server speaks it, else the latest (the client
     * then decides whether it can go on) */
    const char *agreed = MCP_PROTOCOL_LATEST;
    for (size_t i = 0; asked && i < sizeof protocols / sizeof protocols[0]; i++)
        if (!strcmp(asked, protocols[i]))
            agreed = protocols[i];
    snprintf(s->protocol, sizeof s->protocol, "%s", agreed);
    const char *client = mcp_get_str(mcp_get(params, "clientInfo"), "name");
    fprintf(stderr, "gpuwatch mcp: %s asked for protocol %s, speaking %s\n",
            client ? client : "a client", asked ? asked : "(none)", agreed);
    gw_json_object(j);
    GW_JSON_KEY(j, "protocolVersion");
    gw_json_str(j, agreed);
    GW_JSON_KEY(j, "capabilities");
    gw_json_object(j);
    GW_JSON_KEY(j, "tools");
    gw_json_object(j);
    GW_JSON_KEY(j, "listChanged");
    gw_json_bool(j, 0);
    gw_json_object_end(j);
    GW_JSON_KEY(j, "resources");
    gw_json_object(j);
    GW_JSON_KEY(j, "subscribe");
    gw_json_bool(j, 0);
    GW_JSON_KEY(j, "listChanged");
    gw_json_bool(j, 0);
    gw_json_object_end(j);
    GW_JSON_KEY(j, "prompts");
    gw_json_object(j);
    GW_JSON_KEY(j, "listChanged");
    gw_json_bool(j, 0);
    gw_json_object_end(j);
    gw_json_object_end(j);
    GW_JSON_KEY(j, "serverInfo");
    gw_json_object(j);
    GW_JSON_KEY(j, "name");
    gw_json_str(j, "gpuwatch");
    GW_JSON_KEY(j, "title");
    gw_json_str(j, "gpuwatch: what wastes the GPU in a traced run");
    GW_JSON_KEY(j, "version");
    gw_json_str(j, s->version);
    gw_json_object_end(j);
    GW_JSON_KEY(j, "instructions");
    gw_json_str(j, "Traces of GPU programs recorded by gpuwatch, analyzed. Start with "
                   "list_runs, then get_findings for a run: each finding has its evidence, "
                   "the change to make, the time it saves and the program's lines. The "
                   "prompt 'investigate' walks from the findings to the lines to the change.");
    gw_json_object_end(j);
    return 0;
}

static int ping(struct mcp_server *s, yajl_val params, struct gw_json *j, struct mcp_error *e)
{
    gw_json_object(j);
    gw_json_object_end(j);
    return 0;
}

static const struct {
    const char *name;
    mcp_method_fn fn;
} methods[] = {
    {"initialize", initialize},
    {"ping", ping},
    {"tools/list", mcp_tools_list},
    {"tools/call", mcp_tools_call},
    {"resources/list", mcp_resources_list},
    {"resources/templates/list", mcp_resource_templates_list},
    {"resources/read", mcp_resources_read},
    {"prompts/list", mcp_prompts_list},
    {"prompts/get", mcp_prompts_get},
};

/* One message out, as one line. */
static int send_line(struct mcp_server *s, const char *text, size_t n)
{
    if (fwrite(text, 1, n, s->out) != n || fputc('\n', s->out) == EOF || fflush(s->out) != 0)
        return -1;
    return 0;
}

/* {"jsonrpc":"2.0","id":ID, then the caller's member, then the closing brace. */
static void envelope(struct gw_json *j, yajl_val id)
{
    gw_json_object(j);
    GW_JSON_KEY(j, "jsonrpc");
    gw_json_str(j, "2.0");
    GW_JSON_KEY(j, "id");
    mcp_put_val(j, id);  /* (NULL: null, when the request's id could not be read) */
}

static int send_error(struct mcp_server *s, yajl_val id, const struct mcp_error *e)
{
    struct mcp_buf b;
    if (mcp_buf_open(&b) != 0)
        return 0;  /* (out of memory: the client's request times out) */
    envelope(b.j, id);
    GW_JSON_KEY(b.j, "error");
    gw_json_object(b.j);
    GW_JSON_KEY(b.j, "code");
    gw_json_i64(b.j, e->code);
    GW_JSON_KEY(b.j, "message");
    gw_json_str(b.j, e->message);
    gw_json_object_end(b.j);
    gw_json_object_end(b.j);
    int rc = 0;
    if (mcp_buf_close(&b) == 0)
        rc = send_line(s, b.text, b.len);
    mcp_buf_free(&b);
    fprintf(stderr, "gpuwatch mcp: error %d: %s\n", e->code, e->message);
    return rc;
}

static int send_result(struct mcp_server *s, yajl_val id, const char *result, size_t n)
{
    struct mcp_buf b;
    if (mcp_buf_open(&b) != 0)
        return 0;
    envelope(b.j, id);
    GW_JSON_KEY(b.j, "result");
    mcp_put_raw(b.j, result, n);
    gw_json_object_end(b.j);
    int rc = 0;
    if (mcp_buf_close(&b) == 0)
        rc = send_line(s, b.text, b.len);
    mcp_buf_free(&b);
    return rc;
}

/* Runs a request's method; its answer out. */
static int answer(struct mcp_server *s, yajl_val id, const char *method, yajl_val params)
{
    struct mcp_error e = {0, ""};
    mcp_method_fn fn = NULL;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (!strcmp(method, methods[i].name))
            fn = methods[i].fn;
    if (!fn) {
        mcp_fail(&e, MCP_METHOD_NOT_FOUND, "unknown method '%s'", method);
        return send_error(s, id, &e);
    }
    if (params && !YAJL_IS_OBJECT(params)) {
        mcp_fail(&e, MCP_INVALID_PARAMS, "%s: params must be an object, got %s", method,
                 mcp_type_name(params));
        return send_error(s, id, &e);
    }
    struct mcp_buf b;
    if (mcp_buf_open(&b) != 0) {
        mcp_fail(&e, MCP_INTERNAL_ERROR, "%s: out of memory", method);
        return send_error(s, id, &e);
    }
    int rc = fn(s, params, b.j, &e);
    if (mcp_buf_close(&b) != 0 && rc == 0)
        rc = mcp_fail(&e, MCP_INTERNAL_ERROR, "%s: out of memory writing the answer", method);
    if (rc == 0 && b.len > MCP_MAX_ANSWER)
        rc = mcp_fail(&e, MCP_INTERNAL_ERROR,
                      "%s: the answer (%zu bytes) is over the %u MiB cap: ask for less (a "
                      "smaller top_n or limit, a narrower window)", method, b.len,
                      MCP_MAX_ANSWER >> 20);
    int sent = rc == 0 ? send_result(s, id, b.text, b.len) : send_error(s, id, &e);
    mcp_buf_free(&b);
    return sent;
}

/* One line: a request, a notification, or something else. */
static int handle_line(struct mcp_server *s, const char *line)
{
    char perr[512] = "";
    struct mcp_error e = {0, ""};
    yajl_val msg = yajl_tree_parse(line, perr, sizeof perr);
    if (!msg) {
        char *nl = strchr(perr, '\n');  /* (yajl's message: the error, then context lines) */
        if (nl)
            *nl = 0;
        mcp_fail(&e, MCP_PARSE_ERROR, "parse error: not JSON (%s)", *perr ? perr : "?");
        return send_error(s, NULL, &e);
    }
    int rc = 0;
    yajl_val id = mcp_get(msg, "id");
    yajl_val method = mcp_get(msg, "method");
    const char *version = mcp_get_str(msg, "jsonrpc");
    if (YAJL_IS_ARRAY(msg)) {
        mcp_fail(&e, MCP_INVALID_REQUEST, "invalid request: batches (JSON arrays) are not "
                                          "supported, send one message a line");
        rc = send_error(s, NULL, &e);
    } else if (!YAJL_IS_OBJECT(msg)) {
        mcp_fail(&e, MCP_INVALID_REQUEST, "invalid request: a message is a JSON object, got "
                                          "%s", mcp_type_name(msg));
        rc = send_error(s, NULL, &e);
    } else if (id && !YAJL_IS_STRING(id) && !YAJL_IS_INTEGER(id)) {
        mcp_fail(&e, MCP_INVALID_REQUEST, "invalid request: id must be a string or an "
                                          "integer, got %s", mcp_type_name(id));
        rc = send_error(s, NULL, &e);
    } else if (!version || strcmp(version, "2.0")) {
        mcp_fail(&e, MCP_INVALID_REQUEST, "invalid request: \"jsonrpc\" must be \"2.0\"");
        rc = id ? send_error(s, id, &e) : send_error(s, NULL, &e);
    } else if (!method && (mcp_get(msg, "result") || mcp_get(msg, "error"))) {
        ;  /* a response: this server sends no requests, nothing waits for one */
    } else if (!method || !YAJL_IS_STRING(method)) {
        mcp_fail(&e, MCP_INVALID_REQUEST, "invalid request: \"method\" must be a string");
        rc = send_error(s, id, &e);
    } else if (!id) {
        /* a notification (notifications/initialized, notifications/cancelled: every
         * request is answered before the next is read, nothing to cancel) */
        fprintf(stderr, "gpuwatch mcp: notification %s\n", method->u.string);
    } else {
        rc = answer(s, id, method->u.string, mcp_get(msg, "params"));
    }
    yajl_tree_free(msg);
    return rc;
}

/* The next line of in, without its newline, in *buf; a line over MCP_MAX_LINE is read to
 * its end and given as *too_long. 0, or -1 at the end of the input. */
static int read_line(FILE *in, char **buf, size_t *cap, size_t *len, int *too_long)
{
    *len = 0;
    *too_long = 0;
    int c, any = 0;
    while ((c = getc(in)) != EOF) {
        any = 1;
        if (c == '\n')
            break;
        if (*len >= MCP_MAX_LINE) {
            *too_long = 1;
            continue;
        }
        if (*len + 1 >= *cap) {
            size_t grown_cap = *cap ? *cap * 2 : 4096;
            char *grown = realloc(*buf, grown_cap);
            if (!grown) {
                *too_long = 1;
                continue;
            }
            *buf = grown;
            *cap = grown_cap;
        }
        (*buf)[(*len)++] = (char)c;
    }
    if (!any)
        return -1;
    if (*buf)
        (*buf)[*len] = 0;
    return 0;
}

int mcp_serve(struct mcp_server *s, FILE *in)
{
    char *line = NULL;
    size_t cap = 0, len;
    int too_long;
    while (read_line(in, &line, &cap, &len, &too_long) == 0) {
        if (too_long) {
            struct mcp_error e;
            mcp_fail(&e, MCP_INVALID_REQUEST, "invalid request: a message longer than %u "
                                              "MiB", MCP_MAX_LINE >> 20);
            if (send_error(s, NULL, &e) != 0)
                break;
            continue;
        }
        if (len && line[len - 1] == '\r')
            line[--len] = 0;
        if (!len || strspn(line, " \t") == len)
            continue;  /* (a blank line between messages) */
        if (strlen(line) != len) {
            struct mcp_error e;
            mcp_fail(&e, MCP_PARSE_ERROR, "parse error: a NUL byte in the message");
            if (send_error(s, NULL, &e) != 0)
                break;
            continue;
        }
        if (handle_line(s, line) != 0) {
            fprintf(stderr, "gpuwatch mcp: cannot write the answer: the client is gone\n");
            free(line);
            return -1;
        }
    }
    free(line);
    return 0;
}
