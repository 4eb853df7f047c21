#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# How does calibration memory scale, and how many workers fit this machine? Sweeps
# examples/calibrate.py over its calibration workers (Quark's CalibWorkerNum), then over the
# activations one batch holds (the calibration samples per batch), models each figure against the
# parameter and solves it for the memory limit in force (a cgroup's limit inside a container or a
# Slurm job, else the machine's memory), and draws each model.
#
#   examples/sweep_calibration.sh [OUTDIR]        (default: sweep/)
#
# QPROF and PYTHON name the programs (default: qprof and python3 on PATH); WORKERS and
# ACTIVATIONS the values swept (default 1,2,4 and 16,32,64, in MiB). FIT=1 also runs qprof fit at
# each worker count: the smallest limit each runs in and the one at full speed, and the limit is
# then solved on those (needs the right to create memory cgroups: root, a delegated cgroup v2
# subtree or a Slurm job's cgroup).
set -eu

QPROF=${QPROF:-qprof}
PYTHON=${PYTHON:-python3}
WORKERS=${WORKERS:-1,2,4}
ACTIVATIONS=${ACTIVATIONS:-16,32,64}
here=$(dirname "$0")
out=${1:-sweep}
fit=""
[ "${FIT:-0}" = 1 ] && fit="--fit"

echo "Calibration workers (each holds its batch's 32 MiB of activations for 0.2 s; they share the model):"
"$QPROF" sweep -d "$out/workers" -p "workers=$WORKERS" $fit --at 16 --plot "$out/workers.png" -- \
  "$PYTHON" "$here/calibrate.py" --model 64 --activations 32 --pause 0.2 --workers '{workers}'
echo
echo "Activations of one batch, in MiB (one process):"
"$QPROF" sweep -d "$out/activations" -p "activations=$ACTIVATIONS" --at 256 --plot "$out/activations.png" -- \
  "$PYTHON" "$here/calibrate.py" --model 64 --activations '{activations}'
echo
echo "Charts: $out/workers.png, $out/activations.png; traces in $out/workers and $out/activations"
