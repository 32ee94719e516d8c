"""Python calls into the (simulated) driver for bench_pystacks.sh: --mode launch makes a
launch-heavy loop through ctypes.CDLL (the GIL released around each call, as PyTorch's
bindings do); --mode stack makes synchronizing calls holding the GIL (ctypes.PyDLL) at a
Python depth of --depth frames, each of which the shim reads a stack for. Prints the best
ns per call of --passes passes."""
import argparse
import ctypes
import time

PTX = (b".version 8.0\n.target sm_52\n.address_size 64\n"
       b".visible .entry tiny_100ns()\n{\n ret;\n}\n\0")


def setup(loader):
    lib = loader("libcuda.so.1")
    assert lib.cuInit(0) == 0
    dev, ctx, module, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    assert lib.cuModuleLoadData(ctypes.byref(module), PTX) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(fn), module, b"tiny_100ns") == 0
    return lib, fn


def launches(lib, fn, n):
    launch = lib.cuLaunchKernel
    for i in range(n):
        launch(fn, 1, 1, 1, 32, 1, 1, 0, None, None, None)
        if i % 1024 == 1023:
            lib.cuCtxSynchronize()


def syncs_at(depth, lib, n):
    if depth > 1:
        return syncs_at(depth - 1, lib, n)
    sync = lib.cuCtxSynchronize
    for _ in range(n):
        sync()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["launch", "stack"], default="launch")
    p.add_argument("--calls", type=int, default=200000)
    p.add_argument("--depth", type=int, default=16)
    p.add_argument("--passes", type=int, default=5)
    a = p.parse_args()
    lib, fn = setup(ctypes.CDLL if a.mode == "launch" else ctypes.PyDLL)
    best = None
    for _ in range(a.passes):
        t0 = time.perf_counter_ns()
        if a.mode == "launch":
            launches(lib, fn, a.calls)
        else:
            # (the frames of main and this module sit below: depth counts from here)
            syncs_at(max(1, a.depth - 2), lib, a.calls)
        ns = (time.perf_counter_ns() - t0) / a.calls
        best = ns if best is None else min(best, ns)
    print("ns_per_call %.1f" % best)


if __name__ == "__main__":
    main()
