/*
 * Resources: each run's JSON report (gpuwatch://run/{id}/report.json, an_report_json) and
 * its HTML page (.../report.html, gw_report_html). Prompts: "investigate", which walks an
 * assistant from the findings to the lines to the change.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_json.h"
#include "mcp_server.h"

#define URI_PREFIX "gpuwatch://run/"

static const struct {
    const char *file, *mime, *what;
} kinds[] = {
    {"report.json", "application/json",
     "the analysis as `gpuwatch analyze --json` gives it (docs/analyze-json.md)"},
    {"report.html", "text/html", "the analysis as one HTML page (gpuwatch report)"},
};

/* The run's id in a URI: letters, digits, - _ . ~ and / as they are, others %XX. */
static void encode_id(const char *id, char *out, size_t size)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)id; *p && n + 4 < size; p++) {
        if (isalnum(*p) || strchr("-_.~/", *p))
            out[n++] = (char)*p;
        else
            n += (size_t)snprintf(out + n, size - n, "%%%02X", *p);
    }
    out[n] = 0;
}

/* The reverse; -1 for a bad escape. */
static int decode_id(const char *s, size_t len, char *out, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (n + 1 >= size)
            return -1;
        if (s[i] != '%') {
            out[n++] = s[i];
            continue;
        }
        unsigned v;
        if (i + 2 >= len || !isxdigit((unsigned char)s[i + 1]) ||
            !isxdigit((unsigned char)s[i + 2]) || sscanf(s + i + 1, "%2x", &v) != 1 || !v)
            return -1;
        out[n++] = (char)v;
        i += 2;
    }
    out[n] = 0;
    return 0;
}

int mcp_resources_list(struct mcp_server *s, yajl_val params, struct gw_json *j,
                       struct mcp_error *e)
{
    mcp_runs_rescan(&s->runs);
    gw_json_object(j);
    GW_JSON_KEY(j, "resources");
    gw_json_array(j);
    for (size_t i = 0; i < s->runs.n; i++) {
        const struct mcp_run *r = &s->runs.items[i];
        char id[1024], text[1200];
        encode_id(r->id, id, sizeof id);
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            gw_json_object(j);
            GW_JSON_KEY(j, "uri");
            snprintf(text, sizeof text, URI_PREFIX "%s/%s", id, kinds[k].file);
            gw_json_str(j, text);
            GW_JSON_KEY(j, "name");
            snprintf(text, sizeof text, "%s/%s", r->id, kinds[k].file);
            gw_json_str(j, text);
            GW_JSON_KEY(j, "description");
            snprintf(text, sizeof text, "run '%s': %s", r->id, kinds[k].what);
            gw_json_str(j, text);
            GW_JSON_KEY(j, "mimeType");
            gw_json_str(j, kinds[k].mime);
            gw_json_object_end(j);
        }
    }
    gw_json_array_end(j);
    gw_json_object_end(j);
    return 0;
}

int mcp_resource_templates_list(struct mcp_server *s, yajl_val params, struct gw_json *j,
                                struct mcp_error *e)
{
    gw_json_object(j);
    GW_JSON_KEY(j, "resourceTemplates");
    gw_json_array(j);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char text[256];
        gw_json_object(j);
        GW_JSON_KEY(j, "uriTemplate");
        snprintf(text, sizeof text, URI_PREFIX "{id}/%s", kinds[k].file);
        gw_json_str(j, text);
        GW_JSON_KEY(j, "name");
        gw_json_str(j, kinds[k].file);
        GW_JSON_KEY(j, "description");
        gw_json_str(j, kinds[k].what);
        GW_JSON_KEY(j, "mimeType");
        gw_json_str(j, kinds[k].mime);
        gw_json_object_end(j);
    }
    gw_json_array_end(j);
    gw_json_object_end(j);
    return 0;
}

int mcp_resources_read(struct mcp_server *s, yajl_val params, struct gw_json *j,
                       struct mcp_error *e)
{
    const char *uri = mcp_get_str(params, "uri");
    if (!uri)
        return mcp_fail(e, MCP_INVALID_PARAMS, "resources/read: params.uri must be a string");
    size_t len = strlen(uri), prefix = strlen(URI_PREFIX), kind = 0;
    const char *slash = strrchr(uri, '/');
    while (kind < sizeof kinds / sizeof kinds[0] &&
           !(slash && !strcmp(slash + 1, kinds[kind].file)))
        kind++;
    char id[1024];
    if (strncmp(uri, URI_PREFIX, prefix) || kind == sizeof kinds / sizeof kinds[0] ||
        slash <= uri + prefix || decode_id(uri + prefix, (size_t)(slash - uri) - prefix, id,
                                           sizeof id) != 0)
        return mcp_fail(e, MCP_RESOURCE_NOT_FOUND, "resource not found: '%.200s' (the "
                        "resources are " URI_PREFIX "{run}/report.json and .../report.html)",
                        uri);
    (void)len;
    char err[768];
    struct mcp_run *r = mcp_runs_find(&s->runs, id, err, sizeof err);
    if (!r)
        return mcp_fail(e, MCP_RESOURCE_NOT_FOUND, "resource not found: %s", err);
    const char *text;
    size_t n;
    if (kind == 0) {
        if (mcp_run_ready(&s->runs, r, err, sizeof err) != 0)
            return mcp_fail(e, MCP_INVALID_PARAMS, "resources/read: %s", err);
        text = r->report;
        n = r->report_len;
    } else if (!(text = mcp_run_html(&s->runs, r, &n, err, sizeof err))) {
        return mcp_fail(e, MCP_INVALID_PARAMS, "resources/read: %s", err);
    }
    gw_json_object(j);
    GW_JSON_KEY(j, "contents");
    gw_json_array(j);
    gw_json_object(j);
    GW_JSON_KEY(j, "uri");
    gw_json_str(j, uri);
    GW_JSON_KEY(j, "mimeType");
    gw_json_str(j, kinds[kind].mime);
    GW_JSON_KEY(j, "text");
    gw_json_str_n(j, text, n);
    gw_json_object_end(j);
    gw_json_array_end(j);
    gw_json_object_end(j);
    return 0;
}

