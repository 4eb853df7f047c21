#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""qprof fit's own cost: its CPU time against the time its probes ran.

    bench/fit_cost.py QPROF ANON_AND_MMAP [ROUNDS]

Runs `qprof fit` ROUNDS times (default 3) on the anon_and_mmap workload (100 MiB of anonymous
memory, a 200 MiB file read through mmap three times), each search in fresh memory cgroups, and
prints a Markdown table: per round the probes, the time they ran, qprof's CPU time, the part of it
the kernel spent evicting the probes' page cache (memory.force_empty or memory.reclaim reclaim in
the writer's time), and the ratios with and without it; then the medians. The goal (issue 31) is
under 1 % of each probe's duration. Needs the right to create memory cgroups (root here);
elsewhere it says so and exits 0 with no table.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    qprof, workload = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "file.bin")
        with open(data, "wb") as f:
            chunk = os.urandom(1 << 20)
            for _ in range(200):
                f.write(chunk)
            # Out of the page cache, so that the job reads it from storage (and a limit makes it
            # read again): fit searches between its anonymous memory and that.
            f.flush()
            os.fsync(f.fileno())
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        rows = []
        for k in range(rounds):
            out = os.path.join(work, f"fit{k}.json")
            r = subprocess.run([qprof, "fit", "-q", "--json", out, "--", workload, "100", data, "3"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
            if r.returncode == 2 and "may not create" in r.stderr:
                print(f"Not measured: {r.stderr.strip()}\n")
                return 0
            if r.returncode != 0:
                print(r.stderr, file=sys.stderr)
                return 1
            j = json.load(open(out))
            probes = len(j["probes"]) + 1  # and the baseline
            rows.append((probes, j["runs_seconds"], j["qprof_cpu_seconds"], j["eviction_cpu_seconds"]))
    print("| round | runs (baseline and probes) | time they ran | qprof's CPU | of it, evicting the cache "
          "| ratio | ratio without the eviction |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for k, (probes, ran, cpu, evict) in enumerate(rows, 1):
        print(f"| {k} | {probes} | {ran:.2f} s | {cpu * 1000:.0f} ms | {evict * 1000:.0f} ms "
              f"| {100 * cpu / ran:.2f} % | {100 * (cpu - evict) / ran:.2f} % |")
    ratios = [cpu / ran for _, ran, cpu, _ in rows]
    evictions = [evict / ran for _, ran, _, evict in rows]
    rest = [(cpu - evict) / ran for _, ran, cpu, evict in rows]
    print(f"\nMedian: {100 * statistics.median(ratios):.2f} % of the probes' time "
          f"(min–max {100 * min(ratios):.2f}–{100 * max(ratios):.2f} %); goal: under 1 %. "
          f"Of it, the kernel's eviction of the probes' page cache: {100 * statistics.median(evictions):.2f} %; "
          f"the rest: {100 * statistics.median(rest):.2f} %.\n")
    with open(os.environ.get("FIT_COST_SUMMARY", os.devnull), "w") as f:
        f.write(f"{statistics.median(ratios):.6f} {statistics.median(evictions):.6f} {statistics.median(rest):.6f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
