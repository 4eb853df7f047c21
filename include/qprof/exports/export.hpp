// SPDX-License-Identifier: Apache-2.0
// qprof export: traces into the formats other tools read. Each trace is streamed (trace::Visitor),
// never held whole: memory grows with the number of series (children, GPU devices), not samples.
//
//   chrome    Chrome trace-event JSON, what Perfetto UI and chrome://tracing load: one process
//             track per trace, a counter track per series, instant events for checkpoints,
//             complete events for stages, the command as metadata.
//   csv       one row per memory sample, one column per series, units in the header.
//   json      the same table as arrays: a column list, then each trace's rows.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/common/units.hpp"

namespace qprof::exports {

enum class Format { chrome, csv, json };

// "chrome" and "perfetto" (Perfetto UI loads the JSON natively: see the README), "csv", "json".
std::optional<Format> parse_format(std::string_view name);

struct Input {
  std::string path;
  std::string label;  // the trace's name in the output; empty: "rank N (HOST)" for a rank, else default_label
};

struct Options {
  Format format = Format::chrome;
  Unit unit = Unit::MiB;  // of memory values and rates
  // The output reaches its reader as it is written (stdout, a FIFO), not replaced once whole:
  // every trace is read through before the first byte, so that a trace bad in its middle fails
  // with nothing written. (A trace that is not a regular file cannot be read twice: the Chrome
  // trace, written in one pass, is then cut where such a trace turns out bad.)
  bool in_place = false;
  // Told what the output leaves out (CSV and JSON: columns past the first 64 processes or devices).
  std::function<void(const std::string&)> warn;
};

// Fails ("FILE: reason") unless every input is there to be read: called before the output is
// opened, so that a missing second trace fails before the first byte goes out. (A trace bad in
// its middle is found by write_export: see Options::in_place.)
Result<void> check_inputs(const std::vector<Input>& inputs);

// Writes every input into `out`. Throws trace::ParseError ("FILE:LINE: reason") on a bad trace;
// what was written by then is incomplete. Fails ("FILE: reason") where a trace that is not a
// regular file cannot be copied to be read twice (CSV, JSON), before the first byte.
Result<void> write_export(const std::vector<Input>& inputs, const Options& options, std::ostream& out);

}  // namespace qprof::exports
