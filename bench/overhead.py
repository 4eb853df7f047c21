#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A profiler's own cost on a tree of sleeping processes, measured side by side.

For each profiler (qprof binaries given as LABEL=PATH, mprof, prmon where installed) and each
case (processes, interval), rounds of two run lengths are measured, the profilers alternating
within a round so that the noise of a shared machine falls on all of them. The CPU time of a
profiler and its children (wait4) at the short length is subtracted from that at the long one:
start-up and the workload's own cost (forking the sleepers) cancel, what is left is sampling.

    bench/overhead.py --qprof new=build/qprof [--qprof old=/tmp/qprof.old] [--mprof]
        [--case 33:0.01] [--case 512:0.002] [--short 2] [--long 6] [--rounds 3] [--busy 500]
        [--json FILE]

Prints a Markdown table: CPU per sample, % of one core, samples taken / asked, per-process
marginal cost; medians with min–max. --busy N adds, for every qprof, a second profiler entry
measured while a loop creates N short processes a second outside the tree (the busy-machine
case), alternating with the quiet one. --json writes the medians for bench/run_all.sh, with,
for qprof, the deadlines its long runs missed after their first SHORT seconds (the part that the
samples / asked figure measures), summed over the rounds, and how many of those fell within two
samples after a stats pass.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def workload(procs, seconds):
    """`sh` and procs - 1 sleeping children."""
    return ["sh", "-c", f"i=1; while [ $i -lt {procs} ]; do sleep {seconds} & i=$((i+1)); done; wait"]


