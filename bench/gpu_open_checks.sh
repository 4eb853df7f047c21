#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpu_open_checks.sh: the real-GPU checks that bench/RESULTS.md waits for, as one call on a lent GPU
# machine whose time is short and which may have no compiler or build dependencies:
#   1. what the GPU backend adds to `qprof run -- true` (bench/gpu_startup.py, 40 alternating rounds);
#   2. `qprof fit --gpu` under CUDA MPS on a job whose need is known (bench/gpu_fit_real.sh);
#   3. with the time left, the rest of the real-GPU checks (bench/gpu_real.sh).
# Each step has a time limit of its own, so that a hang in one still leaves the others' results.
#
#   bench/gpu_open_checks.sh carry BUILD_DIR     here: stripped qprof and qprof_gpu_bench into
#                                                build-gpu-carry/ (a few MB, small enough to travel)
#   bench/gpu_open_checks.sh check OUTDIR        there, as root, from the tree's root, with
#                                                build-gpu-carry/ carried along
set -u
# A relative BUILD_DIR or OUTDIR is the caller's, not the tree root's.
arg=${2:+$(realpath -m "$2")}
cd "$(dirname "$0")/.." || exit 2
carry="build-gpu-carry"
case "${1:-}" in
  carry)
    build=${arg:?usage: bench/gpu_open_checks.sh carry BUILD_DIR}
    mkdir -p "$carry" || exit 2
    for b in "$build/qprof" "$build/bench/qprof_gpu_bench"; do
      [ -x "$b" ] || { echo "no $b: build with -DQPROF_BUILD_BENCH=ON first" >&2; exit 2; }
      strip -o "$carry/$(basename "$b")" "$b" || exit 2
    done
    du -sh "$carry"
    ;;
  check)
    out=${arg:?usage: bench/gpu_open_checks.sh check OUTDIR}
    mkdir -p "$out" || exit 2
    qprof=$PWD/$carry/qprof
    "$qprof" --version || { echo "the carried qprof does not run here" >&2; exit 2; }
    py=$(command -v python3) || { echo "no python3 here" >&2; exit 2; }
    [ "$(id -u)" -eq 0 ] || echo "not root: fit --gpu will refuse (MPS and the probes' cgroups need root)" >&2
    printf '\n== what the GPU backend adds to a short run (%s)\n' "$(date -u +%T)"
    timeout 120 "$py" bench/gpu_startup.py "$qprof" --rounds 40 | tee "$out/startup.md"
    echo "gpu_startup.py: exit ${PIPESTATUS[0]} (124: cut at its time limit)"
    printf '\n== fit --gpu (%s)\n' "$(date -u +%T)"
    timeout 300 bench/gpu_fit_real.sh "$qprof" "$out/fit" 2>&1 | tee "$out/fit.log"
    echo "gpu_fit_real.sh: exit ${PIPESTATUS[0]} (124: cut at its time limit)"
    printf '\n== the other real-GPU checks (%s)\n' "$(date -u +%T)"
    timeout 240 bench/gpu_real.sh "$qprof" "$PWD/$carry/qprof_gpu_bench" "$out/real" >"$out/real.log" 2>&1
    echo "gpu_real.sh: exit $? (124: cut at its time limit; its log: real.log)"
    ;;
  *)
    echo "usage: bench/gpu_open_checks.sh carry BUILD_DIR | check OUTDIR" >&2
    exit 2
    ;;
esac
