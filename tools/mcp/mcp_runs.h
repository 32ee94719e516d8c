/*
 * The runs the MCP server answers about, and their analyses, each made once and kept.
 *
 * A run is a directory of traces (*.gwt, a PyTorch profiler's *.json[.gz]), one per
 * process, or the trace files named on the command line together. Its id is stable: the
 * directory's path relative to the root given (the root itself: its own name). A run is
 * analyzed when first asked about; the analysis, its JSON report (as text and as a parsed
 * tree) and its HTML page are kept and reused, until the run's files change (a trace still
 * being written): then it is analyzed again, as far as the files are intact.
 */
#ifndef GPUWATCH_MCP_RUNS_H
#define GPUWATCH_MCP_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "analyze/analyze.h"

#define MCP_MAX_RUNS 256
#define MCP_RUN_DEPTH 4      /* directories below a root searched for runs */

struct mcp_run {
    char *id;
    char **paths;            /* what an_run_open is given: the directory, or the files */
    int npaths;
    int analyzed;            /* run, report and tree are valid */
    uint64_t stamp;          /* the files' sizes and times when analyzed */
    struct an_run run;
    char *report;            /* an_report_json's text */
    size_t report_len;
    yajl_val tree;           /* the same, parsed */
    char *html;              /* gw_report_html's page, made when first asked for */
    size_t html_len;
};

struct mcp_runs {
    char **roots;            /* the command line's TRACES or DIRs */
    int nroots;
    struct mcp_run *items;
    size_t n;
    struct an_options opt;
};

/* Keeps the roots and finds the runs under them: 0, or -1 with a message in err (a
 * path that cannot be read; no run at all is not an error: list_runs says so). */
int mcp_runs_init(struct mcp_runs *rs, char **roots, int nroots, char *err, size_t errlen);
/* Looks again for runs written since (new directories are added; none is dropped). */
void mcp_runs_rescan(struct mcp_runs *rs);
void mcp_runs_free(struct mcp_runs *rs);
/* The run of that id, or NULL (err names the id and the runs there are). */
struct mcp_run *mcp_runs_find(struct mcp_runs *rs, const char *id, char *err, size_t errlen);
/* The run analyzed (again, when its files changed): 0, or -1 with a message in err that
 * names the problem (no trace could be read, and why). */
int mcp_run_ready(struct mcp_runs *rs, struct mcp_run *r, char *err, size_t errlen);
/* Its HTML report (made once): NULL with err when it cannot be. */
const char *mcp_run_html(struct mcp_runs *rs, struct mcp_run *r, size_t *len, char *err,
                         size_t errlen);
#endif
