#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""qprof against the original mprof (Debian's python3-memory-profiler), side by side.

1. Overhead: CPU time the profiler itself spends per sample, on `sh` + 32 sleeping children at
   a 10 ms interval (the workload's own CPU is negligible), and the period it achieves. Two run
   lengths are measured and subtracted, so that start-up costs (Python's, for mprof) cancel.
2. Peak accuracy on workloads whose truth is known by construction (tests/workloads).

    bench/vs_mprof.py [--build build] [--rounds 3]      (prints Markdown)
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile

MIB = 1024 * 1024


def run_profiler(cmd):
    """Runs cmd; returns the CPU seconds of it and its children (wait4)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd[0]} failed: {status}")
    return ru.ru_utime + ru.ru_stime


def mem_samples(path):
    """(MiB values, times) of the MEM lines, and the PEAK lines of a qprof trace."""
    mem, times, peaks, pss = [], [], {}, []
    with open(path) as f:
        for line in f:
            kind, _, rest = line.partition(" ")
            fields = rest.split()
            if kind == "MEM":
                mem.append(float(fields[0]))
                times.append(float(fields[1]))
            elif kind == "PEAK":
                peaks[fields[0]] = int(fields[1]) / MIB
            elif kind == "PSS":
                pss.append(int(fields[1]) / MIB)
    return mem, times, peaks, pss


def profile(tool, qprof, out, interval, command, extra=()):
    if tool == "qprof":
        cmd = [qprof, "run", "-q", "-o", out, "--interval", str(interval), *extra, "--", *command]
    else:
        cmd = ["python3-mprof", "run", "-C", "-T", str(interval), "-o", out, *command]
    if os.path.exists(out):
        os.unlink(out)  # mprof appends to an existing file
    return run_profiler(cmd)


def overhead(qprof, tmp, rounds):
    rows = []
    for tool in ("qprof", "mprof"):
        per_sample, periods = [], []
        for _ in range(rounds):
            got = {}
            for seconds in (2, 6):
                sh = ["sh", "-c", f"for i in $(seq 32); do sleep {seconds} & done; wait"]
                out = os.path.join(tmp, f"{tool}-{seconds}.dat")
                cpu = profile(tool, qprof, out, 0.01, sh)
                mem, times, _, _ = mem_samples(out)
                got[seconds] = (cpu, len(mem))
                if seconds == 6:
                    periods.append((times[-1] - times[0]) / (len(times) - 1))
            (c2, n2), (c6, n6) = got[2], got[6]
            per_sample.append((c6 - c2) / (n6 - n2))
        rows.append((tool, statistics.median(per_sample), statistics.median(periods)))
    print("| profiler | CPU per sample (33 processes) | achieved period (asked 10 ms) |")
    print("| --- | ---: | ---: |")
    for tool, cpu, period in rows:
        print(f"| {tool} | {cpu * 1e6:.0f} µs | {period * 1e3:.2f} ms |")
    q, m = rows[0][1], rows[1][1]
    print(f"\nmprof spends {m / q:.1f}× the CPU per sample that qprof does.\n")


def accuracy(qprof, work, tmp):
    base = os.path.join(tmp, "base.dat")
    subprocess.run([qprof, "run", "-q", "-o", base, "--", f"{work}/alloc_tree", "0", "3", "0", "500"], check=True,
                   stderr=subprocess.DEVNULL)
    baseline = max(mem_samples(base)[0])
    cases = [
        ("parent 100 MiB + 3 children × 100 MiB", 400 + baseline, [f"{work}/alloc_tree", "100", "3", "100", "1000"], ()),
        ("a double-forked daemon holding 300 MiB", 300 + baseline / 4, [f"{work}/daemonize", "300", "1500"], ()),
        ("200 MiB shared copy-on-write by 4 processes", 200 + baseline, [f"{work}/cow_tree", "200", "3", "1000"],
         ("--metric", "all")),
        ("a 64 MiB spike held 5 ms (interval 100 ms)", 64.0, [f"{work}/spike", "64", "5", "300"], ("--cgroup",)),
    ]
    print("| workload | truth | mprof -C | qprof sampled Σ RSS | qprof PSS | qprof lower … upper bound | qprof cgroup |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, truth, command, extra in cases:
        interval = 0.1 if "spike" in command[0] else 0.01
        q_out, m_out = os.path.join(tmp, "q.dat"), os.path.join(tmp, "m.dat")
        profile("qprof", qprof, q_out, interval, command, extra)
        profile("mprof", qprof, m_out, interval, command)
        q_mem, _, peaks, pss = mem_samples(q_out)
        m_mem = mem_samples(m_out)[0]
        cells = [name, f"{truth:.0f} MiB", f"{max(m_mem):.0f} MiB", f"{max(q_mem):.0f} MiB",
                 f"{max(pss):.0f} MiB" if pss else "–",
                 f"{peaks.get('kernel_process', 0):.0f} … {peaks.get('hwm_sum', 0):.0f} MiB",
                 f"{peaks['cgroup']:.0f} MiB" if "cgroup" in peaks else "–"]
        print("| " + " | ".join(cells) + " |")
    print("\nTruth: the memory each workload touches by construction, plus the processes' own baseline"
          f" ({baseline:.1f} MiB for 4 idle processes, measured with qprof).")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    qprof = os.path.abspath(os.path.join(a.build, "qprof"))
    work = os.path.abspath(os.path.join(a.build, "tests", "workloads"))
    if not shutil.which("python3-mprof"):
        raise SystemExit("python3-mprof not found: apt-get install python3-memory-profiler")
    with tempfile.TemporaryDirectory(prefix="qprof-vs-mprof-") as tmp:
        print("### Overhead\n")
        overhead(qprof, tmp, a.rounds)
        print("### Peak accuracy\n")
        accuracy(qprof, work, tmp)


if __name__ == "__main__":
    main()
