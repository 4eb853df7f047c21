#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gpu_startup: what opening a GPU backend adds to `qprof run`'s start and end, on a machine with
a GPU (for bench/RESULTS.md). Alternating rounds of:
  - bare `true` (the floor),
  - `qprof run -q --gpu none -o FILE -- true`,
  - `qprof run -q -o FILE -- true` (the default, --gpu auto),
each timed whole (wall, and CPU from wait4), and the delay from starting qprof to the command's
start: the command is `date +%s.%N`, whose clock is compared with ours just before the start
(bare `date` gives the floor: Python's spawn and date's own start).
With several QPROF binaries (two revisions), each one's cases in the same alternating rounds.

    bench/gpu_startup.py QPROF... [--rounds 30]
"""
import argparse
import os
import subprocess
import tempfile
import time

import alternating


def delay_to_command(argv):
    """Seconds from just before qprof starts to the start of its command (date's own clock)."""
    t = time.time()
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.split()
    return float(out[-1]) - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("qprof", nargs="+")
    ap.add_argument("--rounds", type=int, default=30)
    a = ap.parse_args()
    if a.rounds < 2:
        ap.error("--rounds: at least 2 (quartiles)")
    binaries = [os.path.realpath(q) for q in a.qprof]
    given = dict(zip(binaries, a.qprof))
    name = (lambda q: f" ({given[q]})") if len(binaries) > 1 else (lambda q: "")
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "t.dat")
        cases = [("`true`", ["true"])]
        for q in binaries:
            cases += [(f"`qprof run --gpu none -- true`{name(q)}", [q, "run", "-q", "--gpu", "none", "-o", trace, "--", "true"]),
                      (f"`qprof run -- true` (--gpu auto){name(q)}", [q, "run", "-q", "-o", trace, "--", "true"])]
        walls, cpus = alternating.alternate(cases, a.rounds)
        print(alternating.table(walls, cpus, "whole run", "`true`"))
        date = ["date", "+%s.%N"]
        commands = {"bare `date` (the floor)": date}
        for q in binaries:
            for gpu in ("none", "auto"):
                commands[f"--gpu {gpu}{name(q)}"] = [q, "run", "-q", "--gpu", gpu, "-o", trace, "--", *date]
        delays = {k: [] for k in commands}
        for _ in range(a.rounds):
            for k, argv in commands.items():
                delays[k].append(delay_to_command(argv))
        print("\n| case | from qprof's start to its command's, median (quartiles) |\n| --- | ---: |")
        for k, v in delays.items():
            m, q1, q3 = alternating.median_quartiles(v)
            print(f"| {k} | {m * 1e3:.2f} ms ({q1 * 1e3:.2f}–{q3 * 1e3:.2f}) |")

main()
