// SPDX-License-Identifier: Apache-2.0
// The names that tell an overlay's traces apart in its key, and the key's long entries wrapped.
//
// Runs of one experiment often share long names ("experiment_resnet50_batch64_seed1", "…seed2"):
// cut at a fixed width they read alike. Each name is kept whole where it fits; otherwise the part
// that all names share is left out ("…seed1"), so that what is left is what differs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace qprof::plot {

// One display name per label (cleaned as display_text), at most `max_chars` code points each
// where the labels allow it, and never two alike: names that would still read the same end in
// " #N", N the trace's place (1-based) in the list.
std::vector<std::string> legend_names(const std::vector<std::string>& labels, std::size_t max_chars);

// `title` broken at spaces into lines of at most `max_chars` code points (a word longer than a
// line is broken where it must be, never inside a UTF-8 character); the later lines start with
// two spaces, which count. Never empty.
std::vector<std::string> wrap_title(const std::string& title, std::size_t max_chars);

}  // namespace qprof::plot
