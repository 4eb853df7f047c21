# SPDX-License-Identifier: Apache-2.0
"""A process's own CPU time from the kernel's schedstat, for the benchmarks of bench/."""
import glob


def process_cpu_ns(pid):
    """Nanoseconds on a CPU so far, all of the process's threads summed."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            total += int(open(path).read().split()[0])
        except (OSError, IndexError, ValueError):
            pass  # a thread that ended between the listing and the read
    return total
