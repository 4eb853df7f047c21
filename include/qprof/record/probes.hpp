// SPDX-License-Identifier: Apache-2.0
// What one process of the tree uses, read through the member's kept /proc descriptors.
#pragma once

#include "qprof/record/proc_tree.hpp"

namespace qprof::record {

// Reads statm into m.rss. A failed read means the process was reaped: m.gone is set.
// A zombie reads as 0 bytes.
void read_rss(Member& m, Bytes page_size);

}  // namespace qprof::record