def run_cpu(cmd):
    """Runs cmd; returns the CPU seconds of it and its children."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} … failed: {status}")
    return ru.ru_utime + ru.ru_stime


def count_samples(tool, path):
    """Samples in a trace: MEM lines (qprof, mprof) or data rows (prmon)."""
    n = 0
    with open(path, errors="replace") as f:
        for line in f:
            if tool == "prmon":
                n += 1
            elif line.startswith("MEM "):
                n += 1
    return n - 1 if tool == "prmon" else n  # prmon's header line


def missed_deadlines(path, interval, skip):
    """(deadlines missed, of them within two samples after a stats pass) in a qprof trace, from
    `skip` seconds after its start. qprof's deadlines are start + k * interval; a sample taken late
    belongs to the last deadline before it, and a deadline with no sample was skipped
    (common/clock.cpp). The stats pass runs right after the sample of its tick (its CPU line has
    that sample's time); a pass that outlasts a period makes the next sample late, and that one's
    own reads may then skip a deadline: both gaps are counted as the pass's."""
    start, mem, stats_times = None, [], []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("QPROF "):
                start = float(next(w for w in line.split() if w.startswith("start=")).split("=", 1)[1])
            elif line.startswith("MEM "):
                mem.append(float(line.split()[2]))
            elif line.startswith("CPU "):
                stats_times.append(float(line.split()[1]))
    if start is None:
        return 0, 0

    def tick(t):  # MEM's time is rounded to 0.1 ms: a sample on time may read up to 50 µs early
        return int((t - start + 6e-5) // interval)

    stats_ticks = {tick(t) for t in stats_times}
    ticks = [tick(t) for t in mem if t - start >= skip]
    if len(ticks) < 2:
        return 0, 0
    # The gaps sum to this whatever the rounding: a sample late by nearly a period may read as
    # the next tick's, which makes one gap -1 and the one before it +1.
    missed = max(0, ticks[-1] - ticks[0] + 1 - len(ticks))
    after_stats = 0
    for i in range(1, len(ticks)):
        gap = ticks[i] - ticks[i - 1] - 1
        if gap > 0 and (ticks[i - 1] in stats_ticks or (i >= 2 and ticks[i - 2] in stats_ticks)):
            after_stats += gap
    return missed, min(after_stats, missed)


def profile_cmd(tool, binary, out, interval, command):
    if tool == "mprof":
        return [*binary, "run", "-C", "-T", str(interval), "-o", out, *command]
    if tool == "prmon":
        return [binary, "-i", str(max(1, round(interval))), "-f", out, "-j", out + ".json", "--", *command]
    return [binary, "run", "-q", "-o", out, "--interval", str(interval), "--", *command]


def measure(profilers, procs, interval, short, long, rounds, tmp):
    """{label: [(cpu_per_sample, core_fraction, samples_ratio, (missed, missed_after_stats) or None)] per round}"""
    got = {label: [] for label, _, _, _ in profilers}
    for _ in range(rounds):
        for label, tool, binary, busy in profilers:
            churn = Churn(busy) if busy else None
            cpu, samples = {}, {}
            for seconds in (short, long):
                out = os.path.join(tmp, f"{label}-{seconds}.dat")
                for stale in (out, out + ".json"):
                    if os.path.exists(stale):
                        os.unlink(stale)  # mprof appends to an existing file
                cpu[seconds] = run_cpu(profile_cmd(tool, binary, out, interval, workload(procs, seconds)))
                samples[seconds] = count_samples(tool, out)
            if churn:
                churn.stop()
            d_cpu = cpu[long] - cpu[short]
            d_n = max(1, samples[long] - samples[short])
            d_t = long - short
            missed = missed_deadlines(os.path.join(tmp, f"{label}-{long}.dat"), interval, short) if tool == "qprof" else None
            got[label].append((d_cpu / d_n, d_cpu / d_t, d_n / (d_t / interval), missed))
    return got


class Churn:
    """A loop creating `rate` short processes a second, outside any profiled tree."""

    def __init__(self, rate):
        code = ("import os,time\n"
                f"rate={rate}; t=time.monotonic(); n=0\n"
                "while True:\n"
                "    pid=os.posix_spawn('/bin/true',['true'],os.environ)\n"
                "    os.waitpid(pid,0); n+=1\n"
                "    d=t+n/rate-time.monotonic()\n"
                "    if d>0: time.sleep(d)\n")
        self.p = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        time.sleep(0.5)

    def stop(self):
        os.killpg(self.p.pid, signal.SIGKILL)
        self.p.wait()


def stats(values):
    return statistics.median(values), min(values), max(values)


def fmt_range(values, scale, unit, digits=0):
    med, lo, hi = stats(values)
    return f"{med * scale:.{digits}f} {unit} ({lo * scale:.{digits}f}–{hi * scale:.{digits}f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qprof", action="append", default=[], help="LABEL=PATH of a qprof binary")
    ap.add_argument("--mprof", action="store_true", help="also the real mprof (python3-memory-profiler)")
    ap.add_argument("--prmon", action="store_true", help="also prmon, where installed (1 s resolution at best)")
    ap.add_argument("--case", action="append", default=[], help="PROCS:INTERVAL (default 33:0.01)")
    ap.add_argument("--short", type=float, default=2)
    ap.add_argument("--long", type=float, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--busy", type=int, default=0, help="outside processes created per second meanwhile")
    ap.add_argument("--json", help="write the medians here")
    a = ap.parse_args()
    profilers = []
    for spec in a.qprof:
        label, _, path = spec.partition("=")
        profilers.append((label, "qprof", os.path.abspath(path), 0))
        if a.busy:
            profilers.append((f"{label}, busy machine", "qprof", os.path.abspath(path), a.busy))
    if a.mprof:
        mprof = shutil.which("python3-mprof")
        profilers.append(("mprof", "mprof", [mprof] if mprof else ["/usr/bin/python3", "-m", "mprof"], 0))
    if a.prmon and shutil.which("prmon"):
        profilers.append(("prmon", "prmon", shutil.which("prmon"), 0))
    cases = [tuple(c.split(":")) for c in (a.case or ["33:0.01"])]
    results = []
    with tempfile.TemporaryDirectory(prefix="qprof-overhead-") as tmp:
        print("| processes | interval | profiler | CPU per sample | % of one core | samples / asked |")
        print("| ---: | ---: | --- | ---: | ---: | ---: |")
        for procs, interval in cases:
            got = measure(profilers, int(procs), float(interval), a.short, a.long, a.rounds, tmp)
            for label, _, _, _ in profilers:
                rows = got[label]
                print(f"| {procs} | {float(interval) * 1e3:g} ms | {label} | "
                      f"{fmt_range([r[0] for r in rows], 1e6, 'µs')} | "
                      f"{fmt_range([r[1] for r in rows], 100, '%', 2)} | "
                      f"{fmt_range([r[2] for r in rows], 1, '', 3)} |", flush=True)
                qprof = rows[0][3] is not None
                results.append({"procs": int(procs), "interval": float(interval), "profiler": label,
                                "short": a.short, "long": a.long, "rounds": a.rounds,
                                "cpu_per_sample": statistics.median(r[0] for r in rows),
                                "core": statistics.median(r[1] for r in rows),
                                "samples_ratio": statistics.median(r[2] for r in rows),
                                # Sums over the rounds' long runs, from `short` seconds in (qprof only).
                                "missed_in_long_runs": sum(r[3][0] for r in rows) if qprof else None,
                                "missed_after_stats_in_long_runs": sum(r[3][1] for r in rows) if qprof else None})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)

if __name__ == "__main__":
    main()
