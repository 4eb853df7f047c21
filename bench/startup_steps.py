#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a start of `qprof run -q -- true` goes, step by step: builds a revision (Release, in a
temporary worktree) with a monotonic timestamp after every statement of Session::run at the
function's top level, and where main starts and has parsed the options, runs it RUNS times in a
folder emptied between runs (a new default-named trace each time), and prints the median time
of each step in a Markdown table, with the statement it ends at. The timestamps are the only
change to the sources, and are never committed: they exist in the worktree alone.

    bench/startup_steps.py [REVISION] [--runs 40] [--min-us 5] [-- RUN OPTIONS...]

RUN OPTIONS go to `qprof run` before `--` (for instance --gpu none).
"""
import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile

import revisions

# Kept to a fixed array and printed at exit: nothing allocated or printed while qprof runs.
MARKS_HEADER = r"""#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
inline struct StepMarks { const char* label[256]; long long ns[256]; int n = 0; } g_step_marks;
inline void step_marks_print() {
  if (!getenv("QPROF_STEP_MARKS")) return;
  for (int i = 1; i < g_step_marks.n; ++i)
    fprintf(stderr, "STEP\t%s\t%.1f\n", g_step_marks.label[i], (g_step_marks.ns[i] - g_step_marks.ns[i - 1]) / 1e3);
}
inline void step_mark(const char* label) {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  if (g_step_marks.n == 0) atexit(step_marks_print);
  if (g_step_marks.n < 256) {
    g_step_marks.label[g_step_marks.n] = label;
    g_step_marks.ns[g_step_marks.n++] = t.tv_sec * 1000000000LL + t.tv_nsec;
  }
}
"""


def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def instrument(_rev, src):
    header = os.path.join(src, "startup_step_marks.hpp")
    with open(header, "w") as f:
        f.write(MARKS_HEADER)
    # Session::run moved into src/record/session/ (issue 30); older revisions have it one up.
    session = os.path.join(src, "src", "record", "session", "session.cpp")
    if not os.path.exists(session):
        session = os.path.join(src, "src", "record", "session.cpp")
    lines = open(session).read().split("\n")
    out = [f'#include "{header}"']
    inside = False
    for number, line in enumerate(lines, start=1):
        out.append(line)
        if line.startswith("int Session::run() {"):
            inside = True
            out.append('  step_mark("Session::run entered");')
            continue
        if inside and line.startswith("}"):
            inside = False
        # A statement of the function's own level, whole on its line: the mark goes after it.
        text = line.strip()
        if (inside and line.startswith("  ") and not line.startswith("   ") and text.endswith(";")
                and not text.startswith(("return", "//"))):
            out.append(f"  step_mark({c_string(f'{number}: {text[:70]}')});")
    if inside or len(out) == len(lines) + 1:
        sys.exit("startup_steps.py: Session::run not found where expected in " + session)
    with open(session, "w") as f:
        f.write("\n".join(out))
    main = os.path.join(src, "src", "cli", "main.cpp")
    text = open(main).read()
    entry = "int main(int argc, char** argv) {\n"
    parsed = "    if (c.app->parsed()) return c.action();"
    if entry not in text or parsed not in text:
        sys.exit("startup_steps.py: main() is not of the expected form in " + main)
    text = f'#include "{header}"\n' + text
    text = text.replace(entry, entry + '  step_mark("main entered");\n', 1)
    text = text.replace(parsed, '    if (c.app->parsed()) { step_mark("options built and parsed"); return c.action(); }', 1)
    with open(main, "w") as f:
        f.write(text)


def main():
    args = sys.argv[1:]
    run_options = []
    if "--" in args:
        run_options = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    ap = argparse.ArgumentParser()
    ap.add_argument("revision", nargs="?", default="HEAD")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--min-us", type=float, default=5.0)
    a = ap.parse_args(args)
    steps = collections.defaultdict(list)
    order = []
    with revisions.builds((a.revision,), "Release", False, "qprof", prepare=instrument) as out:
        qprof = os.path.join(out[a.revision], "qprof")
        env = dict(os.environ, QPROF_STEP_MARKS="1")
        with tempfile.TemporaryDirectory(prefix="qprof-steps-") as folder:
            for _ in range(a.runs):
                r = subprocess.run([qprof, "run", "-q", *run_options, "--", "true"], cwd=folder, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
                for line in r.stderr.splitlines():
                    if not line.startswith("STEP\t"):
                        continue
                    _, label, us = line.split("\t")
                    steps[label].append(float(us))
                    if label not in order:
                        order.append(label)
                for f in os.listdir(folder):
                    os.unlink(os.path.join(folder, f))
    total = sum(statistics.median(steps[label]) for label in order)
    print(f"| step of `qprof run -q {' '.join(run_options)}{' ' if run_options else ''}-- true` at {a.revision}, "
          f"up to and with the statement ({a.runs} runs) | median |")
    print("| --- | ---: |")
    for label in order:
        m = statistics.median(steps[label])
        if m >= a.min_us:
            print(f"| `{label}` | {m:.0f} µs |")
    print(f"| from main to the last statement, the medians summed | {total / 1e3:.2f} ms |")


if __name__ == "__main__":
    sys.exit(main())
