#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cpack -G DEB, then the package unpacked (dpkg -x) into a temporary root: its stripped qprof
# prints its version and draws a chart (with the style installed beside it); its man pages and
# completion are where Debian looks for them; its dependencies come from dpkg-shlibdeps.
#   deb_test.sh BUILD_DIR TRACE
set -eu
build=$1
trace=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/pkg/qprof_*.deb)
dpkg-deb --field "$deb" Depends Recommends | tee "$work/fields"
# yaml-cpp is linked from its static archive (qprof run never pays for its shared library).
if grep -q '^Depends:.*libyaml-cpp' "$work/fields"; then echo 'depends on libyaml-cpp' >&2; exit 1; fi
# The C++ runtime too (QPROF_STATIC_RUNTIME): linked in, so no libstdc++6 or libgcc-s1. Not under
# the sanitizers, whose runtimes need the shared one (CMakeLists.txt links it then).
if grep -q '^QPROF_STATIC_RUNTIME:BOOL=ON' "$build/CMakeCache.txt" && ! grep -q '^QPROF_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" &&
  grep -q '^Depends:.*\(libstdc++6\|libgcc-s1\)' "$work/fields"; then
  echo 'depends on the shared C++ runtime' >&2
  exit 1
fi
grep -q '^Depends:.*libc6' "$work/fields"
grep -q '^Depends:.*libpcre2-8-0' "$work/fields"  # --marker-regex
grep -q '^Recommends: gnuplot-nox' "$work/fields"

root=$work/root
dpkg -x "$deb" "$root"
for f in usr/bin/qprof usr/share/man/man1/qprof.1 usr/share/man/man1/qprof-export.1 \
         usr/share/bash-completion/completions/qprof usr/share/zsh/vendor-completions/_qprof usr/share/qprof/plot/qprof.gp \
         usr/include/qprof_mark.h usr/lib/python3/dist-packages/qprof_mark.py usr/share/man/man1/qprof-mark.1 \
         usr/share/doc/qprof/copyright; do
  [ -f "$root/$f" ] || { echo "missing from the package: $f"; exit 1; }
done
grep -q "^License: Apache-2.0" "$root/usr/share/doc/qprof/copyright"
if readelf -S "$root/usr/bin/qprof" | grep -q '\.symtab\|\.debug_info'; then echo "qprof is not stripped"; exit 1; fi

"$root/usr/bin/qprof" --version | tee "$work/version"
grep -q '^qprof [0-9]' "$work/version"
grep -q '^build: ' "$work/version"
grep -q 'nvml: ' "$work/version"

"$root/usr/bin/qprof" plot "$trace" -o "$work/chart.png" --script "$work/chart.gp"
head -c 8 "$work/chart.png" | od -An -c | grep -q 'P   N   G'
grep -q 'qprof_band_color' "$work/chart.gp"  # the style's line styles reached gnuplot
echo "deb ok: $deb"
