// SPDX-License-Identifier: Apache-2.0
// One pass of Σ PSS over the tree, put together from each member's smaps_rollup and its resident
// size (statm) read just before the pass's first rollup and just after its last.
//
// A pass reads one process after another. A page whose sharing changes meanwhile (a worker maps
// a shared buffer its parent filled, or drops it) is counted at its old share in a process read
// before the change and at its new one in a process read after: the sum overshoots, up to 175 MiB
// for 100 MiB shared by four processes that map it while the pass runs. The truth at every
// moment is the pages once. What the change can add is bounded by what the members' resident
// sizes moved during the pass, in pages they share: half a page per page mapped or unmapped.
// A pass that moved more than a little is read again; what is left of that bound is taken off.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "qprof/common/proc_parse.hpp"
#include "qprof/common/units.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::record {

// One member's reading in a pass.
struct PssReading {
  proc::Rollup rollup;
  Bytes resident_before = 0;            // statm's resident size before the pass's first rollup
  std::optional<Bytes> resident_after;  // after its last: nullopt or 0 once the process left
};

struct PssPass {
  trace::PssSample sum;  // `t` is the caller's
  // The most a change of sharing during the pass can have added to the members' raw sum;
  // already taken off `sum`.
  Bytes slack = 0;
  std::size_t counted = 0;  // members whose reading is in the sum
  // Moved enough to be read again: a slack over 1 MiB and over 1 % of the sum (the bound of a new
  // Σ RSS high).
  bool moved() const;
};

// The readings in the order they were taken. A member that left during the pass is left out but
// for the last one read (its share went to members read before it, whose figures stand); the sum
// is then the tree after it left.
PssPass assemble_pss_pass(std::span<const PssReading> readings);

}  // namespace qprof::record
