"""gpuwatch mcp, with the official Python MCP SDK as its client (tests/mcp/test_mcp.sh).

    client_check.py GPUWATCH TRACES_DIR JSON_DIR BAD_DIR

Part 1 (the SDK over stdio): initialize, list the tools, call each on the runs under
TRACES_DIR and hold the answers against JSON_DIR/<run>.json (gpuwatch analyze --json on
the same traces) and JSON_DIR/diff.json (gpuwatch diff --json): the same findings, savings,
lines, figures. Resources and the prompt. Errors through the SDK. Prints the exchange,
abridged.
Part 2 (raw lines on the server's stdin): malformed JSON, a batch, unknown methods and
tools, wrong argument types, a missing run, an unreadable trace, a huge limit, a huge line:
an error each, with the right code and a message naming the problem, and the next request
still answered. Exit status 0 when every check holds.
"""
import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
import mcp.types as types

GPUWATCH, TRACES, JSONS, BAD = sys.argv[1:5]
PROTOCOL = "2025-11-25"  # the specification's current revision, the SDK's latest
TOOLS = {"list_runs", "get_findings", "get_idle_breakdown", "get_top_kernels", "get_copies",
         "get_memory", "get_timeline", "compare_runs", "explain_finding"}
problems = []


def check(ok, what):
    if not ok:
        problems.append(what)
        print("  FAIL:", what, file=sys.stderr)
    return ok


def show(direction, text, width=300):
    text = text if isinstance(text, str) else json.dumps(text)
    print("  %s %s%s" % (direction, text[:width], " ..." if len(text) > width else ""))


def analyzed(run):
    with open(os.path.join(JSONS, run + ".json")) as f:
        return json.load(f)


def where_of(f):
    """The 'where' the server gives a finding, from the report's own lines and sites."""
    out = ["%s:%d%s" % (l["file"], l["line"], " (%s)" % l["function"] if l.get("function") else "")
           for l in (f.get("python_lines") or {}).get("lines", [])]
    out += [s["where"] for s in (f.get("native_sites") or {}).get("sites", []) if s["where"]]
    out += [s["where"] for s in f.get("alloc_sites", []) if s["where"]]
    return out


async def call(session, name, args):
    show("->", {"method": "tools/call", "params": {"name": name, "arguments": args}})
    result = await session.call_tool(name, args)
    check(not result.isError, "%s %s: isError" % (name, args))
    data = result.structuredContent
    check(data is not None and json.loads(result.content[0].text) == data,
          "%s: the text content is not the structured content" % name)
    show("<-", result.content[0].text)
    return data


async def expect_error(session, name, args, words):
    show("->", {"method": "tools/call", "params": {"name": name, "arguments": args}})
    try:
        result = await session.call_tool(name, args)
        check(False, "%s %s: answered %s, expected an error" % (name, args, result.content[0].text[:200]))
    except McpError as e:
        show("<-", {"error": {"code": e.error.code, "message": e.error.message}})
        check(e.error.code == types.INVALID_PARAMS, "%s %s: code %d" % (name, args, e.error.code))
        for w in words:
            check(w in e.error.message, "%s %s: message %r does not name %r" % (name, args, e.error.message, w))
    await session.send_ping()  # the server answers the next request


def same_findings(run, got, report, key):
    want = report[key]
    check([f["id"] for f in got[key]] == [f["id"] for f in want],
          "%s %s: ids %s, analyze says %s" % (run, key, [f["id"] for f in got[key]], [f["id"] for f in want]))
    for g, w in zip(got[key], want):
        for k in ("rank", "risk_rank", "title", "evidence", "change", "saving_ns", "saving_share",
                  "step_share", "after", "same_wait_as", "figures", "first_s", "last_s", "pid",
                  "python_lines", "native_sites", "alloc_sites", "strikes_s"):
            check(g.get(k) == w.get(k), "%s %s %s: %s %r, analyze says %r" % (run, key, w["id"], k, g.get(k), w.get(k)))
        check(g["where"] == where_of(w), "%s %s: where %s, the report's lines %s" % (run, w["id"], g["where"], where_of(w)))
        check(g["confidence"] in ("measured", "upper_bound", "lowered"), "%s: confidence %s" % (w["id"], g["confidence"]))


