"""per_step_sync: planted waste = synchronizations every step. Expected finding: sync_bubble.

The loop does what many training scripts do each step: a NaN guard on the loss
(`if not math.isfinite(loss.item())`), the gradient norm from clip_grad_norm_ logged with
.item(), and the loss printed. Each .item() copies a scalar to the host and waits for the GPU
to finish everything queued, so the queue runs dry three times a step: each time the GPU
idles while Python (the autograd engine, the optimizer, the next forward) issues the next
kernels, instead of the host queuing them while the GPU works.

--fixed applies the advice: loss and gradient norm are accumulated on the GPU
(running += loss.detach()), checked for NaN and printed every --log-every (50) steps.

The first version (one loss.item() a step on a depth-8, width-1024 MLP) was launch-bound
on an H100, not sync-bound: about 100 small kernels a step left the GPU idle half the
step with or without the sync, and the fix changed nothing. This one gives the GPU about
2 ms of matrix work a step in a few kernels, more than the host needs to issue them.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import StepTimer, info, parse_args


def extra(p):
    p.add_argument("--batch", type=int, default=None, help="batch size (default 1024; cpu 32)")
    p.add_argument("--log-every", type=int, default=50, help="--fixed: steps between logs")


def main():
    args = parse_args(__doc__, steps=300, warmup=30, extra=extra)
    width, depth = (2048, 4) if args.cuda else (64, 4)
    batch = args.batch or (1024 if args.cuda else 32)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU()]
    net = nn.Sequential(*layers, nn.Linear(width, 10)).to(args.device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    x = torch.randn(batch, width, device=args.device)
    y = torch.randint(0, 10, (batch,), device=args.device)
    info(f"per_step_sync: batch={batch} width={width} depth={depth}, "
         f"{'NaN check and log every ' + str(args.log_every) + ' steps' if args.fixed else 'NaN check, grad-norm log and print every step (3 x .item())'}")

    running_loss = torch.zeros((), device=args.device)
    running_norm = torch.zeros((), device=args.device)
    skipped = 0
    timer = StepTimer(args)
    for step in timer:
        loss = F.cross_entropy(net(x), y)
        if not args.fixed and not math.isfinite(loss.item()):
            skipped += 1
            continue
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        if args.fixed:
            opt.step()
            running_loss += loss.detach()
            running_norm += norm
            if (step + 1) % args.log_every == 0:
                mean_loss = running_loss.item() / args.log_every
                if not math.isfinite(mean_loss):
                    skipped += 1
                print(f"step {step + 1} loss {mean_loss:.4f} "
                      f"grad_norm {running_norm.item() / args.log_every:.3f}", flush=True)
                running_loss.zero_()
                running_norm.zero_()
        else:
            grad_norm = norm.item()
            opt.step()
            print(f"step {step + 1} loss {loss.item():.4f} grad_norm {grad_norm:.3f}", flush=True)
    info(f"per_step_sync: skipped {skipped} non-finite steps")
    timer.report()


if __name__ == "__main__":
    main()
