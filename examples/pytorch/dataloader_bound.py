"""dataloader_bound: planted waste = the input pipeline. Expected finding: input_pipeline.

Every sample goes through a slow CPU transform ("decode": --sample-ms of CPU work, then a
random crop and flip; uint8 out, normalized on the device), and the DataLoader runs it in the training process
(num_workers=0), so the GPU waits while each batch is built: long stretches with no CUDA
call, which gpuwatch counts as input-pipeline idle.

--fixed applies the advice: DataLoader(num_workers=N, pin_memory=True,
persistent_workers=True, prefetch_factor=4) and .to(device, non_blocking=True).
"""
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import StepTimer, info, parse_args


class SlowImages(torch.utils.data.Dataset):
    def __init__(self, n, size, sample_ms):
        self.n, self.size, self.sample_ms = n, size, sample_ms

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        end = time.perf_counter() + self.sample_ms / 1e3
        while time.perf_counter() < end:  # "decode": CPU work holding the interpreter
            pass
        img = torch.randint(0, 256, (3, self.size + 8, self.size + 8), dtype=torch.uint8, generator=g)
        y, x = torch.randint(0, 9, (2,), generator=g).tolist()
        img = img[:, y:y + self.size, x:x + self.size]
        if i % 2:
            img = img.flip(2)
        return img.contiguous(), i % 10


def model(width):
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))
    return nn.Sequential(block(3, width), block(width, 2 * width), block(2 * width, 4 * width),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4 * width, 10))


def extra(p):
    p.add_argument("--batch", type=int, default=None, help="batch size (default 128; cpu 16)")
    p.add_argument("--sample-ms", type=float, default=0.25, help="CPU cost of one sample")
    p.add_argument("--workers", type=int, default=None,
                   help="--fixed workers (default max(1, min(8, cpus - 1)))")


def main():
    args = parse_args(__doc__, steps=150, warmup=15, extra=extra)
    batch = args.batch or (128 if args.cuda else 16)
    size, width = (128, 64) if args.cuda else (32, 8)
    data = SlowImages(args.steps * batch, size, args.sample_ms)
    if args.fixed:
        workers = args.workers or max(1, min(8, (os.cpu_count() or 2) - 1))
        loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True, num_workers=workers,
                                             pin_memory=args.cuda, persistent_workers=True,
                                             prefetch_factor=4, drop_last=True)
    else:
        workers = 0
        loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True, drop_last=True)
    info(f"dataloader_bound: batch={batch} sample_ms={args.sample_ms} num_workers={workers} "
         f"pin_memory={loader.pin_memory}")

    net = model(width).to(args.device)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    batches = iter(loader)
    timer = StepTimer(args)
    for step in timer:
        x, y = next(batches)
        x = (x.to(args.device, non_blocking=args.fixed).float() / 255 - 0.5) / 0.25
        y = y.to(args.device, non_blocking=args.fixed)
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    info(f"dataloader_bound: final loss {loss.item():.4f}")
    timer.report()


if __name__ == "__main__":
    main()
