#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What loading shared libraries costs a start on this machine: an empty `int main() {}` linked
with nothing, with libstdc++, with yaml-cpp too (qprof's libraries), and with Boost.Filesystem and
Boost.Iostreams too (what qprof loaded until 2026-11, where those are installed), timed in
alternating rounds (bench/alternating.py). Prints a Markdown table of medians and quartiles.

    bench/library_cost.py [--rounds 300]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import alternating

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
        walls, cpus = alternating.alternate([(name, [binary]) for name, binary in programs], a.rounds)
    print(alternating.table(walls, cpus, "`int main() {}` linked with", "libc alone"))


if __name__ == "__main__":
    sys.exit(main())
