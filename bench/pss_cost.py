#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""What PSS by default costs: qprof's own CPU, and the profiled job's time.

    bench/pss_cost.py QPROF FAULT_HEAVY [ROUNDS]

1. qprof's CPU at the default interval on `sh` and 32 sleeping children, with PSS (the default)
   and with --no-pss, alternating within each round: the CPU time of all of qprof's threads
   (summed /proc/PID/task/*/schedstat, nanoseconds) from 2 s to 14 s into a 16 s run, as a share
   of one core. Goal: PSS adds at most 0.3 % of a core.
2. The job's slowdown: bench/fault_heavy.c, 4 workers of 8 threads that map, write and unmap
   96 MiB each (3 GiB at the peak), run alone, under `qprof run --no-pss` and under `qprof run`,
   alternating within each round: its own wall time. Goal: PSS costs the job at most 1 %.
   How often PSS was read: the trace's PSS lines.

Prints Markdown: medians of ROUNDS rounds (default 5), min–max in brackets.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from schedstat import process_cpu_ns

# qprof refuses a device as its trace (it would be lost): each run writes a file here instead.
WORK = tempfile.mkdtemp(prefix="qprof-pss-cost-")
TRACE = os.path.join(WORK, "run.dat")


def sampler_share(qprof, pss):
    """qprof's CPU share of one core over a steady window of a run on 32 sleepers."""
    job = "for i in $(seq 32); do sleep 16 & done; wait"
    args = [qprof, "run", "-q", "-o", TRACE] + ([] if pss else ["--no-pss"]) + ["--", "sh", "-c", job]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)
    a, ta = process_cpu_ns(p.pid), time.monotonic()
    time.sleep(12)
    b, tb = process_cpu_ns(p.pid), time.monotonic()
    if p.wait() != 0:
        raise RuntimeError(f"{' '.join(args)} exited with status {p.returncode}")
    return (b - a) / 1e9 / (tb - ta)


def job_seconds(qprof, fault_heavy, mode):
    job = [fault_heavy, "4", "8", "96", "2"]
    if mode == "alone":
        r = subprocess.run(job, capture_output=True, text=True, check=True)
        return float(r.stdout.split()[0]), None
    extra = ["--no-pss"] if mode == "no-pss" else []
    r = subprocess.run([qprof, "run", "-o", TRACE] + extra + ["--"] + job,
                       capture_output=True, text=True, check=True)
    # The PSS passes are the trace's PSS lines (the short summary does not count them).
    with open(TRACE, encoding="utf-8", errors="replace") as f:
        passes = sum(1 for line in f if line.startswith("PSS "))
    return float(r.stdout.split()[0]), passes


def cell(values, fmt):
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})"


def main():
    if len(sys.argv) < 3:
        print("usage: bench/pss_cost.py QPROF FAULT_HEAVY [ROUNDS]", file=sys.stderr)
        return 2
    qprof, fault_heavy = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    share = {True: [], False: []}
    for _ in range(rounds):
        for pss in (True, False):
            share[pss].append(sampler_share(qprof, pss))
    times = {"alone": [], "no-pss": [], "pss": []}
    reads = []
    for _ in range(rounds):
        for mode in times:
            seconds, n = job_seconds(qprof, fault_heavy, mode)
            times[mode].append(seconds)
            if n is not None and mode == "pss":
                reads.append(n)
    pct = lambda v: f"{100 * v:.2f} %"
    added = [a - b for a, b in zip(share[True], share[False])]
    print("| `sh` + 32 sleepers, default interval | qprof's CPU, share of a core |\n| --- | ---: |")
    print(f"| PSS (the default) | {cell(share[True], pct)} |")
    print(f"| `--no-pss` | {cell(share[False], pct)} |")
    print(f"| added by PSS, round by round | {cell(added, pct)} |")
    print()
    secs = lambda v: f"{v:.2f} s"
    print("| fault_heavy 4 workers × 8 threads × 96 MiB | job's wall time | against alone |\n| --- | ---: | ---: |")
    base = statistics.median(times["alone"])
    for mode, name in (("alone", "alone"), ("no-pss", "`qprof run --no-pss`"), ("pss", "`qprof run` (PSS)")):
        print(f"| {name} | {cell(times[mode], secs)} | {100 * (statistics.median(times[mode]) / base - 1):+.1f} % |")
    slow = [p / n - 1 for p, n in zip(times["pss"], times["no-pss"])]
    print(f"\nPSS against `--no-pss`, round by round: {cell(slow, lambda v: f'{100 * v:+.1f} %')}; "
          f"PSS read {cell(reads, str) if reads else '?'} times a run.\n")
    shutil.rmtree(WORK, ignore_errors=True)
    with open(os.environ.get("PSS_COST_SUMMARY", os.devnull), "w") as f:
        # Then what bounds the measure: the job alone from round to round, the rounds' ratios, and
        # the ratio of the medians.
        alone = times["alone"]
        spread = (max(alone) - min(alone)) / statistics.median(alone)
        medians = statistics.median(times["pss"]) / statistics.median(times["no-pss"]) - 1
        f.write(f"{statistics.median(added):.6f} {statistics.median(slow):.6f} {spread:.6f} {min(slow):.6f} "
                f"{max(slow):.6f} {medians:.6f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
