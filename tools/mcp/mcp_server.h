/*
 * gpuwatch mcp: a Model Context Protocol server over the traces, on stdin/stdout.
 *
 *   mcp_rpc.c        JSON-RPC 2.0 framing (one message a line) and the method table
 *   mcp_tools.c      the tools: their arguments (one table, which is also their JSON
 *                    Schema), checked before a tool runs, and the answer's envelope
 *   mcp_answers.c    the tools that select from a run's JSON report (an_report_json)
 *   mcp_window.c     the tools over a stretch of time (idle by cause, the timeline)
 *   mcp_content.c    resources (each run's JSON and HTML report) and prompts
 *   mcp_runs.c       the runs, each analyzed once and kept (until its files change)
 *   mcp_json.c       yajl's tree in, the project's JSON writer out
 * Logs go to stderr only: stdout carries the protocol alone.
 */
#ifndef GPUWATCH_MCP_SERVER_H
#define GPUWATCH_MCP_SERVER_H

#include <stdio.h>
#include <yajl/yajl_tree.h>

#include "export/json_writer.h"
#include "mcp_runs.h"

/* The protocol revision the current specification names, and the earlier ones a client
 * may ask for (the answer is then the client's). */
#define MCP_PROTOCOL_LATEST "2025-11-25"

/* JSON-RPC 2.0 error codes. */
#define MCP_PARSE_ERROR -32700
#define MCP_INVALID_REQUEST -32600
#define MCP_METHOD_NOT_FOUND -32601
#define MCP_INVALID_PARAMS -32602
#define MCP_INTERNAL_ERROR -32603
#define MCP_RESOURCE_NOT_FOUND -32002  /* (the specification's, for resources/read) */

/* A request longer than this is refused (and read to its end). */
#define MCP_MAX_LINE (8u << 20)
/* An answer (a tool's, a resource's) longer than this is refused, with what to ask. */
#define MCP_MAX_ANSWER (4u << 20)

struct mcp_error {
    int code;
    char message[1024];
};

struct mcp_server {
    struct mcp_runs runs;
    FILE *out;               /* the protocol's stream (stdout) */
    const char *version;     /* gpuwatch's */
    char protocol[16];       /* the revision agreed at initialize */
};

/* Serves requests read from in until it ends: 0, or -1 when out cannot be written. */
int mcp_serve(struct mcp_server *s, FILE *in);

/* A method: writes its result (one JSON value) to j; 0, or -1 with e filled. */
typedef int (*mcp_method_fn)(struct mcp_server *s, yajl_val params, struct gw_json *j,
                             struct mcp_error *e);
int mcp_fail(struct mcp_error *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* mcp_tools.c */
int mcp_tools_list(struct mcp_server *s, yajl_val params, struct gw_json *j,
                   struct mcp_error *e);
int mcp_tools_call(struct mcp_server *s, yajl_val params, struct gw_json *j,
                   struct mcp_error *e);
/* mcp_content.c */
int mcp_resources_list(struct mcp_server *s, yajl_val params, struct gw_json *j,
                       struct mcp_error *e);
int mcp_resource_templates_list(struct mcp_server *s, yajl_val params, struct gw_json *j,
                                struct mcp_error *e);
int mcp_resources_read(struct mcp_server *s, yajl_val params, struct gw_json *j,
                       struct mcp_error *e);
int mcp_prompts_list(struct mcp_server *s, yajl_val params, struct gw_json *j,
                     struct mcp_error *e);
int mcp_prompts_get(struct mcp_server *s, yajl_val params, struct gw_json *j,
                    struct mcp_error *e);

#endif
