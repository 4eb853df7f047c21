#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The sampler's cost per sample at two revisions of qprof, measured side by side with the
kernel's floor (bench/statm_floor.c) in the same rounds.

Each side is a git revision (built, target qprof, in a temporary worktree) or LABEL=PATH of a
qprof already built. Every round runs, for each case (a tree of `sh` and N-1 sleepers), every
entry once, in an order that rotates from round to round so that the noise of a shared machine
falls on all of them: `qprof run -q -i INTERVAL --gpu none` at each side (and the AFTER side
with each --variant's options), and the floor (with --charge, also the floor plus a pread of a
memory cgroup's charge at every round).

The figure is CPU per sample: the qprof process's run time from schedstat (the kernel's
nanoseconds on a CPU, /proc/PID/task/TID/schedstat) over a window taken once the tree is
complete, divided by the MEM lines the trace holds in that window. 'main thread' is the
sampler's thread alone, 'all threads' adds the PSS pass's thread and the marker readers' (idle
here). The floor's is its CLOCK_PROCESS_CPUTIME_ID per round. Own memory: VmHWM at the end of
the window, and of a run at 1 ms (--hwm-case).

    bench/compare_revisions.py BEFORE AFTER [--case 33] [--case 512] [--rounds 5] [--window 4]
        [--interval 0.01] [--variant 'LABEL=OPTIONS'] [--extra LABEL=PATH] [--charge] [--json FILE]
    bench/compare_revisions.py BEFORE AFTER --micro [--filter BM_SampleTree]   (qprof_bench)

