// SPDX-License-Identifier: Apache-2.0
// The name a trace goes by in a chart, a report or an export when it is given none: one rule for
// every stage, so that one trace has one name wherever it is shown.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace qprof {

// The file name less a ".dat" suffix, the one suffix mprof's traces carry (mprofile_*.dat):
// "runs/minmax.dat" → "minmax", "/a/b.c.dat" → "b.c", "run.v2" → "run.v2", "notes.txt" →
// "notes.txt". Only .dat goes: a dot elsewhere is part of the name a user chose. A path whose
// file name is empty or would be ("x/", ".dat") is its own label.
std::string default_label(std::string_view path);

// `name` less a ".dat" suffix, the rule default_label applies to a file name: "b=4.dat" → "b=4";
// ".dat" alone stays, as it is a name and not a suffix. A view into `name`.
std::string_view without_dat_suffix(std::string_view name);

// The names of traces shown together (plot's key, compare's rows): labels[i] where not empty,
// else default_label(paths[i]); files of one name in other folders ("d1/x.dat", "d2/x.dat") go by
// their paths less ".dat" ("d1/x", "d2/x"), so that they can be told apart; one file given twice
// keeps its name (mark_equal_names tells the two apart). paths.size() names.
std::vector<std::string> trace_names(const std::vector<std::string>& paths, const std::vector<std::string>& labels);

// " #N" after each name that another one reads alike, N its place in the list (1-based): "a #1",
// "a #2". `fit(name, mark_chars)`, where given, shortens a name to leave room for its mark.
using NameFit = std::function<std::string(const std::string& name, std::size_t mark_chars)>;
void mark_equal_names(std::vector<std::string>& names, const NameFit& fit = nullptr);

}  // namespace qprof
