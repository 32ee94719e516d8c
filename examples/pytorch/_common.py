"""Shared by the PyTorch examples: arguments, NVTX step ranges, and the step timer.

Every script takes --device (default cuda), --steps N, --warmup N and --fixed, and ends by
printing one line on stderr:

    step_time_ms=<mean steady-state step time> steps=<steady steps> variant=<planted|fixed>

The time is measured without adding a synchronization per step: one synchronize when the
warm-up ends, one after the last step, total / steps. (A median would need a sync per step,
which would itself change the loops whose waste is that they do not sync.)
"""
import argparse
import sys
import time

import torch


def parse_args(doc, steps=200, warmup=20, extra=None):
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (cpu: smoke test only)")
    p.add_argument("--steps", type=int, default=steps, help="training steps, warm-up included")
    p.add_argument("--warmup", type=int, default=warmup, help="steps left out of the timing")
    p.add_argument("--fixed", action="store_true", help="apply gpuwatch's advice")
    if extra:
        extra(p)
    args = p.parse_args()
    args.device = torch.device(args.device)
    args.cuda = args.device.type == "cuda"
    if args.cuda and not torch.cuda.is_available():
        sys.exit(f"{sys.argv[0]}: --device {args.device} but PyTorch sees no CUDA device "
                 "(use --device cpu for a smoke test)")
    args.warmup = max(0, min(args.warmup, args.steps // 4))
    args.variant = "fixed" if args.fixed else "planted"
    return args


def sync(args):
    if args.cuda:
        torch.cuda.synchronize(args.device)


def info(*parts):
    print(*parts, file=sys.stderr, flush=True)


class StepTimer:
    """for step in timer: ...; then timer.report(). On CUDA each step is an NVTX range
    "train_step" (gpuwatch takes its step boundaries from it); timed as described above."""

    def __init__(self, args):
        self.args = args

    def __iter__(self):
        nvtx = self.args.cuda
        t0 = time.perf_counter()
        for step in range(self.args.steps):
            if step == self.args.warmup:
                sync(self.args)
                t0 = time.perf_counter()
            if nvtx:
                torch.cuda.nvtx.range_push("train_step")
            yield step
            if nvtx:
                torch.cuda.nvtx.range_pop()
        sync(self.args)
        self.n = self.args.steps - self.args.warmup
        self.ms = (time.perf_counter() - t0) * 1e3 / max(self.n, 1)

    def report(self):
        """The last line a script prints."""
        info(f"step_time_ms={self.ms:.3f} steps={self.n} variant={self.args.variant}")
