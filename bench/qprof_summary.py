# SPDX-License-Identifier: Apache-2.0
"""What the summary of `qprof run` (its stderr) says of qprof's own cost, parsed once for the
benchmarks that read it (cgroup_cost.py, gpu_real_check.py)."""
import re

_OVERHEAD = re.compile(r"qprof:\s+overhead\s+qprof itself used ([\d.]+) s of CPU \(([\d.]+) % of one core\)")


def own_cpu(text):
    """(CPU seconds, % of one core over the run) from the summary's overhead line; None without one."""
    m = _OVERHEAD.search(text)
    return (float(m.group(1)), float(m.group(2))) if m else None
