# SPDX-License-Identifier: Apache-2.0
"""nvml_answers: what nvmlDeviceGetProcessUtilization answers, asked three ways at once while a
workload runs (for bench/RESULTS.md). Needs an NVIDIA GPU and nvidia-ml-py (pynvml).
  - fast: every 0.1 s, from the newest stamp it has seen (each answer within one sample period);
  - slow: every 1 s, from the newest stamp it has seen (several periods per answer);
  - zero: once, from 0 (the driver's whole buffer).
Each answer is one JSON line: the caller, our clock (µs), lastSeen, and each entry's pid, stamp
and SM %, or the error. Side by side, fast's figures show each period's sample and slow's show
how the driver averages them over a window (rounded up).
  python3 bench/nvml_answers.py -- ./cuda_busy > answers.jsonl
"""
import json
import subprocess
import sys
import time

import pynvml as N


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        sys.exit(__doc__)
    N.nvmlInit()
    h = N.nvmlDeviceGetHandleByIndex(0)
    workload = subprocess.Popen(argv, stdout=subprocess.DEVNULL)  # stdout is the answers
    now_us = lambda: int(time.time() * 1e6)  # on the driver's stamps' clock
    # name: [period s (0: once), lastSeen, next call on the monotonic clock (None: done)]
    start = time.monotonic()
    callers = {"fast": [0.1, now_us(), start], "slow": [1.0, now_us(), start], "zero": [0, 0, start + 0.5]}
    try:
        while workload.poll() is None:
            for name, c in callers.items():
                period, since, due = c
                if due is None or time.monotonic() < due:
                    continue
                c[2] = time.monotonic() + period if period else None
                rec = {"caller": name, "t": now_us(), "since": since}
                try:
                    entries = N.nvmlDeviceGetProcessUtilization(h, since)
                    rec["entries"] = [[e.pid, e.timeStamp, e.smUtil] for e in entries]
                    c[1] = max([since] + [e.timeStamp for e in entries])
                except N.NVMLError as e:
                    rec["error"] = str(e)
                print(json.dumps(rec), flush=True)
            time.sleep(0.01)
    finally:
        N.nvmlShutdown()


main()
