/* The tool table: arguments (schema and checks from one description), tools/list and
 * tools/call. */
#include "mcp_tools.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mcp_json.h"

#define RUN_ARG(what)                                                                      \
    {"run", MCP_STRING, 1, 0, 0, NULL, "the run's id, as list_runs gives it" what}
#define END_ARGS {NULL, MCP_STRING, 0, 0, 0, NULL, NULL}

static const char *const kernel_orders[] = {"gpu_ns", "records", "avg_ns", NULL};

static const struct mcp_arg no_args[] = {END_ARGS};
static const struct mcp_arg findings_args[] = {
    RUN_ARG(""),
    {"top_n", MCP_INTEGER, 0, 1, MCP_TOP_N_MAX, NULL,
     "how many findings (and how many risks) to give, largest saving first (default 10)"},
    END_ARGS,
};
static const struct mcp_arg idle_args[] = {
    RUN_ARG(""),
    {"rank", MCP_INTEGER, 0, 0, 1 << 20, NULL,
     "only the process of this rank (RANK / SLURM_PROCID); default: every process"},
    {"t0", MCP_NUMBER, 0, 0, 1e9, NULL,
     "window start, ms since the process's first traced call (with t1: the idle time "
     "inside the window, at the resolution of the analysis's time slices)"},
    {"t1", MCP_NUMBER, 0, 0, 1e9, NULL, "window end, ms since the process's first call"},
    END_ARGS,
};
static const struct mcp_arg kernels_args[] = {
    RUN_ARG(""),
    {"sort_by", MCP_STRING, 0, 0, 0, kernel_orders,
     "gpu_ns (GPU time, the default), records (how many ran) or avg_ns (time per record)"},
    {"top_n", MCP_INTEGER, 0, 1, MCP_TOP_N_MAX, NULL, "how many kernels (default 10)"},
    END_ARGS,
};
static const struct mcp_arg run_only_args[] = {RUN_ARG(""), END_ARGS};
static const struct mcp_arg timeline_args[] = {
    RUN_ARG(""),
    {"t0_ms", MCP_NUMBER, 1, 0, 1e9, NULL,
     "window start, ms since the process's first traced call"},
    {"t1_ms", MCP_NUMBER, 1, 0, 1e9, NULL, "window end (ms), after t0_ms"},
    {"limit", MCP_INTEGER, 0, 1, MCP_TIMELINE_MAX, NULL,
     "the most events to give, earliest first (default 100)"},
    {"rank", MCP_INTEGER, 0, 0, 1 << 20, NULL, "only the process of this rank"},
    END_ARGS,
};
static const struct mcp_arg compare_args[] = {
    {"base", MCP_STRING, 1, 0, 0, NULL, "the run before the change (an id of list_runs)"},
    {"head", MCP_STRING, 1, 0, 0, NULL, "the run after it"},
    END_ARGS,
};
static const struct mcp_arg explain_args[] = {
    {"id", MCP_STRING, 1, 0, 0, NULL,
     "the finding's id, as get_findings gives it (input_pipeline, sync_bubble, leak...)"},
    {"run", MCP_STRING, 0, 0, 0, NULL,
     "the run whose finding to explain (default: every run that has it)"},
    END_ARGS,
};

struct mcp_tool {
    const char *name;
    const char *description;
    const struct mcp_arg *args;
    int (*fn)(struct mcp_call *c);
};

static const struct mcp_tool tools[] = {
    {"list_runs",
     "The runs under the server's directory: each run's id, processes, ranks, wall time, "
     "GPU busy time and utilization, and how many findings and risks it has.",
     no_args, mcp_tool_list_runs},
    {"get_findings",
     "What wastes the GPU in a run, ranked by the time a change would save: each finding's "
     "evidence, the change to make, the saving (ns and share), its confidence and the "
     "program's lines (file:line) or native sites that cause it; risks (what may fail the "
     "run: leaks, out of memory) apart.",
     findings_args, mcp_tool_get_findings},
    {"get_idle_breakdown",
     "GPU idle time by cause (input pipeline, host-to-device stalls, sync bubbles, launch "
     "overhead, allocator, other) per process, over the run or a window, and the longest "
     "idle intervals.",
     idle_args, mcp_tool_get_idle_breakdown},
    {"get_top_kernels", "The kernels with the most GPU time (records, time, time per record).",
     kernels_args, mcp_tool_get_top_kernels},
    {"get_copies",
     "Memory copies by direction and host memory kind (pageable, pinned...): counts, bytes, "
     "time the host was blocked, small copies, bandwidth; and the sites of the copies the "
     "findings are about.",
     run_only_args, mcp_tool_get_copies},
    {"get_memory",
     "Device memory: peak, capacity and headroom, memory of other processes, out-of-memory "
     "errors, what was held at exit and where it was allocated (leaks), memory over the "
     "steps.",
     run_only_args, mcp_tool_get_memory},
    {"get_timeline",
     "The host's driver calls and the GPU's records (kernels, copies, memsets) in a window "
     "of time, earliest first, one line each as `gpuwatch dump` prints them.",
     timeline_args, mcp_tool_get_timeline},
    {"compare_runs",
     "Two runs before and after a change: the figures that moved, the findings gone, new "
     "and kept, and the time the first run's analysis predicted the change would save "
     "against the time it saved.",
     compare_args, mcp_tool_compare_runs},
    {"explain_finding",
     "One finding in full: what the rule measures, its evidence and figures, the change, "
     "the saving (and after the top finding is fixed), the lines and sites.",
     explain_args, mcp_tool_explain_finding},
};

