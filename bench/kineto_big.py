"""A large Kineto trace for bench/kineto_load.sh: the events of one real trace repeated,
each copy shifted past the previous one in time and in correlation ids, streamed out (never
held whole) until the file reaches the size asked for.
usage: kineto_big.py SOURCE.json.gz OUT.json MEGABYTES"""
import gzip
import json
import sys

source, out_path, megabytes = sys.argv[1], sys.argv[2], float(sys.argv[3])
trace = json.load(gzip.open(source))
events = [e for e in trace["traceEvents"] if "ts" in e and isinstance(e.get("pid"), int)]
t0 = min(float(e["ts"]) for e in events)
span = max(float(e["ts"]) + float(e.get("dur", 0)) for e in events) - t0 + 1000
corr_step = 1 + max(int(e.get("args", {}).get("correlation", 0) or 0) for e in events)
head = {k: v for k, v in trace.items() if k != "traceEvents"}
limit = int(megabytes * 1e6)
with open(out_path, "w") as out:
    text = json.dumps(head)
    out.write(text[:-1] + ', "traceEvents": [\n')
    written, copy, first = len(text), 0, True
    while written < limit:
        shift = copy * span
        for e in events:
            c = dict(e)
            c["ts"] = float(e["ts"]) + shift
            args = e.get("args")
            if args and args.get("correlation"):
                args = dict(args)
                args["correlation"] = args["correlation"] + copy * corr_step
                c["args"] = args
            line = ("" if first else ",\n") + json.dumps(c)
            first = False
            out.write(line)
            written += len(line)
        copy += 1
    out.write("\n]}\n")
print("%s: %d copies of %d events, %.0f MB" % (out_path, copy, len(events), written / 1e6))
