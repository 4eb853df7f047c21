#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# qprof plot on a long trace: time and peak memory of `qprof plot` to PNG, against gnuplot plotting
# the raw file. The issue's target: 10 M samples render in <= 3 s with <= 300 MB RSS, >= 10x faster
# than gnuplot on the raw file.
#
#   bench/plot_speed.sh [SAMPLES] [RUNS]     (defaults: 10000000 samples, 3 runs; medians reported)
#
# Needs a built qprof (build/qprof), gnuplot and GNU time (/usr/bin/time). Work files go to
# $BENCH_DIR (default: a temporary folder, removed at the end). PLOT_RAW=0 leaves out gnuplot on
# the raw file (minutes); PLOT_SUMMARY=FILE writes "SECONDS MB GNUPLOT_SECONDS" of qprof plot there.
set -eu
cd "$(dirname "$0")/.."
samples=${1:-10000000}
runs=${2:-3}
qprof=${QPROF:-build/qprof}
dir=${BENCH_DIR:-$(mktemp -d)}
keep=${BENCH_DIR:+yes}
mkdir -p "$dir"
trap '[ -n "$keep" ] || rm -rf "$dir"' EXIT

[ -x "$qprof" ] || { echo "build qprof first ($qprof)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install time" >&2; exit 2; }

trace=$dir/long.dat
echo "generating $samples samples at 1 ms into $trace" >&2
# An hours-long 1 ms trace: a slow sawtooth, noise, one 1-sample spike, checkpoints and a stage.
awk -v n="$samples" 'BEGIN {
  srand(7); t0 = 1700000000; spike = int(n * 0.61803)
  printf "QPROF 1 version=0.1.0 interval=0.001000 host=bench root_pid=1 start=%.6f metric=rss\n", t0
  print "CMDLINE python3 calibrate.py --long"
  for (i = 0; i < n; i++) {
    t = t0 + i * 0.001
    mib = 2000 + 1500 * ((i % 1000000) / 1000000) + rand() * 50
    if (i == spike) mib = 9000
    printf "MEM %.6f %.4f\n", mib, t
    if (i == int(n * 0.1)) printf "MARK %.6f Calibration Start\n", t
    if (i == int(n * 0.7)) printf "MARK %.6f Calibration End\n", t
    if (i % int(n / 5) == 12345) printf "MARK %.6f checkpoint %d\n", t, i
  }
}' > "$trace"
ls -l "$trace" >&2

# Runs "$@" under GNU time; prints "seconds max_rss_kib".
measure() {
  /usr/bin/time -f '%e %M' -o "$dir/time.txt" "$@" > /dev/null 2> "$dir/err.txt" || {
    cat "$dir/err.txt" >&2
    exit 1
  }
  cat "$dir/time.txt"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: > "$dir/qprof.txt"
: > "$dir/render.txt"
: > "$dir/raw.txt"
for i in $(seq "$runs"); do
  measure "$qprof" plot "$trace" -o "$dir/qprof.png" --script "$dir/reduced.gp" >> "$dir/qprof.txt"
  # gnuplot alone on what qprof sent it: the part of the time that is rendering.
  measure gnuplot "$dir/reduced.gp" >> "$dir/render.txt"
  if [ "${PLOT_RAW:-1}" != 0 ]; then
    measure gnuplot -e "set terminal pngcairo size 1280,720; set output '$dir/raw.png'; plot '$trace' using 3:2 with lines notitle" >> "$dir/raw.txt"
  else
    echo "nan nan" >> "$dir/raw.txt"
  fi
  echo "run $i: qprof $(tail -1 "$dir/qprof.txt")  gnuplot-on-reduced $(tail -1 "$dir/render.txt")  gnuplot-raw $(tail -1 "$dir/raw.txt")  (s, KiB)" >&2
done

q_s=$(cut -d' ' -f1 "$dir/qprof.txt" | median)
q_kib=$(cut -d' ' -f2 "$dir/qprof.txt" | median)
r_s=$(cut -d' ' -f1 "$dir/render.txt" | median)
g_s=$(cut -d' ' -f1 "$dir/raw.txt" | median)
g_kib=$(cut -d' ' -f2 "$dir/raw.txt" | median)
size_mb=$(du -m "$trace" | cut -f1)
[ -z "${PLOT_SUMMARY:-}" ] || awk -v s="$q_s" -v k="$q_kib" -v r="$r_s" 'BEGIN { printf "%s %.1f %s\n", s, k / 1024, r }' > "$PLOT_SUMMARY"
awk -v n="$samples" -v mb="$size_mb" -v runs="$runs" -v qs="$q_s" -v qk="$q_kib" -v rs="$r_s" -v gs="$g_s" -v gk="$g_kib" 'BEGIN {
  printf "%d samples (%d MB of trace), PNG 1280x720, median of %d runs:\n\n", n, mb, runs
  print  "| | wall time | max RSS |"
  print  "| --- | --- | --- |"
  printf "| `qprof plot` (read + reduce + render) | %.2f s | %.0f MB |\n", qs, qk / 1024
  printf "| of which gnuplot rendering the reduced data | %.2f s | |\n", rs
  if (gs == gs + 0 && gs != "nan") {
    printf "| gnuplot plotting the raw file (`using 3:2 with lines`) | %.2f s | %.0f MB |\n", gs, gk / 1024
    printf "\nqprof plot is %.1fx faster than gnuplot on the raw file.\n", gs / qs
  }
}'