static const char *type_name(enum mcp_type t)
{
    return t == MCP_STRING ? "string" : t == MCP_INTEGER ? "integer" : "number";
}

/* The tool's inputSchema, from its arguments. */
static void schema(struct gw_json *j, const struct mcp_arg *args)
{
    gw_json_object(j);
    GW_JSON_KEY(j, "type");
    gw_json_str(j, "object");
    GW_JSON_KEY(j, "properties");
    gw_json_object(j);
    for (const struct mcp_arg *a = args; a->name; a++) {
        gw_json_key(j, a->name);
        gw_json_object(j);
        GW_JSON_KEY(j, "type");
        gw_json_str(j, type_name(a->type));
        GW_JSON_KEY(j, "description");
        gw_json_str(j, a->description);
        if (a->type != MCP_STRING && a->min != a->max) {
            GW_JSON_KEY(j, "minimum");
            gw_json_double(j, a->min);
            GW_JSON_KEY(j, "maximum");
            gw_json_double(j, a->max);
        }
        if (a->choices) {
            GW_JSON_KEY(j, "enum");
            gw_json_array(j);
            for (const char *const *ch = a->choices; *ch; ch++)
                gw_json_str(j, *ch);
            gw_json_array_end(j);
        }
        gw_json_object_end(j);
    }
    gw_json_object_end(j);
    GW_JSON_KEY(j, "required");
    gw_json_array(j);
    for (const struct mcp_arg *a = args; a->name; a++)
        if (a->required)
            gw_json_str(j, a->name);
    gw_json_array_end(j);
    GW_JSON_KEY(j, "additionalProperties");
    gw_json_bool(j, 0);
    gw_json_object_end(j);
}

int mcp_tools_list(struct mcp_server *s, yajl_val params, struct gw_json *j,
                   struct mcp_error *e)
{
    gw_json_object(j);
    GW_JSON_KEY(j, "tools");
    gw_json_array(j);
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        gw_json_object(j);
        GW_JSON_KEY(j, "name");
        gw_json_str(j, tools[i].name);
        GW_JSON_KEY(j, "description");
        gw_json_str(j, tools[i].description);
        GW_JSON_KEY(j, "inputSchema");
        schema(j, tools[i].args);
        GW_JSON_KEY(j, "annotations");
        gw_json_object(j);
        GW_JSON_KEY(j, "readOnlyHint");
        gw_json_bool(j, 1);
        GW_JSON_KEY(j, "openWorldHint");
        gw_json_bool(j, 0);
        gw_json_object_end(j);
        gw_json_object_end(j);
    }
    gw_json_array_end(j);
    gw_json_object_end(j);
    return 0;
}

/* The arguments against the tool's description: every one known, of its type, in its
 * range or among its choices; the required ones given. */
static int check_args(struct mcp_call *c, const struct mcp_arg *args)
{
    yajl_val v = c->args;
    if (v && !YAJL_IS_OBJECT(v))
        return mcp_call_fail(c, MCP_INVALID_PARAMS, "arguments must be an object, got %s",
                             mcp_type_name(v));
    for (size_t i = 0; v && i < v->u.object.len; i++) {
        const char *key = v->u.object.keys[i];
        const struct mcp_arg *a = args;
        while (a->name && strcmp(a->name, key))
            a++;
        if (!a->name) {
            char known[256] = "";
            for (const struct mcp_arg *k = args; k->name; k++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                         k == args ? "" : ", ", k->name);
            return mcp_call_fail(c, MCP_INVALID_PARAMS, "unknown argument '%.64s' (it takes: "
                                 "%s)", key, *known ? known : "no arguments");
        }
        yajl_val x = v->u.object.values[i];
        int ok = a->type == MCP_STRING    ? YAJL_IS_STRING(x)
                 : a->type == MCP_INTEGER ? YAJL_IS_INTEGER(x)
                                          : YAJL_IS_NUMBER(x);
        if (!ok)
            return mcp_call_fail(c, MCP_INVALID_PARAMS, "argument '%s' must be %s %s, got %s",
                                 a->name, a->type == MCP_INTEGER ? "an" : "a",
                                 type_name(a->type), mcp_type_name(x));
        if (a->type != MCP_STRING && a->min != a->max) {
            double n = YAJL_IS_INTEGER(x) ? (double)x->u.number.i : x->u.number.d;
            if (!(n >= a->min && n <= a->max))
                return mcp_call_fail(c, MCP_INVALID_PARAMS,
                                     "argument '%s' must be from %g to %g, got %.17g", a->name,
                                     a->min, a->max, n);
        }
        if (a->choices) {
            const char *const *ch = a->choices;
            while (*ch && strcmp(*ch, x->u.string))
                ch++;
            if (!*ch)
                return mcp_call_fail(c, MCP_INVALID_PARAMS,
                                     "argument '%s' must be one of the listed values (%s...), "
                                     "got '%.64s'", a->name, a->choices[0], x->u.string);
        }
    }
    for (const struct mcp_arg *a = args; a->name; a++)
        if (a->required && !mcp_get(v, a->name))
            return mcp_call_fail(c, MCP_INVALID_PARAMS, "missing argument '%s' (%s)", a->name,
                                 a->description);
    return 0;
}

