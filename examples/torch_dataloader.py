#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small real PyTorch training loop whose data loader runs in worker processes.

    qprof run -M --metric all -o train.dat -- python3 examples/torch_dataloader.py

torch.utils.data.DataLoader(num_workers=2) forks two workers per epoch; each builds batches of
synthetic images and hands them to the trainer through shared memory. A profiler that watches one
process sees only the trainer. qprof follows the tree: -M shows each worker, PSS charges the
pages the workers share with the trainer (the forked interpreter and torch's libraries) once
instead of once per process, and the batches in flight are shared memory. Each epoch is a stage
("Epoch 1", ...), marked through qprof's marker helper when it can be imported, on stderr
otherwise. CPU only; Debian's python3-torch is enough.
"""
import argparse
import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


def _marker():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.append(os.path.join(here, os.pardir, "python"))
    try:
        import qprof_mark
    except ImportError:
        return lambda label: print(f"QPROF_MARK: {label}", file=sys.stderr, flush=True)
    return qprof_mark.mark


mark = _marker()


class SyntheticImages(Dataset):
    """`count` images of 3×size×size floats, made on demand from their index (so reproducible)."""

    def __init__(self, count, size):
        self.count, self.size = count, size

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        image = torch.rand(3, self.size, self.size, generator=g)
        return image, i % 10


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--image", type=int, default=64, help="image side in pixels")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    data = DataLoader(SyntheticImages(args.samples, args.image), batch_size=args.batch, num_workers=args.workers)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(8), nn.Flatten(), nn.Linear(16 * 64, 10)
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_of = nn.CrossEntropyLoss()
    for epoch in range(1, args.epochs + 1):
        mark(f"Epoch {epoch} Start")
        total = 0.0
        for images, labels in data:
            optimizer.zero_grad()
            loss = loss_of(model(images), labels)
            loss.backward()
            optimizer.step()
            total += loss.item()
        mark(f"Epoch {epoch} End")
        print(f"epoch {epoch}: mean loss {total / len(data):.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()
