#!/bin/sh
# A memory budget gate for any CI: the job fails when its peak exceeds a fixed budget, or grows
# more than 5 % over the trace of the main branch.
#
#   examples/ci/budget_gate.sh main.dat python3 examples/calibrate.py --method minmax
#
# Exit status: 0 within budget, 3 over it (qprof says by how much and in which stage), 2 when
# the budget could not be checked, or the command's own failure.
set -eu
baseline=$1
shift
qprof run --max-peak "${MEMORY_BUDGET:-4GiB}" -o pr.dat -- "$@"
qprof compare --baseline "$baseline" --max-growth "${MEMORY_MAX_GROWTH:-5%}" pr.dat
