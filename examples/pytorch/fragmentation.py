"""fragmentation: planted waste = out-of-memory retries of the caching allocator, from
variable shapes near a memory cap. Expected finding: oom_retry (--cap driver, the default)
or fragmentation (--cap fraction), with memory_headroom (near capacity) beside it.

Batches of variable-length sequences (8 x 25..100 % of the longest) go through an MLP stack,
so every step asks for activations of new sizes. PyTorch's caching allocator keeps freed
blocks for reuse, cut to the sizes of earlier steps; a larger request fits none of them, so it
asks the driver for more, and near the cap that fails: the allocator frees every cached block
(each cuMemFree waits for the GPU) and retries — a retry storm, most steps.

The cap leaves --budget-mb for PyTorch beyond what the model holds:
  --cap driver    the rest of the device is taken outside PyTorch (cuMemAlloc through ctypes,
                  as another library or process would), so the driver itself returns
                  CUDA_ERROR_OUT_OF_MEMORY and gpuwatch sees the OOM, the frees, the retry.
                  (CUDA_MODULE_LOADING=EAGER, so no kernel has to be loaded once it is full)
  --cap fraction  torch.cuda.set_per_process_memory_fraction: PyTorch checks the cap itself,
                  so the driver never fails; gpuwatch sees the free/alloc churn only.

--fixed applies the advice: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, set in
os.environ below before torch is imported (it is read when CUDA initializes). Without
--fixed the variable is removed, so the planted run uses the default allocator.
"""
import os
import sys

if "--fixed" in sys.argv[1:]:
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
else:
    os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
os.environ.pop("PYTORCH_ALLOC_CONF", None)  # the newer name would override the line above
if "fraction" not in sys.argv[1:] and "--cap=fraction" not in sys.argv[1:]:
    # With the device full, a kernel loaded lazily on first use would fail to load: load
    # every kernel up front, before the cap.
    os.environ["CUDA_MODULE_LOADING"] = "EAGER"

import ctypes  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from _common import StepTimer, info, parse_args  # noqa: E402

OOM = getattr(torch, "OutOfMemoryError", getattr(torch.cuda, "OutOfMemoryError", RuntimeError))


def extra(p):
    p.add_argument("--cap", choices=["driver", "fraction"], default="driver", help="how memory is capped")
    p.add_argument("--budget-mb", type=int, default=2048, help="memory left to PyTorch's activations")


def cap_memory(args, budget):
    """Leaves PyTorch `budget` bytes more than it holds now; returns how it was capped."""
    dev = args.device if args.device.index is not None else torch.device("cuda", torch.cuda.current_device())
    free, total = torch.cuda.mem_get_info(dev)
    if args.cap == "driver" and free > budget:
        libcuda = ctypes.CDLL("libcuda.so.1")
        ptr = ctypes.c_uint64()
        err = libcuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(free - budget))
        if err == 0:
            return f"driver: {(free - budget) >> 20} MiB taken outside PyTorch, {budget >> 20} MiB left"
        info(f"fragmentation: cuMemAlloc failed ({err}); capping with the memory fraction instead")
    frac = min(1.0, (torch.cuda.memory_reserved(dev) + budget) / total)
    torch.cuda.set_per_process_memory_fraction(frac, dev)
    return f"fraction {frac:.4f} of {total >> 20} MiB"


def main():
    args = parse_args(__doc__, steps=120, warmup=12, extra=extra)
    width, depth, batch = (1024, 4, 8) if args.cuda else (64, 2, 4)
    blocks = [nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
              for _ in range(depth)]
    net = nn.Sequential(*blocks, nn.Linear(width, 1)).to(args.device)
    opt = torch.optim.SGD(net.parameters(), lr=1e-4, momentum=0.9)

    def step(seq):
        x = torch.randn(batch, seq, width, device=args.device)
        loss = net(x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    # ~ bytes one token of the batch holds: saved activations (9 x width per block) and
    # the backward's transients; the longest batch fills ~80 % of the budget.
    budget = args.budget_mb << 20
    max_seq = int(0.8 * budget / (4 * (9 * depth + 12) * width) / batch) if args.cuda else 64
    for seq in (max_seq // 4, max_seq):  # optimizer state, cuBLAS handles: before the cap
        step(seq)
    if args.cuda:
        torch.cuda.empty_cache()
    how = cap_memory(args, budget) if args.cuda else "none (cpu)"
    info(f"fragmentation: batch={batch} seq {max_seq // 4}..{max_seq} width={width} depth={depth} "
         f"cap={how} PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')}")

    lengths = torch.randint(max_seq // 4, max_seq + 1, (args.steps,), generator=torch.Generator().manual_seed(0))
    failed = 0
    timer = StepTimer(args)
    for i in timer:
        try:
            step(int(lengths[i]))
        except OOM:  # even the retry failed: skip the batch, as a trainer would
            failed += 1
            opt.zero_grad(set_to_none=True)
    if args.cuda:
        stats = torch.cuda.memory_stats(args.device)
        info(f"fragmentation: num_alloc_retries={stats.get('num_alloc_retries', 0)} "
             f"num_ooms={stats.get('num_ooms', 0)} skipped_steps={failed} "
             f"peak_reserved_mib={stats.get('reserved_bytes.all.peak', 0) >> 20}")
    timer.report()


if __name__ == "__main__":
    main()
