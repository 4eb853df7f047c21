#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The marker helpers as `cmake --install` installs them, used from there: the C header compiled
# into a program that qprof runs, the Python module imported by Debian's python3 from where it
# was installed. For the prefix /usr (the .deb's), the module lands in a directory that Debian's
# python3 searches by default. The zsh completion goes with them to the folder zsh's default
# $fpath has for that prefix.
#   install_helpers_test.sh BUILD_DIR QPROF [AS_LIMIT]
# AS_LIMIT: prlimit's address-space bound, "unlimited" for an AddressSanitizer build (its shadow
# memory needs terabytes of address space; ASAN_OPTIONS' hard_rss_limit_mb bounds it instead).
set -eu
build=$1
qprof=$2
as_limit=${3:-4294967296}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bounded() { timeout -s KILL 60 prlimit --as="$as_limit" -- "$@"; }

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
header=$work/prefix/include/qprof_mark.h
module=$(ls "$work"/prefix/lib/python3*/dist-packages/qprof_mark.py)
[ -f "$header" ] || { echo "missing: $header"; exit 1; }

# C, then C++: a plain checkpoint and a synchronous one, in that order (one statement each: the
# order in which a call's arguments are evaluated is the compiler's), from the installed header.
cat >"$work/job.c" <<'C'
#include <stdio.h>
#include <qprof_mark.h>
int main(void) {
  const int plain = qprof_mark("C Start");
  const int sync = qprof_mark_sync("C End");
  printf("%d %d\n", plain, sync);
  return 0;
}
C
cc -Wall -Wextra -Werror -I"$work/prefix/include" -o "$work/job" "$work/job.c"
c++ -std=c++20 -Wall -Wextra -Werror -x c++ -I"$work/prefix/include" -o "$work/job-cxx" "$work/job.c"
for job in job job-cxx; do
  bounded "$qprof" run -q -o "$work/c.dat" -- "$work/$job" >"$work/c.out"
  [ "$(cat "$work/c.out")" = "0 0" ] || { echo "$job: the helper answered: $(cat "$work/c.out")"; exit 1; }
  [ "$(grep '^MARK ' "$work/c.dat" | cut -d' ' -f3-)" = "C Start
C End" ] || { echo "$job: markers:"; grep '^MARK ' "$work/c.dat"; exit 1; }
  [ "$(env -u QPROF_MARK_FD -u QPROF_MARK_PATH "$work/$job")" = "1 1" ]  # outside qprof: absent
done

# Python: the installed module, imported by Debian's python3.
PYTHONPATH=$(dirname "$module") bounded "$qprof" run -q -o "$work/py.dat" -- /usr/bin/python3 -c '
import qprof_mark
with qprof_mark.stage("Py"):
    pass
print(qprof_mark.__file__)' >"$work/py.out"
[ "$(cat "$work/py.out")" = "$module" ] || { echo "imported $(cat "$work/py.out"), not $module"; exit 1; }
grep -q '^MARK [0-9.]* Py Start$' "$work/py.dat"
grep -q '^MARK [0-9.]* Py End$' "$work/py.dat"

# The prefix /usr: where Debian's python3 looks without PYTHONPATH.
DESTDIR=$work/dest cmake --install "$build" --prefix /usr >"$work/install-usr.log" 2>&1 || { cat "$work/install-usr.log"; exit 1; }
[ -f "$work/dest/usr/lib/python3/dist-packages/qprof_mark.py" ]
[ -f "$work/dest/usr/include/qprof_mark.h" ]
/usr/bin/python3 -c 'import sys; assert "/usr/lib/python3/dist-packages" in sys.path, sys.path'
[ -f "$work/prefix/share/zsh/site-functions/_qprof" ]
[ -f "$work/dest/usr/share/zsh/vendor-completions/_qprof" ]
if command -v zsh >/dev/null 2>&1; then
  zsh -f -c 'print -l $fpath' | grep -qx /usr/share/zsh/vendor-completions
  zsh -f -c 'print -l $fpath' | grep -qx /usr/local/share/zsh/site-functions
fi
echo "helpers ok"
