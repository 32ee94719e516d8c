/*
 * The tools: one table (mcp_tools.c), each tool's arguments described once, which is both
 * the JSON Schema tools/list gives and what tools/call checks before the tool runs. A
 * tool writes its answer's members (one JSON object: the structured content, also given
 * as text) and says what it cut to keep the answer small ("cut").
 */
#ifndef GPUWATCH_MCP_TOOLS_H
#define GPUWATCH_MCP_TOOLS_H

#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "mcp_server.h"

enum mcp_type { MCP_STRING, MCP_INTEGER, MCP_NUMBER };

struct mcp_arg {
    const char *name;
    enum mcp_type type;
    int required;
    double min, max;             /* numbers: the range allowed (min == max: any) */
    const char *const *choices;  /* strings: the values allowed, NULL-terminated (NULL: any) */
    const char *description;
};

/* One tools/call: its arguments (checked), where its answer goes. */
struct mcp_call {
    struct mcp_server *s;
    const char *tool;
    yajl_val args;               /* an object, or NULL */
    struct gw_json *j;           /* inside the answer's object: write members */
    struct mcp_error *e;
};

/* Arguments, checked already: a string (NULL when absent), a number (dflt when absent). */
const char *mcp_arg_str(const struct mcp_call *c, const char *name);
int64_t mcp_arg_int(const struct mcp_call *c, const char *name, int64_t dflt);
double mcp_arg_num(const struct mcp_call *c, const char *name, double dflt);
int mcp_arg_given(const struct mcp_call *c, const char *name);
/* The run named by the argument (analyzed): NULL with the error set. */
struct mcp_run *mcp_call_run(struct mcp_call *c, const char *arg);
/* An error of this call, "TOOL: ..." (-1). */
int mcp_call_fail(struct mcp_call *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "cut": null when nothing was cut, else what was, e.g. "findings: 10 of 14 shown (top_n)". */
void mcp_put_cut(struct gw_json *j, const char *what);

/* The tools (mcp_answers.c, mcp_window.c). */
int mcp_tool_list_runs(struct mcp_call *c);
int mcp_tool_get_findings(struct mcp_call *c);
int mcp_tool_get_top_kernels(struct mcp_call *c);
int mcp_tool_get_copies(struct mcp_call *c);
int mcp_tool_get_memory(struct mcp_call *c);
int mcp_tool_compare_runs(struct mcp_call *c);
int mcp_tool_explain_finding(struct mcp_call *c);
int mcp_tool_get_idle_breakdown(struct mcp_call *c);
int mcp_tool_get_timeline(struct mcp_call *c);

/* Caps. */
#define MCP_TOP_N_MAX 100
#define MCP_TIMELINE_MAX 1000
#define MCP_LIST_RUNS_MAX 100

#endif
