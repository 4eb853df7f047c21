# SPDX-License-Identifier: Apache-2.0
"""gpu_real_check: what bench/gpu_real.sh recorded on a real GPU, checked against the truth each
workload prints itself, as Markdown (for bench/RESULTS.md). Exit 1 if a check fails.
  python3 bench/gpu_real_check.py OUTDIR
Checks:
  - cuda_alloc: at each checkpoint the device's total equals cudaMemGetInfo's figure (total - free)
    printed just before the marker, and the tree's figure rose by exactly the bytes allocated;
  - every GPU line: the tree's figure is not above the device's total;
  - cuda_busy, alone, two at once, and beside an idle CUDA process outside the tree (whose
    presence makes qprof ask the driver for per-process figures): the tree's busy share while
    the kernel spins (past the driver's first sample) is never 0 (a driver sample period without a new sample is not an
    idle GPU, and another process's turn is still the tree's), and is fresh: at least 90 from
    0.6 s after the spin's start (the driver's 0.2 s period, its window's edge, one query), and,
    alone and beside the outsider, at most 10 from 0.6 s into the idle stage; alone, the share
    is the device's busy % (or 0 before the tree's context exists);
  - torch_gpu.py: each TORCH line equals what torch printed at that checkpoint;
  - qprof's own CPU with and without GPU queries (and an older qprof's, if run), medians.
"""
import json
import re
import statistics
import sys
from pathlib import Path

from overhead import fmt_range
from qprof_summary import own_cpu

MiB = 1 << 20
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return "yes" if ok else "**no**"


def lines(path, kind):
    return [l.split() for l in Path(path).read_text().splitlines() if l.split()[:1] == [kind]]


def marks(path):
    return [(float(l.split(None, 2)[1]), l.split(None, 2)[2]) for l in Path(path).read_text().splitlines()
            if l.startswith("MARK ")]