Prints Markdown: medians with min–max, the after/before and floor ratios, and the load average
during the rounds (how noisy the machine was).
"""
import argparse
import contextlib
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import revisions
from overhead import workload

HERE = os.path.dirname(os.path.abspath(__file__))


def micro(a):
    """The Google Benchmark comparison (qprof_bench at each revision)."""
    def run(binary):
        res = subprocess.run([binary, "--benchmark_filter=" + a.filter, "--benchmark_format=json",
                              "--benchmark_min_time=0.2"], check=True, capture_output=True, text=True)
        to_us = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
        return {b["name"]: b["cpu_time"] * to_us[b["time_unit"]] for b in json.loads(res.stdout)["benchmarks"]}

    with revisions.builds((a.before, a.after), "RelWithDebInfo", True, "qprof_bench") as out:
        sides = {rev: os.path.join(folder, "bench", "qprof_bench") for rev, folder in out.items()}
        times = {rev: {} for rev in sides}
        for _ in range(a.rounds):
            for rev, binary in sides.items():
                for name, t in run(binary).items():
                    times[rev].setdefault(name, []).append(t)
    print(f"| benchmark (CPU time, median of {a.rounds}) | {a.before} | {a.after} | after / before |")
    print("| --- | ---: | ---: | ---: |")
    for n in times[a.before]:
        b = statistics.median(times[a.before][n])
        f = statistics.median(times[a.after].get(n, [float("nan")]))
        print(f"| {n} | {b:.2f} µs | {f:.2f} µs | {f / b:.3f} |")


@contextlib.contextmanager
def qprof_binaries(specs):
    """{label: qprof binary} for sides given as LABEL=PATH or as revisions (built here)."""
    built = [s for s in specs if "=" not in s]
    given = {s.partition("=")[0]: os.path.abspath(s.partition("=")[2]) for s in specs if "=" in s}
    if not built:
        yield given
        return
    with revisions.builds(built, "RelWithDebInfo", False, "qprof") as out:
        yield {**given, **{rev: os.path.join(folder, "qprof") for rev, folder in out.items()}}


def floor_binary(tmp):
    path = os.path.join(tmp, "statm_floor")
    subprocess.run(["cc", "-O2", "-o", path, os.path.join(HERE, "statm_floor.c")], check=True)
    return path


@contextlib.contextmanager
def charge_cgroup():
    """A memory cgroup for the floor's tree and the path of its charge file; None where none
    can be made (not root, no memory controller)."""
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        parent, charge = "/sys/fs/cgroup", "memory.current"
    else:
        parent, charge = "/sys/fs/cgroup/memory", "memory.usage_in_bytes"
    path = os.path.join(parent, f"qprof-bench-floor-{os.getpid()}")
    try:
        os.mkdir(path)
    except OSError:
        yield None
        return
    try:
        yield path, os.path.join(path, charge)
    finally:
        for _ in range(50):
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.1)


def cpu_ns(pid):
    """(main thread, all threads) nanoseconds on a CPU so far, from schedstat."""
    main, total = 0, 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
        total += ns
        if int(tid) == pid:
            main = ns
    return main, total


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def mem_times(trace):
    with open(trace, errors="replace") as f:
        return [float(line.split()[2]) for line in f if line.startswith("MEM ")]


def end_tree(p):
    """Kills the sleepers (sh then ends) and waits for qprof."""
    for sh in children(p.pid):
        for c in children(sh):
            with contextlib.suppress(ProcessLookupError):
                os.kill(c, signal.SIGKILL)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def run_qprof(binary, options, procs, interval, window, tmp):
    """One run over a tree of `procs`: (main-thread µs per sample, all-threads µs per sample,
    VmHWM kB, samples / asked in the window)."""
    trace = os.path.join(tmp, "run.dat")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(trace)
    cmd = [binary, "run", "-q", "-o", trace, "-i", str(interval), "--gpu", "none", *options, "--",
           *workload(procs, 600)]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The window starts once the whole tree is there (qprof's joins are not the steady state).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            kids = children(p.pid)
            if kids and len(children(kids[0])) >= procs - 1:
                break
            time.sleep(0.05)
        time.sleep(0.5)
        m0, a0 = cpu_ns(p.pid)
        t0 = time.time()
        time.sleep(window)
        m1, a1 = cpu_ns(p.pid)
        t1 = time.time()
        hwm = status_kib(p.pid, "VmHWM")
    finally:
        end_tree(p)
    n = sum(1 for t in mem_times(trace) if t0 < t <= t1)
    n = max(n, 1)
    return (m1 - m0) / 1e3 / n, (a1 - a0) / 1e3 / n, hwm, n / ((t1 - t0) / interval)


def run_hwm(binary, procs, interval, seconds, tmp):
    """VmHWM (kB) of qprof after `seconds` at `interval` on a tree of `procs`."""
    trace = os.path.join(tmp, "hwm.dat")
    p = subprocess.Popen([binary, "run", "-q", "-o", trace, "-i", str(interval), "--gpu", "none", "--",
                          *workload(procs, 600)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(seconds)
        return status_kib(p.pid, "VmHWM")
    finally:
        end_tree(p)


def run_floor(floor, procs, interval, window, charge):
    """The floor's µs per round, with a pread of the charge's file each round when one is given.
    The floor stays in its own cgroup, as qprof stays outside the tree's: a process in a memory
    cgroup of its own pays the kernel's memory accounting on every /proc read's buffer, which is
    no cost of reading the charge (a counter's read, whatever the group holds)."""
    args = [floor, str(procs), str(interval), str(window)] + ([charge[1]] if charge else [])
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()
    return float(out[2]) * 1e6


def spread(values, digits=0):
    med = statistics.median(values)
    return f"{med:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def measure(a, binaries, floor, charge, tmp):
    """{(entry label, procs): [per-round figures]} and the load averages seen."""
    entries = [(label, binaries[side], []) for side, label in ((a.before, a.before_label), (a.after, a.after_label))]
    for spec in a.variant:
        name, _, options = spec.partition("=")
        entries.append((f"{a.after_label} {name}", binaries[a.after], shlex.split(options)))
    for spec in a.extra:
        label, _, path = spec.partition("=")
        entries.append((label, os.path.abspath(path), []))
    entries.append(("floor", None, None))
    if charge:
        entries.append(("floor + charge read", None, charge))
    got, loads, hwm = {}, [], {}
    for r in range(a.rounds):
        for procs in a.case:
            order = entries[r % len(entries):] + entries[:r % len(entries)]
            for label, binary, extra in order:
                loads.append(loadavg())
                if binary is None:
                    figure = run_floor(floor, procs, a.interval, a.window, extra)
                    got.setdefault((label, procs), []).append((figure, figure, None, None))
                else:
                    got.setdefault((label, procs), []).append(
                        run_qprof(binary, extra, procs, a.interval, a.window, tmp))
                print(f"round {r + 1}, {procs} processes, {label}: {got[(label, procs)][-1]}", file=sys.stderr)
        if a.hwm_case:
            procs, interval, seconds = a.hwm_case
            plain = [(label, binary) for label, binary, extra in entries if binary and not extra]
            for label, binary in plain:
                hwm.setdefault(label, []).append(run_hwm(binary, procs, interval, seconds, tmp))
    return entries, got, loads, hwm


def report(a, entries, got, loads, hwm):
    cases = a.case
    print(f"CPU per sample (µs), medians of {a.rounds} rounds with min–max; `qprof run -q -i {a.interval:g} "
          f"--gpu none` over `sh` and N-1 sleepers, a {a.window:g} s window; load average "
          f"{min(loads):.1f}–{max(loads):.1f} (median {statistics.median(loads):.1f}) during the rounds.\n")
    head = " | ".join(f"{n} processes: main thread | all threads | × floor" for n in cases)
    print(f"| entry | {head} |")
    print("| --- |" + " ---: | ---: | ---: |" * len(cases))
    floors = {n: statistics.median(x[0] for x in got[("floor", n)]) for n in cases}
    summary = []
    for label, binary, _ in entries:
        cells = []
        for n in cases:
            rows = got[(label, n)]
            main = [x[0] for x in rows]
            if binary is None:
                cells.append(f"{spread(main, 1)} | | {statistics.median(main) / floors[n]:.2f}")
            else:
                cells.append(f"{spread(main, 1)} | {spread([x[1] for x in rows], 1)} | "
                             f"{statistics.median(main) / floors[n]:.2f}")
            summary.append({"entry": label, "procs": n, "main_us": statistics.median(main),
                            "all_us": statistics.median(x[1] for x in rows),
                            "main_min": min(main), "main_max": max(main),
                            "vmhwm_kb": statistics.median(x[2] for x in rows) if binary else None,
                            "samples_ratio": statistics.median(x[3] for x in rows) if binary else None})
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    for n in cases:
        fl = [x[0] for x in got[("floor", n)]]
        print(f"- {n} processes: the floor itself ranged {100 * (max(fl) - min(fl)) / statistics.median(fl):.0f} % "
              f"of its median over the rounds (the machine's noise on one figure)")
    for n in cases:
        b = statistics.median(x[0] for x in got[(a.before_label, n)])
        f = statistics.median(x[0] for x in got[(a.after_label, n)])
        print(f"- {n} processes: {a.after_label} / {a.before_label} = {f / b:.3f} (main thread, medians)")
    if ("floor + charge read", cases[0]) in got:
        for n in cases:
            c = [x[0] - y[0] for x, y in zip(got[("floor + charge read", n)], got[("floor", n)])]
            print(f"- {n} processes: the charge read adds {statistics.median(c):.1f} µs per sample "
                  f"(floor + charge read − floor, per round: {', '.join(f'{v:.1f}' for v in c)})")
    print()
    print("| own memory (VmHWM, kB) | " + " | ".join(f"{n} processes, {a.interval * 1e3:g} ms" for n in cases) +
          (f" | {a.hwm_case[0]} processes, {a.hwm_case[1] * 1e3:g} ms, {a.hwm_case[2]:g} s" if hwm else "") + " |")
    print("| --- |" + " ---: |" * (len(cases) + (1 if hwm else 0)))
    for label, binary, _ in entries:
        if binary is None:
            continue
        cells = [spread([x[2] for x in got[(label, n)]]) for n in cases]
        if hwm:
            cells.append(spread(hwm[label]) if label in hwm else "")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", help="a git revision, or LABEL=PATH of a built qprof")
    ap.add_argument("after", help="a git revision, or LABEL=PATH of a built qprof")
    ap.add_argument("--micro", action="store_true", help="compare qprof_bench's micro-benchmarks instead")
    ap.add_argument("--filter", default="BM_SampleTree", help="--micro: the benchmarks")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--case", type=int, action="append", help="processes in the tree (default 33 and 512)")
    ap.add_argument("--interval", type=float, default=0.01)
    ap.add_argument("--window", type=float, default=4)
    ap.add_argument("--variant", action="append", default=[],
                    help="'LABEL=OPTIONS': the AFTER side again with these options of qprof run")
    ap.add_argument("--extra", action="append", default=[],
                    help="'LABEL=PATH': one more built qprof in the rounds, at its default options")
    ap.add_argument("--charge", action="store_true",
                    help="also the floor with a pread of a memory cgroup's charge each round (root)")
    ap.add_argument("--hwm-case", default="33:0.001:6", help="PROCS:INTERVAL:SECONDS of the VmHWM run ('' for none)")
    ap.add_argument("--json", help="write the medians here")
    a = ap.parse_args()
    if a.micro:
        return micro(a)
    a.case = a.case or [33, 512]
    a.hwm_case = tuple(t(v) for t, v in zip((int, float, float), a.hwm_case.split(":"))) if a.hwm_case else None
    a.before_label = a.before.partition("=")[0]
    a.after_label = a.after.partition("=")[0]
    with tempfile.TemporaryDirectory(prefix="qprof-compare-") as tmp, qprof_binaries((a.before, a.after)) as found:
        binaries = {a.before: found[a.before_label], a.after: found[a.after_label]}
        floor = floor_binary(tmp)
        with (charge_cgroup() if a.charge else contextlib.nullcontext()) as charge:
            if a.charge and not charge:
                print("--charge: no memory cgroup could be made here (root, a memory controller): not measured\n")
            entries, got, loads, hwm = measure(a, binaries, floor, charge, tmp)
    summary = report(a, entries, got, loads, hwm)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rounds": a.rounds, "loadavg": [min(loads), max(loads)], "rows": summary,
                       "vmhwm_1ms": {k: statistics.median(v) for k, v in hwm.items()}}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
