# SPDX-License-Identifier: Apache-2.0
"""A two-rank DistributedDataParallel job (gloo, CPU) under torchrun: rank r holds (r + 1) × MIB
MiB beyond its model during the stage "Train", all ranks at the same time (between barriers).

    torchrun --nproc_per_node=2 --no_python qprof run -o 'job.%h.%r.dat' -- python3 ddp_ranks.py MIB
"""
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

MIB = 1024 * 1024


def mark(label):
    print(f"QPROF_MARK: {label}", file=sys.stderr, flush=True)


def touch(mib):
    block = bytearray(mib * MIB)
    for i in range(0, len(block), 4096):
        block[i] = 1
    return block


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    model = DistributedDataParallel(torch.nn.Linear(256, 256))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    dist.barrier()
    mark("Train Start")
    held = touch((rank + 1) * mib)
    for _ in range(5):
        optimizer.zero_grad()
        model(torch.randn(32, 256)).sum().backward()
        optimizer.step()
    dist.barrier()
    time.sleep(1.0)
    dist.barrier()
    mark("Train End")
    del held
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
