#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The libFuzzer targets: tests/fuzz/run.sh [SECONDS] [TARGET...]
#   targets: trace_reader (the .dat reader), markers (marker lines → stages), pipeline (trace →
#   report in every format, Quark YAML read back, JSON read back, chart and gnuplot script).
# Builds them with clang in build-fuzz (every library instrumented: -fsanitize=fuzzer-no-link,
# address,undefined) and runs them side by side, each for SECONDS (default 60) on its seed
# corpus (tests/fuzz/corpus/T, read-only; what libFuzzer finds goes to build-fuzz/corpus/T).
# Limits: -rss_limit_mb=2048 (the whole process), -malloc_limit_mb=64 (any single allocation: a
# reader holds at most one 1 MiB line), -timeout=10 s per input. Skipped, with the reason, when
# clang is not installed.
set -eu
cd "$(dirname "$0")/../.."
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-trace_reader markers pipeline}

if ! command -v clang++ >/dev/null 2>&1 || ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: skipped: clang is not installed (scripts/install-deps installs the Debian package clang)"
  exit 0
fi
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer"
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$flags" -DQPROF_FUZZ=ON -DQPROF_BUILD_TESTS=OFF -DQPROF_BUILD_BENCH=OFF ${LAUNCHER:-} >/dev/null
build_targets=""
for t in $targets; do build_targets="$build_targets fuzz_$t"; done
# shellcheck disable=SC2086
cmake --build build-fuzz -j"${JOBS:-2}" --target $build_targets

# The targets run side by side, each for SECONDS of wall time: on CI's two cores that is one
# minute for the three instead of three (each gets two thirds of a core there; libFuzzer's corpus
# and limits are per process, so they share no state).
for t in $targets; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "fuzz: $t for $seconds s"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=64 \
    -timeout=10 -max_len=65536 -print_final_stats=1 -artifact_prefix="build-fuzz/$t-" \
    "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" >"build-fuzz/$t.log" 2>&1 &
  echo $! >"build-fuzz/$t.pid"
done

status=0
for t in $targets; do
  if ! wait "$(cat "build-fuzz/$t.pid")"; then
    echo "fuzz: $t FAILED (build-fuzz/$t.log, reproducer build-fuzz/$t-*):"
    tail -n 40 "build-fuzz/$t.log"
    status=1
  fi
  echo "fuzz: $t:"
  grep -E '^#[0-9]+.*(DONE|cov:)' "build-fuzz/$t.log" | tail -n 1
  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "build-fuzz/$t.log" || true
done
exit $status
