#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Which calibration method fits my machine? Runs examples/calibrate.py with every method on two
# model sizes under qprof and prints the table of AMD Quark's docs (rows: model, columns: method,
# cells: peak RSS), then the peak of every stage side by side, and draws the runs overlaid and
# one panel each.
#
#   examples/compare_methods.sh [OUTDIR]        (default: methods/)
#
# QPROF and PYTHON name the programs (default: qprof and python3 on PATH); MODELS the model sizes
# in MiB (default "32 64").
set -eu

QPROF=${QPROF:-qprof}
PYTHON=${PYTHON:-python3}
MODELS=${MODELS:-32 64}
METHODS="minmax percentile layerwise_percentile minmse"
here=$(dirname "$0")
out=${1:-methods}
mkdir -p "$out"

labels=""
set --
for model in $MODELS; do
  for method in $METHODS; do
    trace="$out/$model-$method.dat"
    "$QPROF" run -q -o "$trace" -- "$PYTHON" "$here/calibrate.py" --model "$model" --method "$method"
    set -- "$@" "$trace"
    labels="$labels${labels:+,}${model}MiB/$method"
  done
done

echo "Peak footprint per model and calibration method:"
"$QPROF" compare --wide --pivot model,method --label "$labels" "$@"
echo
echo "Peak inside each stage:"
"$QPROF" compare --stages --label "$labels" "$@"
"$QPROF" plot --label "$labels" -o "$out/methods.png" "$@"
"$QPROF" plot --facet --label "$labels" -o "$out/methods-facet.png" "$@"
echo
echo "Charts: $out/methods.png (overlaid), $out/methods-facet.png (one panel per run)"
