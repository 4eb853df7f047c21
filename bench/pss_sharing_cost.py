#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Σ PSS of a tree whose sharing never rests: what the readings cost and how near they come.

    bench/pss_sharing_cost.py [--rounds N] [--busy N] [--markdown] SHARED_FLUX LABEL=QPROF [LABEL=QPROF ...]

SHARED_FLUX is tests/workloads/shared_flux (built with the tests): 3 readers map and drop a
100 MiB buffer the parent holds every 10-20 ms, for 6 s; the truth is 100 MiB and the tree's few
own pages at every moment, once the parent has written the buffer. Beside it `sh` and 32 sleepers
(a still tree). Each round runs every build in turn with --cgroup off, on a quiet machine and
then with --busy loops (default: one per core) spinning beside it. qprof's own CPU is the sum of
its threads' schedstat, polled until it exits.

The readings counted are those from the first one within 5 % of the truth on (before it the
parent is still writing the buffer): how many read more than 5 % low, how many more than 3 MiB
high (the kernel's per-CPU lag of resident counts and the tree's own pages), and their range.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from schedstat import process_cpu_ns

TRUTH_MIB = 100.0
LOW_MIB = TRUTH_MIB * 0.95
HIGH_MIB = TRUTH_MIB + 3


def record(qprof, job, trace):
    """qprof's CPU (s) and the trace's PSS readings (MiB) for one run of `job`."""
    p = subprocess.Popen([qprof, "run", "-q", "--cgroup", "off", "-o", trace, "--"] + job,
                         stdout=subprocess.DEVNULL)
    cpu = 0
    while p.poll() is None:
        cpu = max(cpu, process_cpu_ns(p.pid))
        time.sleep(0.02)
    if p.returncode != 0:
        sys.exit(f"{qprof} run exited {p.returncode}")
    with open(trace) as f:
        return cpu / 1e9, [float(line.split()[2]) / 2**20 for line in f if line.startswith("PSS ")]


def steady(readings):
    """The readings from the first one within 5 % of the truth on."""
    for i, mib in enumerate(readings):
        if mib >= LOW_MIB:
            return readings[i:]
    return []


def spin(count):
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(count)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("flux")
    ap.add_argument("builds", nargs="+", metavar="LABEL=QPROF")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--busy", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--markdown", action="store_true", help="a table, as bench/run_all.sh writes it")
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.builds]
    if any(len(b) != 2 for b in builds):
        sys.exit("each build is LABEL=QPROF")
    work = tempfile.mkdtemp(prefix="qprof-pss-sharing-")
    jobs = {"shared_flux": [args.flux, "100", "3", "6", "10"],
            "sleepers": ["sh", "-c", "for i in $(seq 32); do sleep 6 & done; wait"]}
    loads = [("quiet", 0), (f"{args.busy} busy loops", args.busy)]
    runs = {}
    for load, busy in loads:
        for name, job in jobs.items():
            if name == "sleepers" and busy:
                continue  # a still tree's readings do not move: its cost is the quiet one's
            spinners = spin(busy)
            try:
                for _ in range(args.rounds):
                    for label, qprof in builds:
                        runs.setdefault((load, name, label), []).append(record(qprof, job, f"{work}/{label}.dat"))
            finally:
                for s in spinners:
                    s.kill()
                    s.wait()
    shutil.rmtree(work)
    if args.markdown:
        print("| load | tree | build | qprof CPU | PSS lines | counted | > 5 % low | > 3 MiB high | lowest | median | highest |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (load, name, label), v in runs.items():
        cpu = statistics.median(c for c, _ in v)
        lines = statistics.median(len(r) for _, r in v)
        if name == "shared_flux":
            counted = [mib for _, r in v for mib in steady(r)]
            low, high = sum(m < LOW_MIB for m in counted), sum(m > HIGH_MIB for m in counted)
            spread = (f"{min(counted):.1f} MiB", f"{statistics.median(counted):.1f} MiB",
                      f"{max(counted):.1f} MiB") if counted else ("-", "-", "-")
            accuracy = (str(len(counted)), str(low), str(high)) + spread
        else:
            accuracy = ("-",) * 6
        if args.markdown:
            print(f"| {load} | {name} | {label} | {cpu:.3f} s | {lines:g} | " + " | ".join(accuracy) + " |")
        else:
            each = ", ".join(f"{c:.3f} s / {len(r)} lines" for c, r in v)
            print(f"{load}, {name}, {label}: qprof CPU median {cpu:.3f} s ({each}); readings counted, low, high, "
                  f"lowest, median, highest: {', '.join(accuracy)}")


if __name__ == "__main__":
    main()
