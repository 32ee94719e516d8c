#!/usr/bin/env python3
"""Small synthetic PyTorch profiler (Kineto) traces for the tests, written as torch.profiler
writes them (the fields gpuwatch and HTA read; times in microseconds).

  make_fixture.py python OUT.json   a training loop with python_function stacks
                                    (with_stack=True) around cudaLaunchKernel,
                                    cudaMemcpyAsync and cudaStreamSynchronize
  make_fixture.py memory OUT.json   the same loop with profile_memory=True's [memory]
                                    instant events: device blocks (some held from before the
                                    trace, given back in it) and host blocks

Prints nothing; the tests compute what they expect from the file they read back."""
import json
import sys

PID, TID, DEVICE, STREAM = 4242, 4243, 0, 7
BASE = 1_700_000_000_000.0  # us, as Kineto's epoch-based timestamps
STEPS = 12


class Trace:
    def __init__(self):
        self.events = []
        self.corr = 1000

    def x(self, cat, name, ts, dur, pid=PID, tid=TID, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
             "ts": round(BASE + ts, 3), "dur": round(dur, 3)}
        if args:
            e["args"] = args
        self.events.append(e)

    def py(self, name, ts, dur):
        self.x("python_function", name, ts, dur, args={"Python id": len(self.events)})

    def runtime(self, name, ts, dur, gpu=None):
        """A runtime call; gpu = (cat, name, start, dur, extra args) of its GPU work."""
        self.corr += 1
        self.x("cuda_runtime", name, ts, dur, args={"correlation": self.corr})
        if gpu:
            cat, gname, start, gdur, extra = gpu
            args = {"correlation": self.corr, "device": DEVICE, "stream": STREAM}
            args.update(extra)
            self.x(cat, gname, start, gdur, pid=DEVICE, tid=STREAM, args=args)

    def instant(self, name, ts, args, tid=TID):
        self.events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": name,
                            "pid": PID, "tid": tid, "ts": round(BASE + ts, 3), "args": args})

    def write(self, path):
        trace = {"schemaVersion": 1,
                 "deviceProperties": [{"id": DEVICE, "name": "NVIDIA A100-SXM4-80GB",
                                       "totalGlobalMem": 85899345920}],
                 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
                 "traceEvents": self.events}
        with open(path, "w") as f:
            json.dump(trace, f)


LIB = "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py"


def loop(t, memory=None):
    """STEPS steps of 10 ms: a pageable upload (2 ms in the call), then INNER rounds of three
    100 us kernels and a sync that waits for them (loss.item() in an inner loop: the GPU
    idles while the host gets going again after each), then the host without calls."""
    step, inner = 10_000.0, 10
    t.py("train.py(30): <module>", 0, STEPS * step + 100)
    gpu_free = 0.0
    for s in range(STEPS):
        t0 = 50 + s * step
        t.x("user_annotation", "ProfilerStep#%d" % (s + 2), t0, step - 10)
        t.py("train.py(12): train_step", t0 + 5, 6_000)
        # the batch: data.py's load_batch copies it from pageable memory
        t.py("data.py(21): load_batch", t0 + 10, 2_100)
        t.runtime("cudaMemcpyAsync", t0 + 20, 2_000,
                  ("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", t0 + 1_500, 500,
                   {"bytes": 8 << 20}))
        gpu_free = t0 + 2_000
        at = t0 + 2_200
        for i in range(inner):
            # the model: torch's module call around the user's forward, torch's linear in it
            t.py(LIB + "(1501): _call_impl", at, 100)
            t.py("model.py(8): forward", at + 5, 90)
            t.py("torch/nn/functional.py(2000): linear", at + 10, 80)
            for k in range(3):
                ts = at + 15 + k * 20
                start = max(gpu_free, ts + 5)
                t.runtime("cudaLaunchKernel", ts, 10,
                          ("kernel", "ampere_sgemm_128x64_nn", start, 100,
                           {"grid": [80, 1, 1], "block": [256, 1, 1]}))
                gpu_free = start + 100
                if memory is not None:
                    memory(t, s * inner + i, k, ts + 5)
            # the loss read back: a builtin (no line) inside the user's log_loss
            sync_at, sync_end = at + 110, gpu_free + 5
            t.py("train.py(19): log_loss", sync_at - 5, sync_end - sync_at + 10)
            t.x("python_function", "<built-in method item of Tensor object at 0x7f3a>",
                sync_at - 2, sync_end - sync_at + 4)
            t.runtime("cudaStreamSynchronize", sync_at, sync_end - sync_at,
                      ("cuda_sync", "Stream Sync", gpu_free, 3,
                       {"cuda_sync_kind": "Stream Sync"}))
            at = sync_end + 250


def main():
    kind, out = sys.argv[1], sys.argv[2]
    t = Trace()
    if kind == "python":
        loop(t)
    elif kind == "memory":
        state = {"allocated": 300 << 20, "reserved": 512 << 20, "live": []}
        # held from before the trace: blocks given back in it, never seen taken
        before = [0x7f00_0000_0000 + i * (16 << 20) for i in range(4)]

        def blocks(t, s, k, ts):
            if k == 0 and s < len(before):  # a block taken before the trace, given back
                addr, size = before[s], 16 << 20
            elif k == 2 and state["live"]:
                addr, size = state["live"].pop(0)
                size = -size
            else:
                size = (4 << 20) * (1 + (s % 3)) + k * 4096
                addr = 0x7e00_0000_0000 + (s * 8 + k) * (32 << 20)
                state["live"].append((addr, size))
            if k == 0 and s < len(before):
                size = -size
            state["allocated"] += size
            state["reserved"] = max(state["reserved"], state["allocated"] + (64 << 20))
            t.instant("[memory]", ts, {"Addr": addr, "Bytes": size,
                                       "Total Allocated": state["allocated"],
                                       "Total Reserved": state["reserved"],
                                       "Device Id": DEVICE, "Device Type": 1})
            # the host's blocks (pinned staging, CPU tensors): not device memory
            t.instant("[memory]", ts + 1, {"Addr": 0x5500_0000 + s, "Bytes": 1 << 30,
                                           "Total Allocated": (1 << 30) * (s + 1),
                                           "Total Reserved": 0, "Device Id": -1,
                                           "Device Type": 0})
        loop(t, blocks)
    else:
        sys.exit("usage: make_fixture.py python|memory OUT.json")
    t.write(out)


main()
