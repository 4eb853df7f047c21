#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Memory and time of the commands that read a whole trace, from 10 k to 10 M samples.

Generates synthetic traces in the format `qprof run -M` writes (a MEM line, two children's CHLD
lines and a CGROUP line per sample; PSS, IO, CPU, HWM, KINDS, TASKS and the cgroup's parts every
tenth sample; a stage every 5 % of the run with its CGPEAK windows; PEAK lines and EXIT at the end)
and runs each command under GNU time: max RSS (KiB) and wall seconds. Prints a Markdown table.

    bench/reader_scaling.py [--qprof build/qprof] [--sizes 10000,100000,1000000,10000000]
                            [--dir DIR] [--commands report,compare,sum,export,peak] [--sum-max N]

A trace is kept in DIR (default: a temporary folder, removed at the end) and reused when its size
matches, so that a second run measures only the commands.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

MIB = 1024 * 1024
T0 = 1700000000.0
INTERVAL = 0.01


def generate(path, samples, seed=0):
    """Writes a trace of `samples` MEM lines; returns its size in bytes."""
    stage_every = max(samples // 20, 10)
    out = []
    w = out.append
    w("QPROF 1 version=0.1.0 interval=0.010000 host=bench root_pid=100 start=%.6f metric=all "
      "cgroup=/sys/fs/cgroup/qprof-100 limit=25276502016 limit_source=memtotal\n" % T0)
    w("CMDLINE python3 train.py --epochs 20\n")
    w("PROC 101 python3\nPROC 102 worker\n")
    stage = 0
    io_read = 0
    cpu = 0.0
    with open(path, "w") as f:
        for i in range(samples):
            t = T0 + i * INTERVAL
            # A sawtooth per stage over a slow growth, and one spike: peaks sit inside stages.
            a = 200 + 300 * ((i % stage_every) / stage_every) + (i * 100.0 / samples) + (i * 7919 % 13)
            b = 50 + (i * 104729 % 17)
            if i == int(samples * 0.61803):
                a += 900
            mem = a + b + 3
            usage = int((a + b) * MIB * 0.9)
            w("MEM %.6f %.4f\n" % (mem, t))
            w("CHLD 101 %.6f %.4f\n" % (a, t))
            w("CHLD 102 %.6f %.4f\n" % (b, t))
            if i % 10 == 0:
                io_read += 4096 * (i % 7)
                cpu += 0.008
                w("PSS %.6f %d %d %d\n" % (t, int(mem * MIB * 0.95), int(mem * MIB * 0.8), int(mem * MIB * 0.7)))
                w("IO %.6f %d %d %d %d\n" % (t, io_read, io_read // 2, io_read * 2, io_read))
                w("CPU %.6f %.6f\n" % (t, cpu))
                w("HWM %.6f %d\n" % (t, int((mem + 20) * MIB)))
                w("KINDS %.6f %d %d %d 0\n" % (t, int(a * MIB), int(b * MIB), 4096))
                w("TASKS %.6f 3 9 %d\n" % (t, int(mem * 4 * MIB)))
                w("CGROUP %.6f %d %d %d %d\n" % (t, usage, usage + MIB, int(usage * 0.8), int(usage * 0.2)))
            else:
                w("CGROUP %.6f %d %d\n" % (t, usage, usage + MIB))
            if i % stage_every == stage_every // 4:
                w("CGPEAK %.6f %d\n" % (t, usage + 2 * MIB))
                w("MARK %.6f step%d Start\n" % (t, stage))
            elif i % stage_every == stage_every - 1:
                w("CGPEAK %.6f %d\n" % (t, usage + 2 * MIB))
                w("MARK %.6f step%d End\n" % (t, stage))
                stage += 1
            if len(out) > 20000:
                f.write("".join(out))
                out.clear()
        t = T0 + samples * INTERVAL
        w("PEAK kernel_process %d\n" % int(1300 * MIB))
        w("PEAK cgroup %d\n" % int(1400 * MIB))
        w("PEAK hwm_sum %d\n" % int(1500 * MIB))
        w("EXIT %.6f status=0 signal=0 timed_out=0\n" % t)
        f.write("".join(out))
    return os.path.getsize(path)


def measure(argv):
    """(max RSS MiB, wall seconds) of argv under GNU time; stdout discarded."""
    with tempfile.NamedTemporaryFile("r") as tf:
        r = subprocess.run(["/usr/bin/time", "-f", "%M %e", "-o", tf.name] + argv,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(argv), r.stderr[-2000:]))
        kib, secs = tf.read().split()[-2:]
    return int(kib) / 1024.0, float(secs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qprof", default="build/qprof")
    ap.add_argument("--sizes", default="10000,100000,1000000,10000000")
    ap.add_argument("--dir")
    ap.add_argument("--commands", default="report,compare,sum,export,peak")
    ap.add_argument("--sum-max", type=int, default=10000000,
                    help="largest size report --sum runs at")
    o = ap.parse_args()
    qprof = os.path.abspath(o.qprof)
    if not os.access(qprof, os.X_OK):
        sys.exit("build qprof first (%s)" % qprof)
    work = o.dir or tempfile.mkdtemp(prefix="qprof-readers-")
    os.makedirs(work, exist_ok=True)
    commands = {
        "report": lambda a, b: [qprof, "report", a],
        "compare": lambda a, b: [qprof, "compare", a, b],
        "sum": lambda a, b: [qprof, "report", "--sum", a, b],
        "export": lambda a, b: [qprof, "export", "--format", "perfetto", a],
        "peak": lambda a, b: [qprof, "peak", a],
    }
    chosen = [c for c in o.commands.split(",") if c]
    titles = {"report": "report", "compare": "compare A B", "sum": "report --sum A B",
              "export": "export --format perfetto", "peak": "peak"}
    rows = []
    try:
        for n in [int(s) for s in o.sizes.split(",")]:
            paths = []
            for k in range(2):
                p = os.path.join(work, "t%d-%d.dat" % (n, k))
                stamp = p + ".samples"
                if not (os.path.exists(p) and os.path.exists(stamp) and open(stamp).read() == str(n)):
                    print("generating %d samples: %s" % (n, p), file=sys.stderr)
                    generate(p, n, k)
                    with open(stamp, "w") as f:
                        f.write(str(n))
                paths.append(p)
            size = os.path.getsize(paths[0]) / 1e6
            cells = []
            for c in chosen:
                if c == "sum" and n > o.sum_max:
                    cells.append("not run")
                    continue
                mib, secs = measure(commands[c](*paths))
                print("%d samples, %s: %.1f MiB, %.2f s" % (n, c, mib, secs), file=sys.stderr)
                cells.append("%.1f MiB, %.2f s" % (mib, secs))
            rows.append("| %s | %.0f MB | %s |" % (format(n, ","), size, " | ".join(cells)))
    finally:
        if not o.dir:
            shutil.rmtree(work, ignore_errors=True)
    print("| samples | trace | " + " | ".join(titles[c] for c in chosen) + " |")
    print("| ---: | ---: |" + " --- |" * len(chosen))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