def alloc(out, name):
    dat, log = out / f"{name}.dat", out / f"{name}.log"
    # nvidia-smi polls on its own (every 100 ms) and says MiB: its figures are checked 0.5 s after
    # the checkpoint (the job holds each allocation 1.5 s), to the MiB. NVML's at the checkpoint.
    polled = name.endswith("smi")
    late, tol = (0.5, MiB) if polled else (0.0, 0)
    if not dat.exists():
        return
    cuda = dict(re.findall(r"cuda_alloc: (\d GiB): device used (\d+) of", log.read_text()))
    gpu = lines(dat, "GPU")
    print(f"\n**{name}** (`{len(gpu)}` GPU lines)\n")
    print(f"Figures {'0.5 s after' if polled else 'at'} each checkpoint.\n")
    print("| checkpoint | cudaMemGetInfo used MiB | qprof device MiB | qprof tree MiB | tree rise MiB | device right | rise right |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
    first_mark = marks(dat)[0][0] if marks(dat) else None
    before = [int(g[3]) for g in gpu if first_mark and float(g[1]) < first_mark]
    base = before[-1] if before else 0
    for t, label in marks(dat):
        at = [g for g in gpu if float(g[1]) <= t + late + 1e-6]
        if not at or label not in cuda:
            continue
        tree, used = int(at[-1][3]), int(at[-1][4])
        want = int(label.split()[0]) << 30
        print(f"| {label} | {int(cuda[label]) / MiB:.2f} | {used / MiB:.2f} | {tree / MiB:.2f} | {(tree - base) / MiB:.2f} "
              f"| {check(abs(used - int(cuda[label])) <= tol, f'{name} {label}: device')} "
              f"| {check(abs(tree - base - want) <= tol, f'{name} {label}: rise')} |")
    above = [g for g in gpu if int(g[4]) > 0 and int(g[3]) > int(g[4])]
    print(f"\nGPU lines with the tree above the device's total: {len(above)} "
          f"({check(not above, f'{name}: tree above device')})")


def span(values):
    """min–max of a figure, for the tables ("none" when no line had it)."""
    return f"{min(values):.0f}–{max(values):.0f}" if values else "none"


def busy(out, name):
    dat = out / f"{name}.dat"
    if not dat.exists():
        return
    # A stage runs from the last of its start marks (the processes of busy_two print theirs each)
    # to the first of its end marks.
    at = {}
    for t, label in marks(dat):
        at.setdefault(label, []).append(t)
    missing = [m for m in ("Spin Start", "Spin End", "Idle Start", "Idle End", "Copy Start", "Copy End") if m not in at]
    if missing:
        print(f"\n**{name}**: no marker {', '.join(missing)} ({check(False, f'{name}: markers missing')})")
        return
    util = lines(dat, "GPUUTIL")

    # GPUUTIL t index busy_% mem_bw_% tree_busy_% pcie_rx pcie_tx, in a stage from `delay` s after its start.
    def stage(stage_name, delay, column):
        lo, hi = max(at[f"{stage_name} Start"]) + delay, min(at[f"{stage_name} End"])
        return [float(u[column]) for u in util if lo <= float(u[1]) <= hi and u[column] != "-"]

    shares, busy_pct = stage("Spin", 0.4, 5), stage("Spin", 0.4, 3)
    zeros = sum(1 for s in shares if s == 0)
    print(f"\n**{name}**: {len(util)} GPUUTIL lines; while the kernel spins (from 0.4 s after its start): "
          f"{len(shares)} lines, busy % (utilization.gpu) {span(busy_pct)}, the tree's share {span(shares)} "
          f"(mean {statistics.mean(shares) if shares else float('nan'):.1f}), {zeros} at 0 "
          f"({check(shares and zeros == 0, f'{name}: share at 0 while spinning')})")
    # Freshness: the share follows the stage within 0.6 s (the processes of busy_two spin at once,
    # so their idle stage is not idle for the GPU: checked alone only).
    spun = stage("Spin", 0.6, 5)
    print(f"\nFrom 0.6 s after the spin's start: {len(spun)} lines, the tree's share {span(spun)} "
          f"({check(spun and min(spun) >= 90, f'{name}: share under 90 while spinning')})")
    if name == "busy":
        # Alone on the GPU, the tree's share is the device's busy % (or 0 before its context).
        other = [u for u in util if u[5] != "-" and float(u[5]) not in (0.0, float(u[3]))]
        print(f"\nAlone on the GPU: {len(other)} of {len(util)} GPUUTIL lines with the tree's share neither the "
              f"device's busy % nor 0 ({check(util and not other, f'{name}: share not the device busy % alone')})")
    if name == "busy_shared":
        # The outsider holds 1 GiB: without it on the device, the run was the tree alone.
        gpu = lines(dat, "GPU")
        outside = max((int(g[4]) - int(g[3]) for g in gpu), default=0)
        print(f"\nThe device beyond the tree's figure: at most {outside / MiB:.0f} MiB "
              f"({check(outside >= 1 << 30, f'{name}: no outsider on the device')})")
    if name in ("busy", "busy_shared"):
        rested = stage("Idle", 0.6, 5)
        print(f"\nFrom 0.6 s into the idle stage: {len(rested)} lines, the tree's share {span(rested)} "
              f"({check(rested and max(rested) <= 10, f'{name}: share over 10 while idle')})")
    rx, tx = stage("Copy", 1.5, 6), stage("Copy", 1.5, 7)
    if rx and tx:
        # Each process prints its own rate; processes copying at once add up.
        said = sum(int(r) for r in re.findall(r"in [\d.]+ s: (\d+) B/s", (out / f"{name}.log").read_text()))
        busy_copy, share_copy = stage("Copy", 1.5, 3), stage("Copy", 1.5, 5)
        print(f"\nWhile copying host to device: PCIe RX {statistics.median(rx) / 1e9:.1f} GB/s, TX "
              f"{statistics.median(tx) / 1e9:.1f} GB/s (NVML, median of {len(rx)} lines); the copies' own rate "
              f"{said / 1e9:.1f} GB/s; busy % {statistics.median(busy_copy):.0f}, the tree's share "
              f"{statistics.median(share_copy) if share_copy else float('nan'):.0f}")


def torch(out):
    dat, log = out / "torch.dat", out / "torch.log"
    if not dat.exists():
        return
    said = {label: (int(a), int(r)) for label, a, r in
            re.findall(r"torch_gpu: (.+?): allocated (\d+) reserved (\d+)", log.read_text())}
    tl = lines(dat, "TORCH")
    by_time = {float(t[1]): (int(t[3]), int(t[4])) for t in tl}
    print("\n**torch_gpu.py**\n\n| checkpoint | torch allocated | TORCH allocated | torch reserved | TORCH reserved | equal |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for t, label in marks(dat):
        if label in said and t in by_time:
            a, r = said[label]
            ta, tr = by_time[t]
            print(f"| {label} | {a} | {ta} | {r} | {tr} | {check((a, r) == (ta, tr), f'torch {label}')} |")


def overhead(out):
    log = out / "overhead.log"
    if not log.exists():
        return
    cpu, share = {}, {}
    for line in log.read_text().splitlines():
        variant, cost = re.match(r"(\w+) \d+:", line), own_cpu(line)
        if variant and cost:
            cpu.setdefault(variant.group(1), []).append(cost[0])
            share.setdefault(variant.group(1), []).append(cost[1])
    print("\n**qprof's own CPU** (`qprof run --gpu B -- cuda_busy`, alternating rounds)\n")
    print("| GPU queries | rounds | qprof CPU, median (min–max) | % of one core (median of the summaries' figures) |")
    print("| --- | ---: | ---: | ---: |")
    for k in cpu:
        print(f"| {k} | {len(cpu[k])} | {fmt_range(cpu[k], 1, 's', 3)} | {statistics.median(share[k]):.1f} |")


def bench(out):
    path = out / "gpu_bench.json"
    if not path.exists():
        return
    rows = [b for b in json.loads(path.read_text())["benchmarks"] if b.get("aggregate_name") == "median"]
    print("\n**NVML calls** (`QPROF_BENCH_REAL_NVML=1 qprof_gpu_bench`, medians of 5)\n")
    print("| benchmark | wall | CPU |\n| --- | ---: | ---: |")
    for b in rows:
        print(f"| {b['run_name']} | {b['real_time']:.1f} {b['time_unit']} | {b['cpu_time']:.1f} {b['time_unit']} |")


def main():
    out = Path(sys.argv[1])
    for name in ("alloc_nvml", "alloc_smi", "alloc_auto"):
        alloc(out, name)
    busy(out, "busy")
    busy(out, "busy_two")  # two processes of the tree taking turns: the same shares
    busy(out, "busy_shared")  # an idle tenant outside the tree: per-process figures, the same shares
    torch(out)
    overhead(out)
    bench(out)
    print("\nall checks pass" if not failures else "\nfailed: " + "; ".join(failures))
    return 1 if failures else 0


sys.exit(main())