async def part1():
    runs = sorted(d for d in os.listdir(TRACES) if os.path.isdir(os.path.join(TRACES, d)))
    params = StdioServerParameters(command=GPUWATCH, args=["mcp", TRACES])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            show("->", {"method": "initialize", "params": {"protocolVersion": types.LATEST_PROTOCOL_VERSION}})
            init = await session.initialize()
            show("<-", init.model_dump(exclude_none=True))
            check(init.protocolVersion == PROTOCOL, "protocol %s" % init.protocolVersion)
            check(init.serverInfo.name == "gpuwatch", "server %s" % init.serverInfo.name)
            check(init.capabilities.tools is not None and init.capabilities.resources is not None
                  and init.capabilities.prompts is not None, "capabilities %s" % init.capabilities)

            show("->", {"method": "tools/list"})
            tools = (await session.list_tools()).tools
            show("<-", [t.name for t in tools])
            check({t.name for t in tools} == TOOLS, "tools %s" % sorted(t.name for t in tools))
            for t in tools:
                check(t.inputSchema.get("type") == "object" and "properties" in t.inputSchema,
                      "%s: no JSON Schema" % t.name)

            listed = await call(session, "list_runs", {})
            got = {r["id"]: r for r in listed["runs"]}
            check(sorted(got) == runs, "runs %s, expected %s" % (sorted(got), runs))
            for run in runs:
                rep = analyzed(run)["run"]
                for k in ("processes", "traces", "wall_ns", "gpu_busy_ns", "gpu_util"):
                    check(got.get(run, {}).get(k) == rep[k], "list_runs %s: %s %r, analyze %r" % (run, k, got.get(run, {}).get(k), rep[k]))

            for run in runs:
                report = analyzed(run)
                found = await call(session, "get_findings", {"run": run, "top_n": 100})
                same_findings(run, found, report, "findings")
                same_findings(run, found, report, "risks")
                check(found["cut"] is None, "%s: cut %s with top_n 100" % (run, found["cut"]))
                if len(report["findings"]) > 1:
                    one = await call(session, "get_findings", {"run": run, "top_n": 1})
                    check(len(one["findings"]) == 1 and one["cut"] and "top_n" in one["cut"],
                          "%s top_n 1: %d findings, cut %s" % (run, len(one["findings"]), one["cut"]))

                idle = await call(session, "get_idle_breakdown", {"run": run})
                for g, w in zip(idle["processes"], report["processes"]):
                    check(g["idle"] == w["idle"] and g["wall_ns"] == w["wall_ns"], "%s: idle differs" % run)
                wall_ms = report["processes"][0]["wall_ns"] / 1e6
                win = await call(session, "get_idle_breakdown", {"run": run, "t0": 0, "t1": wall_ms / 2})
                w0 = win["processes"][0]["window"]
                check(sum(w0["idle_ns"].values()) + w0["gpu_busy_ns"] <= wall_ms / 2 * 1e6 * 1.05 + w0["resolution_ms"] * 1e6,
                      "%s: the window holds more time than it lasts: %s" % (run, w0))

                kernels = await call(session, "get_top_kernels", {"run": run, "sort_by": "gpu_ns", "top_n": 10})
                want = sorted(report["processes"][0]["kernels"], key=lambda k: (-k["gpu_ns"], k["name"]))
                check([(k["name"], k["gpu_ns"], k["records"]) for k in kernels["kernels"]] ==
                      [(k["name"], k["gpu_ns"], k["records"]) for k in want], "%s: kernels differ" % run)

                copies = await call(session, "get_copies", {"run": run})
                check(copies["processes"][0]["transfers"] == report["processes"][0]["transfers"], "%s: transfers differ" % run)
                for s in copies["sites"]:
                    w = next(f for f in report["findings"] + report["risks"] if f["id"] == s["id"])
                    check(s["where"] == where_of(w) and s.get("native_sites") == w.get("native_sites"),
                          "%s: copy sites of %s differ" % (run, s["id"]))

                memory = await call(session, "get_memory", {"run": run})
                m, wm = memory["processes"][0], report["processes"][0]["memory"]
                check(m["memory"] == wm, "%s: memory differs" % run)
                check(m["headroom_bytes"] == wm["capacity_bytes"] - wm["peak_bytes"] - wm["others_at_start_bytes"],
                      "%s: headroom %s" % (run, m["headroom_bytes"]))
                check([f["id"] for f in memory["findings"]] ==
                      [f["id"] for f in report["risks"] + report["findings"]
                       if f["id"] in ("leak", "oom_retry", "fragmentation", "memory_headroom", "shared_gpu")],
                      "%s: memory findings differ" % run)

                line = await call(session, "get_timeline", {"run": run, "t0_ms": 0, "t1_ms": wall_ms, "limit": 5})
                ev = line["events"]
                check(len(ev) == min(5, line["events_in_window"]) and line["events_in_window"] > 5,
                      "%s: %d events of %d" % (run, len(ev), line["events_in_window"]))
                check([e["t_ms"] for e in ev] == sorted(e["t_ms"] for e in ev) and all(0 <= e["t_ms"] < wall_ms for e in ev),
                      "%s: events out of order or of the window" % run)
                check(line["cut"] and "limit" in line["cut"], "%s: timeline cut %s" % (run, line["cut"]))

                for f in report["risks"] + report["findings"]:
                    ex = await call(session, "explain_finding", {"id": f["id"], "run": run})
                    check(len(ex["seen"]) == 1 and ex["seen"][0]["finding"]["saving_ns"] == f["saving_ns"] and
                          ex["seen"][0]["finding"]["evidence"] == f["evidence"], "%s: explain %s differs" % (run, f["id"]))

            diff = await call(session, "compare_runs", {"base": "per_step_sync", "head": "per_step_sync_fixed"})
            with open(os.path.join(JSONS, "diff.json")) as f:
                want = json.load(f)
            for k in ("figures", "findings", "change", "kernels"):
                check(diff["diff"][k] == want[k], "compare_runs: %s differs from gpuwatch diff --json" % k)

            show("->", {"method": "resources/list"})
            resources = (await session.list_resources()).resources
            show("<-", [str(r.uri) for r in resources])
            for run in runs:
                uri = "gpuwatch://run/%s/report.json" % run
                check(any(str(r.uri) == uri for r in resources), "no resource %s" % uri)
                show("->", {"method": "resources/read", "params": {"uri": uri}})
                text = (await session.read_resource(uri)).contents[0].text
                show("<-", text, 120)
                check(json.loads(text) == analyzed(run), "%s: report.json differs from analyze --json" % run)
            html = (await session.read_resource("gpuwatch://run/leak/report.html")).contents[0]
            check(html.mimeType == "text/html" and html.text.startswith("<!DOCTYPE html>"), "report.html")

            show("->", {"method": "prompts/list"})
            prompts = (await session.list_prompts()).prompts
            show("<-", [p.name for p in prompts])
            check([p.name for p in prompts] == ["investigate"], "prompts %s" % prompts)
            show("->", {"method": "prompts/get", "params": {"name": "investigate", "arguments": {"run": "pageable_h2d"}}})
            prompt = await session.get_prompt("investigate", {"run": "pageable_h2d"})
            show("<-", prompt.messages[0].content.text, 200)
            check("get_findings" in prompt.messages[0].content.text and "pageable_h2d" in prompt.messages[0].content.text,
                  "investigate's text")

            # bad input through the SDK: an error each, and the server answers the next one
            await expect_error(session, "no_such_tool", {}, ["no_such_tool"])
            await expect_error(session, "get_findings", {"run": "pageable_h2d", "top_n": "ten"}, ["top_n", "integer"])
            await expect_error(session, "get_findings", {"run": "no_such_run"}, ["no_such_run", "pageable_h2d"])
            await expect_error(session, "get_timeline", {"run": "leak", "t0_ms": 0, "t1_ms": 10, "limit": 10**9}, ["limit"])
            await expect_error(session, "get_findings", {}, ["run"])
            await expect_error(session, "explain_finding", {"id": "no_such_finding"}, ["no_such_finding"])


