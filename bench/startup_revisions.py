#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""qprof's start-up at two git revisions, measured side by side.

Builds the `qprof` executable (Release, stripped, as `cmake --install` leaves it) at each
revision in a temporary worktree, then times, in alternating rounds so that the noise of a shared
machine falls on every side alike:
  - bare `true` (the floor: what starting any program costs here),
  - `qprof run -q -o FILE -- true` at each revision (FILE is the last round's trace: emptied),
  - `qprof run -q -- true` at each revision (a new trace of the default name, in a folder emptied
    between rounds, outside the timing),
  - `qprof peak SMALL_TRACE` at each revision (start-up, option parsing, a 580-byte trace read).
Prints a Markdown table of medians with quartiles, the median CPU time (user + system, wait4's:
qprof's and its command's), and the shared libraries each binary loads.

    bench/startup_revisions.py BEFORE AFTER [--rounds 200]
"""
import argparse
import os
import subprocess
import sys

import alternating
import revisions


def libraries(binary):
    out = subprocess.run(["readelf", "-d", binary], check=True, capture_output=True, text=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


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

        def empty_fresh():
            for f in os.listdir(fresh):
                os.unlink(os.path.join(fresh, f))

        walls, cpus = alternating.alternate(cases, a.rounds, cwd=fresh, after_each=empty_fresh)
        libs = {rev: libraries(b) for rev, b in binaries.items()}
        sizes = {rev: os.path.getsize(b) for rev, b in binaries.items()}
    print(alternating.table(walls, cpus, "command", "bare `true`"))
    print()
    for rev in binaries:
        print(f"- {rev}: {sizes[rev] // 1024} KiB stripped, {len(libs[rev])} libraries: {', '.join(libs[rev])}")


if __name__ == "__main__":
    sys.exit(main())
