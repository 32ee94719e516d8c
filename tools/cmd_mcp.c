/*
 * gpuwatch mcp [TRACE...|DIR...]
 *
 * A Model Context Protocol server on stdin/stdout over the runs under DIR (each directory
 * of traces is a run) or the TRACE files given (one run): an assistant lists the runs,
 * asks for the findings, the idle time by cause, the kernels, copies, memory, a window of
 * the timeline, a comparison of two runs (tools/mcp/). JSON-RPC 2.0, one message a line;
 * logs on stderr only.
 *
 * Exit status: 0 when the client closes the input; 1 when the answers cannot be written;
 * 2 usage error (a path that does not exist).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#ifdef GPUWATCH_MCP
#include "mcp/mcp_server.h"
#else
#define MCP_PROTOCOL_LATEST "(not built)"
#endif

#ifndef GPUWATCH_VERSION
#define GPUWATCH_VERSION "unknown"
#endif

static void help(FILE *out)
{
    fprintf(out,
            "usage: gpuwatch mcp [TRACE...|DIR...]\n"
            "A Model Context Protocol server on stdin/stdout (protocol %s) over the runs\n"
            "under DIR (default: the current directory; every directory there that holds\n"
            "traces is a run, its id its path below DIR) or the TRACE files given (one run).\n"
            "Tools: list_runs, get_findings, get_idle_breakdown, get_top_kernels,\n"
            "get_copies, get_memory, get_timeline, compare_runs, explain_finding;\n"
            "resources: each run's report.json and report.html; prompt: investigate.\n"
            "A client starts it, e.g.:\n"
            "  {\"mcpServers\": {\"gpuwatch\": {\"command\": \"gpuwatch\",\n"
            "                               \"args\": [\"mcp\", \"/path/to/traces\"]}}}\n\n"
            "  -h, --help   this text\n"
            "Exit status: 0 when the client closes the input; 1 when the answers cannot be\n"
            "written; 2 usage error.\n",
            MCP_PROTOCOL_LATEST);
}

int gw_cmd_mcp(int argc, char **argv)
{
    static const struct option options[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'h': help(stdout); return GW_EXIT_OK;
        default: return gw_usage_error("mcp", "unknown option");
        }
    }
#ifndef GPUWATCH_MCP
    fprintf(stderr, "gpuwatch mcp: this gpuwatch was built without yajl (libyajl-dev), which "
                    "the server reads requests with\n");
    return GW_EXIT_USAGE;
#else
    static char dot[] = ".";
    char *here[1] = {dot};
    char **roots = optind < argc ? argv + optind : here;
    int nroots = optind < argc ? argc - optind : 1;
    static struct mcp_server s;  /* (static: the runs table lives as long as the server) */
    char err[512];
    if (mcp_runs_init(&s.runs, roots, nroots, err, sizeof err) != 0)
        return gw_usage_error("mcp", "%s", err);
    /* stdout carries the protocol alone: the answers go to a copy of it, and anything
     * else written to stdout lands on stderr */
    int proto = dup(STDOUT_FILENO);
    FILE *out = proto >= 0 ? fdopen(proto, "w") : NULL;
    if (!out || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        perror("gpuwatch mcp: stdout");
        mcp_runs_free(&s.runs);
        return GW_EXIT_DAMAGE;
    }
    signal(SIGPIPE, SIG_IGN);  /* (a client gone: the write fails, the loop ends) */
    s.out = out;
    s.version = GPUWATCH_VERSION;
    fprintf(stderr, "gpuwatch mcp: %zu run(s) found; serving on stdin/stdout\n", s.runs.n);
    int rc = mcp_serve(&s, stdin) == 0 ? GW_EXIT_OK : GW_EXIT_DAMAGE;
    fclose(out);
    mcp_runs_free(&s.runs);
    return rc;
#endif
}
