# SPDX-License-Identifier: Apache-2.0
"""Commands timed in alternating rounds (for startup_revisions.py and library_cost.py): each
round runs every command once, so that the noise of a shared machine falls on all of them
alike; a Markdown table of the medians and quartiles, each against the first command's."""
import os
import statistics
import subprocess
import time


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


def alternate(cases, rounds, cwd=None, after_each=None):
    """cases: [(name, argv)]. Returns ({name: [wall s]}, {name: [CPU s]}); after_each() runs
    after every command, outside the timing."""
    walls = {name: [] for name, _ in cases}
    cpus = {name: [] for name, _ in cases}
    for _ in range(rounds):
        for name, argv in cases:
            wall, cpu = wall_and_cpu(argv, cwd=cwd)
            walls[name].append(wall)
            cpus[name].append(cpu)
            if after_each:
                after_each()
    return walls, cpus


def median_quartiles(values):
    """(median, first quartile, third quartile) of at least two values."""
    q = statistics.quantiles(values, n=4)
    return statistics.median(values), q[0], q[2]


def table(walls, cpus, what, floor_label):
    """Markdown rows, in the order of `walls`: median, quartiles, the difference to the first
    entry's median (`floor_label` names it), and the median CPU time of the command and its
    children."""
    names = list(walls)
    rounds = len(walls[names[0]])
    floor = statistics.median(walls[names[0]])
    lines = [f"| {what} ({rounds} alternating rounds) | median | quartiles | over {floor_label} | "
             "CPU of it and its children (median) |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for name in names:
        m, q1, q3 = median_quartiles(walls[name])
        over = "" if name == names[0] else f"+{(m - floor) * 1e3:.2f} ms"
        cpu = statistics.median(cpus[name])
        lines.append(f"| {name} | {m * 1e3:.2f} ms | {q1 * 1e3:.2f}–{q3 * 1e3:.2f} | {over} | {cpu * 1e3:.2f} ms |")
    return "\n".join(lines)
