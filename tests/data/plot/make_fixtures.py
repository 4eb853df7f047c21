#!/usr/bin/python3
"""Writes the qprof plot test fixtures in this folder (deterministic; run it again after a change).

full.dat        a qprof trace with every line kind: MEM, CHLD, MARK (stages and checkpoints),
                FUNC, PSS, IO, CPU, HWM, CGROUP, GPUDEV, GPU, PEAK, NOTE, EXIT (killed by SIGKILL)
truncated.dat   a trace whose writer was killed mid-line (no newline at the end)
malformed.dat   a MEM line with a broken number on line 5
empty.dat       a header and a command line, no sample
"""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20
GIB = 1 << 30
START = 1700000000.0


def mem_at(t):
    """A quantization job's tree RSS in bytes: load, calibrate, quantize, export."""
    if t < 2:
        return 300 * MIB + t / 2 * 1700 * MIB
    if t < 6:
        return 2 * GIB + (t - 2) / 4 * 3 * GIB + 40 * MIB * math.sin(t * 7)
    if t < 6.05:
        return 5.4 * GIB  # a short spike at the end of calibration
    if t < 10:
        return 3.5 * GIB
    return 1 * GIB


def full():
    out = ["QPROF 1 version=0.1.0 interval=0.050000 host=fixture root_pid=4242 start=%.6f metric=rss" % START,
           "CMDLINE python3 quantize.py --calib-method minmax --model llama-7b",
           "GPUDEV 0 GPU-1111-aaaa 85899345920 NVIDIA H100 80GB HBM3",
           "GPUDEV 1 GPU-2222-bbbb 85899345920 NVIDIA H100 80GB HBM3"]
    marks = {0.1: "Load Start", 2.0: "Load End", 2.05: "Calibration Start", 4.0: "checkpoint: batch 100",
             6.1: "Calibration End", 6.15: "Quantization Start", 8.0: "saved weights to /tmp/out",
             10.0: "Quantization End", 10.05: "Export Start"}
    stages = {}
    cpu = io_r = io_w = 0.0
    hwm = 0
    cg_peak = 0
    n = 240
    for i in range(n + 1):
        t = i * 0.05
        ts = START + t
        b = int(mem_at(t))
        out.append("MEM %.6f %.4f" % (b / MIB, ts))
        for k, pid in enumerate((4242, 4250, 4251)):
            share = (0.5, 0.3, 0.2)[k] if t < 10 else (1.0, 0, 0)[k]
            out.append("CHLD %d %.6f %.4f" % (pid, b * share / MIB, ts))
        if i % 5 == 0:
            out.append("PSS %.6f %d %d" % (ts, int(b * 0.9), int(b * 0.8)))
            hwm = max(hwm, int(b * 1.3))
            out.append("HWM %.6f %d" % (ts, hwm))
        if i % 5 == 0:
            cpu += 0.25 * (3.5 if 2 <= t < 6 else 0.9)
            io_r += 0.25 * (400 * MIB if t < 2 else 5 * MIB)
            io_w += 0.25 * (300 * MIB if 8 <= t < 8.5 else 0)
            out.append("CPU %.6f %.3f" % (ts, cpu))
            out.append("IO %.6f %d %d %d %d" % (ts, int(io_r), int(io_w), int(io_r * 1.1), int(io_w * 1.1)))
            usage = b + 200 * MIB
            cg_peak = max(cg_peak, usage)
            out.append("CGROUP %.6f %d %d" % (ts, usage, cg_peak))
            for dev in (0, 1):
                tree = int((20 * GIB if 2 <= t < 10 else 2 * GIB) * (1 if dev == 0 else 0.5))
                out.append("GPU %.6f %d %d %d" % (ts, dev, tree, tree + 3 * GIB))
        for mt, label in marks.items():
            if abs(mt - t) < 1e-9:
                out.append("MARK %.6f %s" % (ts, label))
                if label.endswith(" Start"):
                    stages[label[:-6]] = (b, ts)
                elif label.endswith(" End"):
                    name = label[:-4]
                    b0, t0 = stages.pop(name)
                    out.append("FUNC %s %.4f %.4f %.4f %.4f 0" % (name, b0 / MIB, t0, b / MIB, ts))
    out.append("NOTE 3 samples were late (the machine was busy)")
    out.append("PEAK kernel_process %d" % int(2.9 * GIB))
    out.append("PEAK cgroup %d" % (cg_peak + 64 * MIB))
    out.append("PEAK hwm_sum %d" % hwm)
    out.append("EXIT %.6f status=137 signal=9 timed_out=0" % (START + n * 0.05 + 0.01))
    return "\n".join(out) + "\n"


def small(lines):
    head = ["QPROF 1 version=0.1.0 interval=0.010000 host=fixture root_pid=7 start=%.6f metric=rss" % START,
            "CMDLINE ./job"]
    return "\n".join(head + lines)


def main():
    with open(os.path.join(HERE, "full.dat"), "w") as f:
        f.write(full())
    samples = ["MEM %.6f %.4f" % (10 + i, START + i * 0.01) for i in range(20)]
    with open(os.path.join(HERE, "truncated.dat"), "w") as f:
        f.write(small(samples) + "\nMEM 31.5")  # cut mid-line: no time, no newline
    with open(os.path.join(HERE, "malformed.dat"), "w") as f:
        f.write(small(samples[:2] + ["MEM 1O.5 %.4f" % (START + 0.02)] + samples[3:]) + "\n")
    with open(os.path.join(HERE, "empty.dat"), "w") as f:
        f.write(small([]) + "\n")


if __name__ == "__main__":
    main()