int mcp_prompts_list(struct mcp_server *s, yajl_val params, struct gw_json *j,
                     struct mcp_error *e)
{
    gw_json_object(j);
    GW_JSON_KEY(j, "prompts");
    gw_json_array(j);
    gw_json_object(j);
    GW_JSON_KEY(j, "name");
    gw_json_str(j, "investigate");
    GW_JSON_KEY(j, "title");
    gw_json_str(j, "Investigate a run");
    GW_JSON_KEY(j, "description");
    gw_json_str(j, "From a run's findings to the program's lines to the change to make, "
                   "with the time it saves and how sure that is.");
    GW_JSON_KEY(j, "arguments");
    gw_json_array(j);
    gw_json_object(j);
    GW_JSON_KEY(j, "name");
    gw_json_str(j, "run");
    GW_JSON_KEY(j, "description");
    gw_json_str(j, "the run's id (list_runs); default: the assistant picks one");
    GW_JSON_KEY(j, "required");
    gw_json_bool(j, 0);
    gw_json_object_end(j);
    gw_json_array_end(j);
    gw_json_object_end(j);
    gw_json_array_end(j);
    gw_json_object_end(j);
    return 0;
}

int mcp_prompts_get(struct mcp_server *s, yajl_val params, struct gw_json *j,
                    struct mcp_error *e)
{
    const char *name = mcp_get_str(params, "name");
    if (!name)
        return mcp_fail(e, MCP_INVALID_PARAMS, "prompts/get: params.name must be a string");
    if (strcmp(name, "investigate"))
        return mcp_fail(e, MCP_INVALID_PARAMS, "unknown prompt '%.64s' (prompts/list names "
                        "them: investigate)", name);
    yajl_val args = mcp_get(params, "arguments");
    if (args && !YAJL_IS_OBJECT(args))
        return mcp_fail(e, MCP_INVALID_PARAMS, "prompts/get: arguments must be an object");
    const char *run = mcp_get_str(args, "run");
    char err[768];
    if (run && !mcp_runs_find(&s->runs, run, err, sizeof err))
        return mcp_fail(e, MCP_INVALID_PARAMS, "prompts/get: %s", err);
    char text[4096];
    char first[256];
    if (run)
        snprintf(first, sizeof first, "The run is '%s'.", run);
    else
        snprintf(first, sizeof first, "Call list_runs and pick the run to look at (the one "
                                      "the user means, else the one with the lowest GPU "
                                      "utilization).");
    snprintf(text, sizeof text,
             "Find out what wastes the GPU in a program traced by gpuwatch, and what to change "
             "in the program. %s\n"
             "1. Call get_findings for the run. Findings are ranked by the time their change "
             "saves (saving_ns, saving_share of the wall time; confidence says whether it is "
             "measured or an upper bound). Risks (leaks, out of memory) are apart: they may "
             "fail the run, treat them first.\n"
             "2. For the top finding (and any risk), call explain_finding with its id and the "
             "run: read its evidence and figures, and its 'where': the program's file:line "
             "(Python) or native sites that cause it.\n"
             "3. Open those lines in the user's code. Say what the code does there that the "
             "evidence shows (a .item() every step, a copy from pageable memory, a tensor kept "
             "alive...).\n"
             "4. Propose the change the finding names, as an edit to those lines, with the "
             "saving it predicts and its confidence. When a finding's 'after' is given, say "
             "what is left once the top one is fixed.\n"
             "5. Where it helps, check with get_idle_breakdown, get_copies, get_memory, "
             "get_top_kernels or get_timeline (a window around the finding's first_s/last_s).\n"
             "6. After the user re-runs with the change (gpuwatch run), call compare_runs with "
             "the old run as base and the new one as head: the saving predicted against the "
             "one realized.\n"
             "Quote figures as the tools give them; do not invent lines the tools did not "
             "name.", first);
    gw_json_object(j);
    GW_JSON_KEY(j, "description");
    gw_json_str(j, "From a run's findings to the program's lines to the change");
    GW_JSON_KEY(j, "messages");
    gw_json_array(j);
    gw_json_object(j);
    GW_JSON_KEY(j, "role");
    gw_json_str(j, "user");
    GW_JSON_KEY(j, "content");
    gw_json_object(j);
    GW_JSON_KEY(j, "type");
    gw_json_str(j, "text");
    GW_JSON_KEY(j, "text");
    gw_json_str(j, text);
    gw_json_object_end(j);
    gw_json_object_end(j);
    gw_json_array_end(j);
    gw_json_object_end(j);
    return 0;
}
