"""A training-like loop that reaches the (simulated) CUDA driver through ctypes, for the
Python-lines tests: each waste sits on a line marked `# LINE:<name>`, which the tests look
up and expect the report to name. ctypes.CDLL releases the GIL around each call, as
PyTorch's bindings do; ctypes.PyDLL (--gil hold) keeps it."""
import argparse
import ctypes
import sys
import time

PTX = (b".version 8.0\n.target sm_52\n.address_size 64\n"
       b".visible .entry forward_1ms()\n{\n ret;\n}\n"
       b".visible .entry backward_2ms()\n{\n ret;\n}\n\0")


class Driver:
    def __init__(self, hold_gil):
        loader = ctypes.PyDLL if hold_gil else ctypes.CDLL
        self.lib = loader("libcuda.so.1")
        self.check(self.lib.cuInit(0))
        dev = ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), 0))
        ctx = ctypes.c_void_p()
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
        self.check(self.lib.cuCtxSetCurrent(ctx))
        module = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), PTX))
        self.kernels = []
        for name in (b"forward_1ms", b"backward_2ms"):
            fn = ctypes.c_void_p()
            self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), module, name))
            self.kernels.append(fn)
        self.stream = ctypes.c_void_p()
        self.check(self.lib.cuStreamCreate(ctypes.byref(self.stream), 0))

    @staticmethod
    def check(rc):
        if rc != 0:
            raise RuntimeError(f"driver call failed: {rc}")

    def alloc(self, nbytes):
        ptr = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(nbytes)))
        return ptr

    def launch(self, fn):
        self.check(self.lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, self.stream, None, None))


def forward_backward(drv):
    for fn in drv.kernels:
        drv.launch(fn)


def read_loss(drv, loss_ptr, out):
    """What loss.item() does: a 4-byte copy into pageable memory, which waits for the
    queue to drain, then a stream synchronize that finds it drained."""
    drv.check(drv.lib.cuMemcpyDtoHAsync_v2(ctypes.byref(out), loss_ptr, ctypes.c_size_t(4), drv.stream))  # LINE:sync
    drv.check(drv.lib.cuStreamSynchronize(drv.stream))


def retry_after_oom(drv, cached):
    """What PyTorch's caching allocator does when cudaMalloc fails: free its cached blocks
    and ask again."""
    big = ctypes.c_uint64()
    rc = drv.lib.cuMemAlloc_v2(ctypes.byref(big), ctypes.c_size_t(900 << 20))  # LINE:oom
    if rc == 0:
        cached.append(big)
        return
    while cached:
        drv.check(drv.lib.cuMemFree_v2(cached.pop()))
    drv.check(drv.lib.cuMemAlloc_v2(ctypes.byref(big), ctypes.c_size_t(900 << 20)))
    cached.append(big)


def load_batch(seconds):
    time.sleep(seconds)  # the host prepares the next batch, no driver calls


def batches(args):
    """A DataLoader with num_workers=0: each batch is built when the loop asks for it."""
    for _ in range(args.steps):
        load_batch(args.load_ms / 1000.0)
        yield


def train(args):
    drv = Driver(args.gil == "hold")
    loss_ptr = drv.alloc(4)
    batch = (ctypes.c_char * args.batch_bytes)()
    dbatch = drv.alloc(args.batch_bytes)
    out = ctypes.c_float()
    kept = []
    native = ctypes.CDLL(args.native_helper) if args.native_reads else None
    for step, _ in enumerate(batches(args)):  # LINE:loop
        # what batch.cuda(non_blocking=True) does from unpinned memory: the host stages it
        drv.check(drv.lib.cuMemcpyHtoDAsync_v2(dbatch, batch, ctypes.c_size_t(args.batch_bytes), drv.stream))  # LINE:h2d
        forward_backward(drv)
        if args.leak:
            ptr = ctypes.c_uint64()
            drv.check(drv.lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 20)))  # LINE:leak
            kept.append(ptr)
        if args.sync:
            read_loss(drv, loss_ptr, out)
        if args.oom and step % 10 == 9:
            retry_after_oom(drv, kept)
        if args.native_reads:
            drv.check(native.native_thread_reads(ctypes.c_uint64(loss_ptr.value), args.native_reads))
    drv.check(drv.lib.cuCtxSynchronize())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gil", choices=["hold", "release"], default="release")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--load-ms", type=float, default=0.0)
    p.add_argument("--batch-bytes", type=int, default=16 << 20)
    p.add_argument("--sync", type=int, default=1)
    p.add_argument("--leak", type=int, default=0)
    p.add_argument("--oom", type=int, default=0,
                   help="every 10th step, a large allocation that fails, frees and retries")
    p.add_argument("--native-reads", type=int, default=0,
                   help="reads per step on a thread that never ran Python")
    p.add_argument("--native-helper", default="libnative_sync.so")
    train(p.parse_args())
    return 0


if __name__ == "__main__":
    sys.exit(main())
