#!/usr/bin/env python3
"""qprof's start-up at two git revisions, measured side by side.

Builds the `qprof` executable (Release, stripped, as `cmake --install` leaves it) at each
revision in a temporary worktree, then times, in alternating rounds so that the noise of a shared
machine falls on every side alike:
  - bare `true` (the floor: what starting any program costs here),
  - `qprof run -q -o FILE -- true` at each revision (FILE is the last round's trace: emptied),
  - `qprof run -q -- true` at each revision (a new trace of the default name, in a folder emptied
    between rounds, outside the timing),
  - `qprof peak SMALL_TRACE` at each revision (start-up, option parsing, a 580-byte trace read).
Prints a Markdown table of medians with quartiles, the median CPU time (user + system, wait4's,
the command's children included), and the shared libraries each binary loads.

    bench/startup_revisions.py BEFORE AFTER [--rounds 200]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import revisions


def libraries(binary):
    out = subprocess.run(["readelf", "-d", binary], check=True, capture_output=True, text=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def wall_and_cpu(argv, cwd=None):
    """Wall time, and the CPU time (user + system, from wait4) of the process and its children."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, argv)
    return elapsed, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=200)
    a = ap.parse_args()
    with revisions.builds((a.before, a.after), "Release", False, "qprof") as out:
        binaries = {}
        for rev, folder in out.items():  # stripped, as `cmake --install` leaves it
            binaries[rev] = os.path.join(folder, "qprof-stripped")
            subprocess.run(["strip", "-o", binaries[rev], os.path.join(folder, "qprof")], check=True)
        small = os.path.join(revisions.repo_root(), "tests", "data", "mprof", "func.dat")
        trace = os.path.join(folder, "true.dat")
        fresh = os.path.join(folder, "fresh")  # where default-named traces are made, and removed
        os.makedirs(fresh, exist_ok=True)
        cases = [("`true`", ["true"])]
        for rev, b in binaries.items():
            cases.append((f"`qprof run -o FILE -- true` at {rev}", [b, "run", "-q", "-o", trace, "--", "true"]))
        for rev, b in binaries.items():
            cases.append((f"`qprof run -- true` (new file) at {rev}", [b, "run", "-q", "--", "true"]))
        for rev, b in binaries.items():
            cases.append((f"`qprof peak SMALL_TRACE` at {rev}", [b, "peak", small]))
        times = {name: [] for name, _ in cases}
        cpus = {name: [] for name, _ in cases}
        for _ in range(a.rounds):
            for name, argv in cases:
                elapsed, cpu = wall_and_cpu(argv, cwd=fresh)
                times[name].append(elapsed)
                cpus[name].append(cpu)
                for f in os.listdir(fresh):
                    os.unlink(os.path.join(fresh, f))
        libs = {rev: libraries(b) for rev, b in binaries.items()}
        sizes = {rev: os.path.getsize(b) for rev, b in binaries.items()}
    bare = statistics.median(times["`true`"])
    print(f"| command ({a.rounds} alternating rounds) | median | quartiles | over bare `true` | CPU (median) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, _ in cases:
        q = statistics.quantiles(times[name], n=4)
        m = statistics.median(times[name])
        over = "" if name == "`true`" else f"+{(m - bare) * 1e3:.2f} ms"
        cpu = statistics.median(cpus[name])
        print(f"| {name} | {m * 1e3:.2f} ms | {q[0] * 1e3:.2f}–{q[2] * 1e3:.2f} | {over} | {cpu * 1e3:.2f} ms |")
    print()
    for rev in binaries:
        print(f"- {rev}: {sizes[rev] // 1024} KiB stripped, {len(libs[rev])} libraries: {', '.join(libs[rev])}")


if __name__ == "__main__":
    sys.exit(main())
