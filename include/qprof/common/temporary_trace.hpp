// SPDX-License-Identifier: Apache-2.0
// A trace file of qprof's own for the length of one command (peak's run without -o, plot --sum's
// job total): one place that picks the directory and a name no other process holds.
#pragma once

#include <string>
#include <string_view>

#include "qprof/common/failure.hpp"

namespace qprof {

struct TemporaryTrace {
  int fd = -1;       // open for writing; the caller closes it
  std::string path;  // the caller removes it when done
};

// A new, empty file $TMPDIR/PREFIX-XXXXXX.dat (/tmp where TMPDIR is unset or empty), created by
// mkstemps: mode 0600, a name that did not exist. Fails as "cannot create a temporary trace in DIR".
Result<TemporaryTrace> create_temporary_trace(std::string_view prefix);

}  // namespace qprof
