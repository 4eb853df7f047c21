#!/usr/bin/env python3
"""What loading shared libraries costs a start on this machine: an empty `int main() {}` linked
with nothing, with libstdc++, with yaml-cpp too (qprof's libraries), and with Boost.Filesystem and
Boost.Iostreams too (what qprof loaded until 2026-11, where those are installed), timed in
alternating rounds. Prints a Markdown table of medians and quartiles.

    bench/library_cost.py [--rounds 300]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

VARIANTS = [
    ("no library but libc", []),
    ("libstdc++", ["-lstdc++", "-lm"]),
    ("libstdc++, yaml-cpp (qprof now)", ["-lyaml-cpp", "-lstdc++", "-lm"]),
    ("libstdc++, yaml-cpp, Boost.Filesystem, Boost.Iostreams (qprof before)",
     ["-lyaml-cpp", "-lboost_filesystem", "-lboost_iostreams", "-lstdc++", "-lm"]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=300)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="qprof-libs-") as root:
        source = os.path.join(root, "empty.c")
        with open(source, "w") as f:
            f.write("int main(void) { return 0; }\n")
        programs = []
        for name, libs in VARIANTS:
            binary = os.path.join(root, f"empty{len(programs)}")
            # gcc, not g++ (which would add libstdc++ to every variant); --no-as-needed: each
            # library is loaded although nothing of it is called.
            built = subprocess.run(["gcc", "-O2", source, "-o", binary, "-Wl,--no-as-needed", *libs],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if built.returncode == 0:
                programs.append((name, binary))
            else:
                print(f"- {name}: not installed here, not measured", file=sys.stderr)
        times = {name: [] for name, _ in programs}
        for _ in range(a.rounds):
            for name, binary in programs:
                t = time.perf_counter()
                subprocess.run([binary], check=True)
                times[name].append(time.perf_counter() - t)
    floor = statistics.median(times[programs[0][0]])
    print(f"| `int main() {{}}` linked with ({a.rounds} alternating rounds) | median | quartiles | over libc alone |")
    print("| --- | ---: | ---: | ---: |")
    for name, _ in programs:
        m = statistics.median(times[name])
        q = statistics.quantiles(times[name], n=4)
        print(f"| {name} | {m * 1e3:.2f} ms | {q[0] * 1e3:.2f}–{q[2] * 1e3:.2f} | +{(m - floor) * 1e3:.2f} ms |")


if __name__ == "__main__":
    sys.exit(main())
