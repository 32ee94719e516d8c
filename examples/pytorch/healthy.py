"""healthy: a well-configured training loop, the baseline. Expected finding: none
("No findings").

A small CNN on 64x64 images with enough work per step to keep the GPU busy (batch 256). The
images come from a DataLoader with workers, pinned memory and prefetching, are copied with
non_blocking=True and normalized on the GPU; the loss is accumulated on the GPU and read every
50 steps; no tensor outlives its step. --fixed changes nothing (it is accepted so that
run_all.sh can treat every script alike).
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import StepTimer, info, parse_args


class Images(torch.utils.data.Dataset):
    """Images in host memory (as after decoding once and caching); the transform is cheap."""

    def __init__(self, distinct, length, size):
        self.images = torch.randint(0, 256, (distinct, 3, size, size), dtype=torch.uint8)
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        img = self.images[i % len(self.images)]
        return (img.flip(2) if i % 2 else img), i % 10


def model(width):
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True), nn.MaxPool2d(2))
    return nn.Sequential(block(3, width), block(width, 2 * width), block(2 * width, 4 * width),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4 * width, 10))


def main():
    args = parse_args(__doc__, steps=200, warmup=20)
    batch, size, width = (256, 64, 128) if args.cuda else (16, 32, 8)
    workers = max(1, min(8, (os.cpu_count() or 2) - 1))
    data = Images(4096 if args.cuda else 256, args.steps * batch, size)
    loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True, num_workers=workers, pin_memory=args.cuda, persistent_workers=True,
                                         prefetch_factor=4, drop_last=True)
    info(f"healthy: batch={batch} image={size}x{size} width={width} num_workers={workers} "
         f"pin_memory={loader.pin_memory}")
    net = model(width).to(args.device, memory_format=torch.channels_last)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    mean = torch.tensor([0.5, 0.5, 0.5], device=args.device).view(1, 3, 1, 1) * 255
    batches = iter(loader)
    running = torch.zeros((), device=args.device)
    timer = StepTimer(args)
    for step in timer:
        x, y = next(batches)
        x = x.to(args.device, non_blocking=True).float().sub_(mean).div_(64)
        x = x.contiguous(memory_format=torch.channels_last)
        y = y.to(args.device, non_blocking=True)
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running += loss.detach()
        if (step + 1) % 50 == 0:
            info(f"step {step + 1} loss {running.item() / 50:.4f}")
            running.zero_()
    timer.report()


if __name__ == "__main__":
    main()
