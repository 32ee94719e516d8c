"""launch_bound: planted waste = too many tiny kernels. Expected finding: launch_bound.

A deep stack of tiny blocks (Linear 64x64, LayerNorm, GELU, residual add) on a batch of 8:
every kernel takes a few microseconds on the GPU, less than Python and the driver take to
launch it, so the GPU idles between kernels while the host issues them (~700 launches a
step).

--fixed applies the advice: torch.compile(mode="reduce-overhead") — fused kernels replayed as
a CUDA graph. If compiling fails (no Triton, an unsupported Python), it falls back to
capturing the whole step in a CUDA graph by hand (torch.cuda.graph); on the CPU, to eager.
The path taken is printed ("fix=...").
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import StepTimer, info, parse_args


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc, self.norm = nn.Linear(width, width), nn.LayerNorm(width)

    def forward(self, x):
        return x + 0.1 * F.gelu(self.norm(self.fc(x)))


def extra(p):
    p.add_argument("--depth", type=int, default=64, help="tiny blocks (default 64)")


def graphed_step(net, opt, x, y):
    """The whole training step captured once in a CUDA graph; returns replay()."""
    def step():
        loss = F.mse_loss(net(x), y)
        loss.backward()
        opt.step()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up on a side stream, as capture requires
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)  # grads are then allocated from the graph's pool
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def main():
    args = parse_args(__doc__, steps=300, warmup=30, extra=extra)
    width, batch = 64, 8
    net = nn.Sequential(*[Block(width) for _ in range(args.depth)], nn.Linear(width, 1)).to(args.device)
    opt = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9, foreach=True)
    x = torch.randn(batch, width, device=args.device)
    y = torch.randn(batch, 1, device=args.device)

    def eager():
        loss = F.mse_loss(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    run, fix = eager, "none"
    if args.fixed:
        try:
            loss_fn = torch.compile(lambda: F.mse_loss(net(x), y), mode="reduce-overhead")

            def compiled():
                if hasattr(torch.compiler, "cudagraph_mark_step_begin"):
                    torch.compiler.cudagraph_mark_step_begin()
                loss = loss_fn()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            for _ in range(3):  # compiles here, so a failure falls back
                compiled()
            run, fix = compiled, "torch.compile(mode=reduce-overhead)"
        except Exception as e:  # noqa: BLE001 — any failure means: use the fallback
            info(f"launch_bound: torch.compile unavailable ({type(e).__name__}: {str(e)[:200]})")
            if hasattr(torch, "_dynamo"):
                torch._dynamo.reset()
            if args.cuda:
                run, fix = graphed_step(net, opt, x, y), "cuda_graph"
            else:
                fix = "eager (no CUDA graphs on the cpu)"
    info(f"launch_bound: depth={args.depth} width={width} batch={batch} fix={fix}")

    timer = StepTimer(args)
    for step in timer:
        run()
    info(f"launch_bound: final loss {F.mse_loss(net(x), y).item():.4f}")
    timer.report()


if __name__ == "__main__":
    main()