def part2():
    """Raw lines on stdin, each answer read as the next line. Two roots: the runs' ids are
    their paths below each root's name (traces/leak, bad/garbage)."""
    server = subprocess.Popen([GPUWATCH, "mcp", TRACES, BAD], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def exchange(line, want_code, words=(), want_id=None):
        server.stdin.write(line if isinstance(line, bytes) else line.encode())
        server.stdin.write(b"\n")
        server.stdin.flush()
        raw = server.stdout.readline()
        if not check(raw, "no answer to %r" % line[:80]):
            return None
        answer = json.loads(raw)
        show("<-", answer, 200)
        if want_code is None:
            check("result" in answer, "%r: %s" % (line[:80], answer))
        else:
            err = answer.get("error") or {}
            check(err.get("code") == want_code, "%r: code %s, expected %d" % (line[:80], err.get("code"), want_code))
            for w in words:
                check(w in err.get("message", ""), "%r: message %r does not name %r" % (line[:80], err.get("message"), w))
        check(answer.get("id") == want_id, "%r: id %r, expected %r" % (line[:80], answer.get("id"), want_id))
        # the next request is answered
        server.stdin.write(b'{"jsonrpc":"2.0","id":"p","method":"ping"}\n')
        server.stdin.flush()
        pong = server.stdout.readline()
        check(pong and json.loads(pong) == {"jsonrpc": "2.0", "id": "p", "result": {}}, "no ping after %r: %r" % (line[:80], pong))
        return answer

    def req(i, method, params=None):
        m = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            m["params"] = params
        return json.dumps(m)

    def tool(i, name, args):
        return req(i, "tools/call", {"name": name, "arguments": args})

    exchange(req(1, "initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                   "clientInfo": {"name": "raw", "version": "0"}}), None, want_id=1)
    exchange('{"jsonrpc": "2.0", "id": 2, "method": "ping"', -32700, ["parse error"])
    exchange("not json at all", -32700, ["parse error"])
    exchange(b'{"jsonrpc":"2.0","id":3,"method":"ping","x":"\xff\xfe"}', -32700, ["parse error"])
    exchange('[{"jsonrpc": "2.0", "id": 4, "method": "ping"}]', -32600, ["batch"])
    exchange('{"jsonrpc": "1.0", "id": 5, "method": "ping"}', -32600, ["jsonrpc"], want_id=5)
    exchange('{"jsonrpc": "2.0", "id": 6}', -32600, ["method"], want_id=6)
    exchange('{"jsonrpc": "2.0", "id": [7], "method": "ping"}', -32600, ["id"])
    exchange(req(8, "no/such/method"), -32601, ["no/such/method"], want_id=8)
    exchange(req(9, "tools/call", [1, 2]), -32602, ["params"], want_id=9)
    exchange(tool(10, "no_such_tool", {}), -32602, ["unknown tool", "no_such_tool"], want_id=10)
    exchange(tool(11, "get_findings", {"run": "traces/pageable_h2d", "top_n": 2.5}), -32602, ["top_n", "integer"], want_id=11)
    exchange(tool(12, "get_findings", {"run": 12}), -32602, ["run", "string"], want_id=12)
    exchange(tool(13, "get_findings", {"run": "traces/pageable_h2d", "colour": 1}), -32602, ["unknown argument", "colour"], want_id=13)
    exchange(tool(14, "get_findings", {"run": "missing_run"}), -32602, ["missing_run"], want_id=14)
    exchange(tool(15, "get_findings", {"run": "bad/garbage"}), -32602, ["bad.gwt"], want_id=15)
    exchange(tool(16, "get_timeline", {"run": "traces/leak", "t0_ms": 0, "t1_ms": 5, "limit": 10**12}), -32602, ["limit"], want_id=16)
    exchange(tool(17, "get_timeline", {"run": "traces/leak", "t0_ms": 5, "t1_ms": 1}), -32602, ["t1_ms"], want_id=17)
    exchange(tool(18, "get_top_kernels", {"run": "traces/leak", "sort_by": "colour"}), -32602, ["sort_by"], want_id=18)
    exchange(req(19, "resources/read", {"uri": "gpuwatch://run/missing_run/report.json"}), -32002, ["missing_run"], want_id=19)
    exchange(req(20, "prompts/get", {"name": "no_such_prompt"}), -32602, ["no_such_prompt"], want_id=20)
    exchange(b'{"jsonrpc":"2.0","id":21,"method":"ping","pad":"' + b"x" * (9 << 20) + b'"}', -32600, ["longer"])
    # a notification gets no answer: the ping after it is the next line
    exchange(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n' + req(22, "ping").encode(), None, want_id=22)
    exchange(tool(23, "get_findings", {"run": "traces/being_written", "top_n": 3}), None, want_id=23)
    server.stdin.close()
    check(server.wait(timeout=30) == 0, "the server did not exit 0 at the end of its input")


print("part 1: the SDK as the client")
asyncio.run(part1())
print("part 2: raw bad lines on stdin")
part2()
if problems:
    print("%d problem(s)" % len(problems), file=sys.stderr)
    sys.exit(1)
print("client_check: all checks held")
