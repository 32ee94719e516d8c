"""leak: planted waste = memory held grows every step. Expected finding: leak.

The loop keeps every step's logits (to compute metrics "later") and every loss tensor in
Python lists. The logits are 512 x 16384 floats (32 MiB) still attached to the autograd
graph, so nothing is ever given back: the caching allocator asks the driver for another
segment each step, and the process would run out of memory after some thousands of steps.

--fixed applies the advice: keep loss.detach() (a GPU scalar with no graph), read it with
.item() and clear the list every --log-every (50) steps; metrics are reduced on the GPU to a
scalar per step (detached) instead of keeping the logits.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import StepTimer, info, parse_args


def extra(p):
    p.add_argument("--log-every", type=int, default=50, help="--fixed: steps between reads")


def main():
    args = parse_args(__doc__, steps=150, warmup=15, extra=extra)
    batch, features, hidden, classes = (512, 1024, 2048, 16384) if args.cuda else (16, 32, 64, 256)
    net = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, classes)).to(args.device)
    opt = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(batch, features, device=args.device)
    y = torch.randint(0, classes, (batch,), device=args.device)
    info(f"leak: logits {batch}x{classes} float32 ({batch * classes * 4 >> 20} MiB) a step, "
         f"{'detached scalars, cleared every ' + str(args.log_every) + ' steps' if args.fixed else 'all kept'}")

    losses, outputs = [], []
    timer = StepTimer(args)
    for step in timer:
        logits = net(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if args.fixed:
            losses.append(loss.detach())
            outputs.append((logits.detach().argmax(1) == y).float().mean())
            if (step + 1) % args.log_every == 0:
                info(f"step {step + 1} loss {torch.stack(losses).mean().item():.4f} "
                     f"acc {torch.stack(outputs).mean().item():.3f}")
                losses.clear()
                outputs.clear()
        else:
            losses.append(loss)     # the tensor, not loss.item()
            outputs.append(logits)  # graph and all
    if args.cuda:
        info(f"leak: memory_allocated={torch.cuda.memory_allocated(args.device) >> 20} MiB "
             f"memory_reserved={torch.cuda.memory_reserved(args.device) >> 20} MiB")
    timer.report()


if __name__ == "__main__":
    main()
