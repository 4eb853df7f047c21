#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A shell job in three stages, marked the way any program can: a QPROF_MARK: line on stderr.
#
#   qprof run -o shell.dat -- sh examples/stages.sh
#
# Generate writes half a million numbers (a few MiB at most), Shuffle reads them all into
# shuf's memory (about 4 MiB), Copy moves 80 MiB through dd's one 40 MiB block.
set -eu

mark() { echo "QPROF_MARK: $*" >&2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mark "Generate Start"
seq 1 500000 > "$work/numbers"
mark "Generate End"

mark "Shuffle Start"
shuf "$work/numbers" > "$work/shuffled"
mark "Shuffle End"

mark "Copy Start"
dd if=/dev/zero of="$work/zeros" bs=40M count=2 status=none
mark "Copy End"
