"""cgroup_cost: qprof's own CPU with --cgroup against without, on 512 sleeping processes at the
default 10 ms, in alternating rounds (for bench/RESULTS.md). Needs root and a memory cgroup
qprof can create (cgroup v1 with memory.use_hierarchy 1, or v2).
  /usr/bin/python3 bench/cgroup_cost.py QPROF [BASELINE_QPROF] [--rounds N] [--seconds S]
Each run: `qprof run [--cgroup] -- sh -c 'for i in $(seq 511); do sleep S & done; wait'`; the
figure is qprof's own CPU from its summary's `overhead` line (its children not counted).
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile


def own_cpu(qprof, cgroup, seconds, out):
    workload = f"for i in $(seq 511); do sleep {seconds} & done; wait"
    argv = [qprof, "run"] + (["--cgroup"] if cgroup else []) + ["-o", out, "--", "sh", "-c", workload]
    err = subprocess.run(argv, capture_output=True, text=True, check=True).stderr
    if cgroup and "cgroup charge" not in err:
        raise SystemExit("--cgroup did not take here (needs root and a memory cgroup):\n" + err)
    m = re.search(r"overhead\s+qprof itself used ([\d.]+) s of CPU \(([\d.]+) % of one core\)", err)
    return float(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qprof")
    ap.add_argument("baseline", nargs="?")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=12)
    a = ap.parse_args()
    cases = [("without --cgroup", a.qprof, False), ("--cgroup", a.qprof, True)]
    if a.baseline:
        cases.append(("--cgroup, baseline", a.baseline, True))
    cpu = {name: [] for name, _, _ in cases}
    share = {name: [] for name, _, _ in cases}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.rounds):
            for name, qprof, cgroup in cases:
                seconds, percent = own_cpu(os.path.realpath(qprof), cgroup, a.seconds, os.path.join(tmp, "t.dat"))
                cpu[name].append(seconds)
                share[name].append(percent)
    base = statistics.median(cpu[cases[0][0]])
    print(f"512 sleeping processes for {a.seconds} s at 10 ms, {a.rounds} alternating rounds, "
          f"{os.cpu_count()} CPUs\n")
    print("| qprof | own CPU, median (min–max) | % of one core | against without --cgroup |")
    print("| --- | ---: | ---: | ---: |")
    for name, _, _ in cases:
        m = statistics.median(cpu[name])
        print(f"| {name} | {m:.3f} s ({min(cpu[name]):.3f}–{max(cpu[name]):.3f}) | "
              f"{statistics.median(share[name]):.1f} | {m / base:.2f}× |")


main()
