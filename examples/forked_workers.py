#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A parent that holds a model and forks workers that read it: the shape of a data loader or of
calibration workers (standard library only).

The parent touches MODEL MiB (default 200), then forks WORKERS processes (default 4); each reads
the whole model and touches OWN MiB of its own (default 50), holds it for a second and exits.
The memory the job needs is about MODEL + WORKERS x OWN (400 MiB with the defaults), while the sum
of the processes' RSS counts the model once per process (about 1.2 GiB).

    qprof run -- /usr/bin/python3 examples/forked_workers.py [MODEL_MIB [WORKERS [OWN_MIB]]]
"""
import os
import sys
import time

MIB = 1 << 20


def mark(label):
    print(f"QPROF_MARK: {label}", file=sys.stderr, flush=True)


def main():
    model_mib = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    own_mib = int(sys.argv[3]) if len(sys.argv) > 3 else 50

    mark("Load Start")
    model = bytearray(b"\x01") * (model_mib * MIB)  # every page written
    mark("Load End")

    mark("Workers Start")
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            seen = model.count(b"\x01")  # reads every page of the model, writes none
            own = bytearray(b"\x02") * (own_mib * MIB)
            time.sleep(1.0)
            os._exit(0 if seen == len(model) and own[0] == 2 else 1)
        children.append(pid)
    failed = 0
    for pid in children:
        _, status = os.waitpid(pid, 0)
        failed += status != 0
    mark("Workers End")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
