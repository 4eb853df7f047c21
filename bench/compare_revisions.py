#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-sample cost of the sampler at two git revisions, measured side by side.

Builds the Google Benchmark target `qprof_bench` at each revision (in temporary worktrees),
then runs the two binaries alternately, several rounds, and prints a Markdown table of the
medians. Alternating rounds spreads the noise of a shared machine over both sides.

    bench/compare_revisions.py BEFORE AFTER [--rounds 7] [--filter BM_SampleTree]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import revisions


def run(binary, flt):
    res = subprocess.run([binary, "--benchmark_filter=" + flt, "--benchmark_format=json",
                          "--benchmark_min_time=0.2"], check=True, capture_output=True, text=True)
    to_us = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    return {b["name"]: b["cpu_time"] * to_us[b["time_unit"]] for b in json.loads(res.stdout)["benchmarks"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--filter", default="BM_SampleTree")
    a = ap.parse_args()
    with revisions.builds((a.before, a.after), "RelWithDebInfo", True, "qprof_bench") as out:
        sides = {rev: os.path.join(folder, "bench", "qprof_bench") for rev, folder in out.items()}
        times = {rev: {} for rev in sides}
        for _ in range(a.rounds):
            for rev, binary in sides.items():
                for name, t in run(binary, a.filter).items():
                    times[rev].setdefault(name, []).append(t)
    names = list(times[a.before])
    print(f"| benchmark (CPU time, median of {a.rounds}) | {a.before} | {a.after} | after / before |")
    print("| --- | ---: | ---: | ---: |")
    for n in names:
        b = statistics.median(times[a.before][n])
        f = statistics.median(times[a.after].get(n, [float("nan")]))
        print(f"| {n} | {b:.2f} µs | {f:.2f} µs | {f / b:.3f} |")


if __name__ == "__main__":
    sys.exit(main())
