// SPDX-License-Identifier: Apache-2.0
// The name a trace goes by in a chart, a report or an export when it is given none: one rule for
// every stage, so that one trace has one name wherever it is shown.
#pragma once

#include <string>
#include <string_view>

namespace qprof {

// The file name less a ".dat" suffix, the one suffix mprof's traces carry (mprofile_*.dat):
// "runs/minmax.dat" → "minmax", "/a/b.c.dat" → "b.c", "run.v2" → "run.v2", "notes.txt" →
// "notes.txt". Only .dat goes: a dot elsewhere is part of the name a user chose. A path whose
// file name is empty or would be ("x/", ".dat") is its own label.
std::string default_label(std::string_view path);

// `name` less a ".dat" suffix, the rule default_label applies to a file name: "b=4.dat" → "b=4";
// ".dat" alone stays, as it is a name and not a suffix. A view into `name`.
std::string_view without_dat_suffix(std::string_view name);

}  // namespace qprof
