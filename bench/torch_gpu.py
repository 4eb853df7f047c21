# SPDX-License-Identifier: Apache-2.0
"""torch_gpu: the real-GPU check of the torch allocator series (TORCH lines), for a machine with
an NVIDIA GPU and PyTorch. Its truth is what torch itself says, printed beside each checkpoint:
qprof's torch figures must equal it, and its GPU figure (the driver's) must lie above reserved.
  qprof run --gpu nvml -o torch.dat -- python3 bench/torch_gpu.py
"""
import sys
import time

import torch  # before qprof_mark's first call, so that its checkpoints carry torch's figures

from qprof_mark import mark, stage


def say(label):
    d = torch.cuda.current_device()
    print(f"torch_gpu: {label}: allocated {torch.cuda.memory_allocated(d)} reserved "
          f"{torch.cuda.memory_reserved(d)}", file=sys.stderr)


torch.cuda.init()
x = torch.zeros(1, device="cuda")
mark("Context")
say("Context")
time.sleep(0.5)
with stage("Hold"):
    big = torch.ones(256 << 20, device="cuda")  # 1 GiB of float32
    torch.cuda.synchronize()
    mark("1 GiB tensor")
    say("1 GiB tensor")
    time.sleep(1.0)
    del big
    mark("Freed, cached")
    say("Freed, cached")
    time.sleep(0.5)
torch.cuda.empty_cache()
mark("Cache emptied")
say("Cache emptied")
time.sleep(0.5)