int mcp_tools_call(struct mcp_server *s, yajl_val params, struct gw_json *j,
                   struct mcp_error *e)
{
    const char *name = mcp_get_str(params, "name");
    if (!name)
        return mcp_fail(e, MCP_INVALID_PARAMS, "tools/call: params.name (the tool) must be a "
                                               "string");
    const struct mcp_tool *tool = NULL;
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (!strcmp(tools[i].name, name))
            tool = &tools[i];
    if (!tool)
        return mcp_fail(e, MCP_INVALID_PARAMS, "unknown tool '%.64s' (tools/list names them)",
                        name);
    struct mcp_buf answer;
    if (mcp_buf_open(&answer) != 0)
        return mcp_fail(e, MCP_INTERNAL_ERROR, "%s: out of memory", name);
    struct mcp_call c = {s, tool->name, mcp_get(params, "arguments"), answer.j, e};
    gw_json_object(answer.j);
    int rc = check_args(&c, tool->args);
    if (rc == 0)
        rc = tool->fn(&c);
    gw_json_object_end(answer.j);
    if (mcp_buf_close(&answer) != 0 && rc == 0)
        rc = mcp_fail(e, MCP_INTERNAL_ERROR, "%s: out of memory writing the answer", name);
    if (rc == 0) {
        /* the answer as structured content and, for clients that read text only, the
         * same JSON as text */
        gw_json_object(j);
        GW_JSON_KEY(j, "content");
        gw_json_array(j);
        gw_json_object(j);
        GW_JSON_KEY(j, "type");
        gw_json_str(j, "text");
        GW_JSON_KEY(j, "text");
        gw_json_str_n(j, answer.text, answer.len);
        gw_json_object_end(j);
        gw_json_array_end(j);
        GW_JSON_KEY(j, "structuredContent");
        mcp_put_raw(j, answer.text, answer.len);
        GW_JSON_KEY(j, "isError");
        gw_json_bool(j, 0);
        gw_json_object_end(j);
    }
    mcp_buf_free(&answer);
    return rc;
}

const char *mcp_arg_str(const struct mcp_call *c, const char *name)
{
    return mcp_get_str(c->args, name);
}

int mcp_arg_given(const struct mcp_call *c, const char *name)
{
    return mcp_get(c->args, name) != NULL;
}

int64_t mcp_arg_int(const struct mcp_call *c, const char *name, int64_t dflt)
{
    yajl_val v = mcp_get(c->args, name);
    return v && YAJL_IS_INTEGER(v) ? v->u.number.i : dflt;
}

double mcp_arg_num(const struct mcp_call *c, const char *name, double dflt)
{
    double v;
    return mcp_get_num(c->args, name, &v) ? v : dflt;
}

int mcp_call_fail(struct mcp_call *c, int code, const char *fmt, ...)
{
    char text[sizeof c->e->message - 80];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return mcp_fail(c->e, code, "%s: %s", c->tool, text);
}

struct mcp_run *mcp_call_run(struct mcp_call *c, const char *arg)
{
    const char *id = mcp_arg_str(c, arg);
    char err[sizeof c->e->message - 80];
    if (!id) {
        mcp_call_fail(c, MCP_INVALID_PARAMS, "missing argument '%s'", arg);
        return NULL;
    }
    struct mcp_run *r = mcp_runs_find(&c->s->runs, id, err, sizeof err);
    if (!r) {
        mcp_call_fail(c, MCP_INVALID_PARAMS, "%s", err);
        return NULL;
    }
    if (mcp_run_ready(&c->s->runs, r, err, sizeof err) != 0) {
        mcp_call_fail(c, MCP_INVALID_PARAMS, "%s", err);
        return NULL;
    }
    return r;
}

void mcp_put_cut(struct gw_json *j, const char *what)
{
    GW_JSON_KEY(j, "cut");
    if (what && *what)
        gw_json_str(j, what);
    else
        gw_json_null(j);
}
