// SPDX-License-Identifier: Apache-2.0
// The points of a parameter sweep (`qprof sweep -p workers=1,2,4 -p samples=64,128`): the grid,
// the command filled in at each point, the name of each point's trace, and the values read back
// from a trace's label or name (`qprof compare --sweep workers`). Pure text work, no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qprof/common/failure.hpp"

namespace qprof::analysis {

struct SweepParameter {
  std::string name;                 // [A-Za-z_][A-Za-z0-9_]*
  std::vector<std::string> values;  // in the order given, none empty
};
// "workers=1,2,4,8"; a Failure for a bad name, no '=', or an empty value.
Result<SweepParameter> parse_sweep_parameter(std::string_view text);

// One point: (name, value) in the order of the parameters.
using SweepPoint = std::vector<std::pair<std::string, std::string>>;
// Every combination, the first parameter varying slowest (2 × 3 parameters: 6 points).
std::vector<SweepPoint> sweep_grid(const std::vector<SweepParameter>& parameters);

// `text` with each {name} of the point's parameters replaced by its value; any other brace is
// kept as it is. The result is one argument: it never passes through a shell.
std::string fill_placeholders(std::string_view text, const SweepPoint& point);

// "workers=4,samples=64": the point as a file name, every byte outside [A-Za-z0-9._+-] of a
// value made '_' (a value with '/' or a space still names one file in the output directory).
std::string point_name(const SweepPoint& point);
// The value of `name` in a label or file name that carries "name=VALUE" (at its start or after
// ',', '/' or ' '), up to the next ',', '/', ' ' or the end; a trailing ".dat" is not part
// of it, nor a trailing "~N" (the next free name of a point run again: "n=20~2.dat" is n=20).
// nullopt when it carries none.
std::optional<std::string> value_in_label(std::string_view label, std::string_view name);

}  // namespace qprof::analysis
