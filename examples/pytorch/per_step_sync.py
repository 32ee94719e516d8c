"""per_step_sync: planted waste = a synchronization every step. Expected finding: sync_bubble.

The loop logs loss.item() and prints it every step. .item() copies the scalar to the host
and waits for the GPU to finish everything queued, so the queue runs dry every step: the GPU
then idles while Python issues the next step's kernels. The batch is already on the GPU, so
nothing else is waiting.

--fixed applies the advice: the loss is accumulated on the GPU (running += loss.detach()) and
read back and printed every --log-every (50) steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import StepTimer, info, parse_args


def extra(p):
    p.add_argument("--batch", type=int, default=None, help="batch size (default 1024; cpu 32)")
    p.add_argument("--log-every", type=int, default=50, help="--fixed: steps between logs")


def main():
    args = parse_args(__doc__, steps=300, warmup=30, extra=extra)
    # GPU time per step a little above the host's issue time: without the sync the host
    # stays ahead and the GPU never waits; with it, every step starts from an empty queue.
    width, depth = (1024, 8) if args.cuda else (64, 8)
    batch = args.batch or (1024 if args.cuda else 32)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.LayerNorm(width), nn.GELU()]
    net = nn.Sequential(*layers, nn.Linear(width, 10)).to(args.device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    x = torch.randn(batch, width, device=args.device)
    y = torch.randint(0, 10, (batch,), device=args.device)
    info(f"per_step_sync: batch={batch} width={width} depth={depth}, "
         f"{'log every ' + str(args.log_every) + ' steps' if args.fixed else 'loss.item() + print every step'}")

    running = torch.zeros((), device=args.device)
    timer = StepTimer(args)
    for step in timer:
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if args.fixed:
            running += loss.detach()
            if (step + 1) % args.log_every == 0:
                print(f"step {step + 1} loss {running.item() / args.log_every:.4f}", flush=True)
                running.zero_()
        else:
            print(f"step {step + 1} loss {loss.item():.4f}", flush=True)
    timer.report()


if __name__ == "__main__":
    main()
