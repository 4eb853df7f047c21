# SPDX-License-Identifier: Apache-2.0
"""nvml_probe: what the real NVML driver does, measured (for bench/RESULTS.md). Needs an NVIDIA
GPU, nvidia-ml-py (pynvml) and a workload command. It prints one JSON document:
  - the cost of nvmlInit and of each call qprof makes in a tight loop: the calling thread's CPU
    and the wall time per call (medians, `cpu_us`, `wall_us`), and the whole process's CPU over
    the loop per call (`loop_process_cpu_us_per_call`: threads of NVML's own count, and so does
    the timing around each call); the process's CPU while it holds NVML open and calls nothing
    (2 s); and the process's CPU of calls spaced as qprof spaces them (device totals every
    10 ms; process lists and rates every 0.1 s), the call alone (`call_process_cpu_us_mean`);
  - the samples behind qprof's busy-time series while WORKLOAD runs: every
    nvmlDeviceGetProcessUtilization answer (pid, driver timestamp, SM %) and every
    nvmlDeviceGetSamples(GPU_UTILIZATION) sample, polled every 50 ms, so that the driver's own
    sample period and what it says of an idle process can be read off. (The driver answers one
    figure per process over the window asked for: polled within one period, that is the
    period's sample. bench/nvml_answers.py shows the windows.)
  python3 bench/nvml_probe.py -- ./cuda_busy > probe.json
"""
import json
import statistics
import subprocess
import sys
import threading
import time

import pynvml as N


def call(fn):
    """fn(): an NVML error is an answer like another, and costs what it costs."""
    try:
        fn()
    except N.NVMLError:
        pass


def cost(fn, n):
    cpu, wall = [], []
    p0 = time.process_time_ns()
    for _ in range(n):
        c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
        call(fn)
        cpu.append(time.thread_time_ns() - c0)
        wall.append(time.perf_counter_ns() - w0)
    return {"cpu_us": statistics.median(cpu) / 1e3, "wall_us": statistics.median(wall) / 1e3, "n": n,
            "loop_process_cpu_us_per_call": (time.process_time_ns() - p0) / n / 1e3}


def spaced(fn, interval_s, n):
    """Process CPU per call of fn (one NVML call or a group of them) when calls come `interval_s`
    apart, as qprof makes them (a call after a pause may cost more than one of a tight loop:
    caches, the driver's locks)."""
    spent = 0
    for _ in range(n):
        c0 = time.process_time_ns()
        call(fn)
        spent += time.process_time_ns() - c0
        time.sleep(interval_s)
    return {"interval_ms": interval_s * 1e3, "n": n, "fn_process_cpu_us_mean": spent / n / 1e3}


def main():
    workload = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    if not workload:
        sys.exit(__doc__)
    c0, p0, w0 = time.thread_time_ns(), time.process_time_ns(), time.perf_counter_ns()
    N.nvmlInit()
    out = {"init": {"cpu_ms": (time.thread_time_ns() - c0) / 1e6, "process_cpu_ms": (time.process_time_ns() - p0) / 1e6,
                    "wall_ms": (time.perf_counter_ns() - w0) / 1e6}}
    h = N.nvmlDeviceGetHandleByIndex(0)
    now_us = lambda: int(time.time() * 1e6)
    p0 = time.process_time_ns()
    time.sleep(2)
    out["idle_2s_process_cpu_ms"] = (time.process_time_ns() - p0) / 1e6
    out["costs"] = {
        "memory_info": cost(lambda: N.nvmlDeviceGetMemoryInfo(h), 2000),
        "compute_processes": cost(lambda: N.nvmlDeviceGetComputeRunningProcesses(h), 500),
        "graphics_processes": cost(lambda: N.nvmlDeviceGetGraphicsRunningProcesses(h), 500),
        "utilization_rates": cost(lambda: N.nvmlDeviceGetUtilizationRates(h), 500),
        "process_utilization_last_seen_0": cost(lambda: N.nvmlDeviceGetProcessUtilization(h, 0), 50),
        "process_utilization_last_seen_now": cost(lambda: N.nvmlDeviceGetProcessUtilization(h, now_us()), 200),
        "samples_gpu_util_last_seen_now": cost(lambda: N.nvmlDeviceGetSamples(h, N.NVML_GPU_UTILIZATION_SAMPLES, now_us()), 200),
        "pcie_rx": cost(lambda: N.nvmlDeviceGetPcieThroughput(h, N.NVML_PCIE_UTIL_RX_BYTES), 10),
    }
    out["spaced"] = {
        "memory_info": spaced(lambda: N.nvmlDeviceGetMemoryInfo(h), 0.01, 300),
        "lists_and_rates": spaced(lambda: (N.nvmlDeviceGetComputeRunningProcesses(h), N.nvmlDeviceGetGraphicsRunningProcesses(h),
                                           N.nvmlDeviceGetUtilizationRates(h)), 0.1, 30),
    }
    proc = subprocess.Popen(workload, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # stdout is the JSON
    lines = []  # the workload's stderr (its markers), each with the time it was read
    reader = threading.Thread(target=lambda: [lines.append([now_us(), l.rstrip()]) for l in proc.stderr])
    reader.start()
    polls, last_p, last_s = [], now_us(), now_us()
    t_start = time.time()
    while proc.poll() is None:
        t = now_us()
        entry = {"t": t, "proc": [], "util": []}
        try:
            for s in N.nvmlDeviceGetProcessUtilization(h, last_p):
                entry["proc"].append([s.pid, s.timeStamp, s.smUtil, s.memUtil])
                last_p = max(last_p, s.timeStamp)
        except N.NVMLError as e:
            entry["proc_error"] = str(e)
        try:
            _, samples = N.nvmlDeviceGetSamples(h, N.NVML_GPU_UTILIZATION_SAMPLES, last_s)
            for s in samples:
                entry["util"].append([s.timeStamp, s.sampleValue.uiVal])
                last_s = max(last_s, s.timeStamp)
        except N.NVMLError as e:
            entry["util_error"] = str(e)
        try:
            entry["rates"] = N.nvmlDeviceGetUtilizationRates(h).gpu
        except N.NVMLError as e:
            entry["rates_error"] = str(e)
        polls.append(entry)
        time.sleep(0.05)
    reader.join()
    out["workload_stderr"] = lines
    out["workload_start_us"] = int(t_start * 1e6)
    out["polls"] = polls
    c0, w0 = time.process_time_ns(), time.perf_counter_ns()
    N.nvmlShutdown()
    out["shutdown"] = {"process_cpu_ms": (time.process_time_ns() - c0) / 1e6, "wall_ms": (time.perf_counter_ns() - w0) / 1e6}
    json.dump(out, sys.stdout)


main()
