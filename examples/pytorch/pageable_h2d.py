"""pageable_h2d: planted waste = large blocking copies from pageable host memory.
Expected finding: pageable_h2d.

Each step copies a large batch (--batch-mb, 256 MiB by default) that lives in ordinary
(pageable) host memory with a plain .cuda(): the driver stages it through a pinned bounce
buffer while the host waits and the GPU computes nothing. The model is cheap next to the
copy, as in a wide-input regression over precomputed features. The host batches are built
once and reused in turn, so building them costs nothing per step.

--fixed applies the advice: the host batches are in pinned memory (.pin_memory(), what
DataLoader(pin_memory=True) gives) and copied with .to(device, non_blocking=True).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import StepTimer, info, parse_args

FEATURES = 2048
POOL = 3  # host batches, used in turn


def extra(p):
    p.add_argument("--batch-mb", type=int, default=None, help="batch size in MiB (default 256; cpu 4)")


def main():
    args = parse_args(__doc__, steps=200, warmup=20, extra=extra)
    mb = args.batch_mb or (256 if args.cuda else 4)
    rows = mb * 2**20 // (4 * FEATURES)
    host = [torch.randn(rows, FEATURES) for _ in range(POOL)]
    targets = [torch.randn(rows, 1) for _ in range(POOL)]
    if args.fixed and args.cuda:
        host = [t.pin_memory() for t in host]
        targets = [t.pin_memory() for t in targets]
    info(f"pageable_h2d: batch {rows}x{FEATURES} float32 ({mb} MiB), "
         f"pinned={host[0].is_pinned()}, non_blocking={args.fixed}")

    net = nn.Sequential(nn.Linear(FEATURES, 256), nn.ReLU(), nn.Linear(256, 1)).to(args.device)
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    timer = StepTimer(args)
    for step in timer:
        if args.fixed:
            x = host[step % POOL].to(args.device, non_blocking=True)
            y = targets[step % POOL].to(args.device, non_blocking=True)
        elif args.cuda:
            x = host[step % POOL].cuda(args.device)
            y = targets[step % POOL].cuda(args.device)
        else:
            x, y = host[step % POOL].to(args.device), targets[step % POOL].to(args.device)
        loss = F.mse_loss(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    info(f"pageable_h2d: final loss {loss.item():.4f}")
    timer.report()


if __name__ == "__main__":
    main()
