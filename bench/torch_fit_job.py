# SPDX-License-Identifier: Apache-2.0
"""torch_fit_job: a PyTorch job whose device-memory need is known by construction, for
`qprof fit --gpu` on a real GPU (bench/gpu_fit_real.sh). Each of PROCS processes makes its CUDA
context, holds it alone for a moment (the context's size is the GPU sampler's first reading),
then allocates and touches N_GIB GiB in one tensor and holds it for HOLD_S seconds. Under a
per-process limit below context + N_GIB GiB the allocation fails with torch.OutOfMemoryError.
No matmul and no cuBLAS: nothing else allocates on the device.
  python3 bench/torch_fit_job.py N_GIB [PROCS [HOLD_S]]
"""
import subprocess
import sys
import time

import torch  # before qprof_mark's first call, so that its checkpoints carry torch's figures

from qprof_mark import mark


def client(n_gib, hold_s):
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # the context
    torch.cuda.synchronize()
    mark("Context")
    time.sleep(1.0)
    big = torch.empty(n_gib << 30, dtype=torch.uint8, device="cuda")
    big.fill_(1)
    torch.cuda.synchronize()
    mark("Peak")
    time.sleep(hold_s)
    del big
    return 0


def main():
    n_gib = int(sys.argv[1])
    procs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    hold_s = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
    if procs > 1 and "--client" not in sys.argv:
        # Separate processes, each its own CUDA context (and its own MPS client).
        others = [subprocess.Popen([sys.executable, __file__, str(n_gib), "1", str(hold_s), "--client"])
                  for _ in range(procs - 1)]
        status = client(n_gib, hold_s)
        for p in others:
            status = max(status, p.wait())
        return status
    return client(n_gib, hold_s)


if __name__ == "__main__":
    sys.exit(main())
