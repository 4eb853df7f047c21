#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""What PSS readings cost on a tree whose sharing never rests, two qprof builds side by side.

    bench/pss_sharing_cost.py QPROF_A QPROF_B SHARED_FLUX [ROUNDS]

SHARED_FLUX is tests/workloads/shared_flux (built with the tests): 3 readers map and drop a
100 MiB buffer the parent holds every 10-20 ms, for 6 s; the truth is 100 MiB at every moment.
Beside it `sh` and 32 sleepers (a still tree). Each round runs both builds in turn with
--cgroup off; qprof's own CPU is the sum of its threads' schedstat, polled until it exits.
Prints, per workload and build: the median CPU, and each run's CPU, PSS lines and peak PSS.
"""
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time


def own_cpu_ns(pid):
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            total += int(open(path).read().split()[0])
        except (OSError, IndexError, ValueError):
            pass  # a thread that ended between the listing and the read
    return total


def main():
    a, b, flux = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    work = tempfile.mkdtemp(prefix="qprof-pss-sharing-")
    jobs = {"shared_flux": [flux, "100", "3", "6", "10"],
            "sleepers": ["sh", "-c", "for i in $(seq 32); do sleep 6 & done; wait"]}
    runs = {}
    for name, job in jobs.items():
        for _ in range(rounds):
            for label, qprof in (("A", a), ("B", b)):
                trace = os.path.join(work, f"{label}.dat")
                p = subprocess.Popen([qprof, "run", "-q", "--cgroup", "off", "-o", trace, "--"] + job)
                cpu = 0
                while p.poll() is None:
                    cpu = max(cpu, own_cpu_ns(p.pid))
                    time.sleep(0.02)
                pss = [float(l.split()[2]) for l in open(trace) if l.startswith("PSS ")]
                runs.setdefault((name, label), []).append((cpu / 1e9, len(pss), max(pss, default=0) / 2**20))
    for (name, label), v in sorted(runs.items()):
        each = ", ".join(f"{c:.3f} s / {n} lines / {pk:.1f} MiB" for c, n, pk in v)
        print(f"{name} {label}: qprof CPU median {statistics.median(c for c, _, _ in v):.3f} s ({each})")


if __name__ == "__main__":
    main()
