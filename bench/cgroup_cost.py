# SPDX-License-Identifier: Apache-2.0
"""cgroup_cost: qprof's own CPU with --cgroup against without, on 512 sleeping processes at the
default 10 ms, in alternating rounds (for bench/RESULTS.md). Needs root and a memory cgroup
qprof can create (cgroup v1 with memory.use_hierarchy 1, or v2).
  /usr/bin/python3 bench/cgroup_cost.py QPROF [BASELINE_QPROF] [--rounds N] [--seconds S]
Each run: `qprof run [--cgroup] -- sh` and 511 sleeping children (overhead.workload); the figure
is qprof's own CPU from its whole summary's (`-v`) `overhead` line (its children not counted).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

from overhead import fmt_range, workload
from qprof_summary import own_cpu


def run(qprof, cgroup, seconds, out):
    argv = [qprof, "run", "-v"] + (["--cgroup"] if cgroup else []) + ["-o", out, "--"] + workload(512, seconds)
    err = subprocess.run(argv, capture_output=True, text=True, check=True).stderr
    # The footprint comes from the tree's own cgroup only where --cgroup made one.
    if cgroup and not re.search(r"as its own\s+cgroup counts it", err):
        # The reason last: run_all.sh quotes the last line.
        sys.exit(err + "\n--cgroup gave no cgroup charge here (it needs root and a memory cgroup)")
    cost = own_cpu(err)
    if cost is None:
        sys.exit(err + "\nno overhead line in qprof's summary")
    return cost


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qprof")
    ap.add_argument("baseline", nargs="?")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=12)
    a = ap.parse_args()
    if a.rounds < 1 or a.seconds < 1:
        sys.exit("--rounds and --seconds: 1 or more")
    cases = [("without --cgroup", a.qprof, False), ("--cgroup", a.qprof, True)]
    if a.baseline:
        cases.append(("--cgroup, baseline", a.baseline, True))
    cpu = {name: [] for name, _, _ in cases}
    share = {name: [] for name, _, _ in cases}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.rounds):
            for name, qprof, cgroup in cases:
                seconds, percent = run(os.path.realpath(qprof), cgroup, a.seconds, os.path.join(tmp, "t.dat"))
                cpu[name].append(seconds)
                share[name].append(percent)
    base = statistics.median(cpu[cases[0][0]])
    print(f"`sh` and 511 sleeping processes for {a.seconds} s at 10 ms, {a.rounds} alternating rounds, "
          f"{os.cpu_count()} CPUs\n")
    print("| qprof | own CPU, median (min–max) | % of one core (median) | against without --cgroup |")
    print("| --- | ---: | ---: | ---: |")
    for name, _, _ in cases:
        ratio = f"{statistics.median(cpu[name]) / base:.2f}×" if base > 0 else "–"
        print(f"| {name} | {fmt_range(cpu[name], 1, 's', 3)} | {statistics.median(share[name]):.1f} | {ratio} |")


main()
