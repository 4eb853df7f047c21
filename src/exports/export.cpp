// SPDX-License-Identifier: Apache-2.0
// qprof export's dispatch, and the CSV and JSON tables (table.hpp streams their rows).
#include "qprof/exports/export.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ostream>

#include "chrome_trace.hpp"
#include "qprof/common/csv_cell.hpp"
#include "qprof/common/number_text.hpp"
#include "qprof/common/version.hpp"
#include "qprof/trace/format.hpp"
#include "table.hpp"
#include "text_out.hpp"
#include "trace_name.hpp"

namespace qprof::exports {
namespace {

// A value the trace lacks, or one with no number (NaN), is `missing`: "" in CSV, null in JSON.
std::string value_text(const std::optional<double>& v, const char* missing) {
  return v ? number_text(*v, missing) : missing;
}

// One header line, then `trace,time_s,…` rows; a leading trace column only with several traces.
Result<void> write_csv(const std::vector<TraceSource>& inputs, const std::vector<std::string>& names,
                       const ColumnSet& set, Unit unit, std::ostream& out) {
  const std::vector<Column> columns = set.columns(unit);
  const bool several = inputs.size() > 1;
  if (several) out << "trace,";
  for (std::size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i].name;
  out << '\n';
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::string label = csv_cell(names[k]);
    const Result<void> streamed = stream_rows(inputs[k], set, unit, [&](const Row& r) {
      if (several) out << label << ',';
      out << number_text(r.time_s, "");
      for (const auto& v : r.values) out << ',' << value_text(v, "");
      out << '\n';
    });
    if (!streamed) return streamed;
  }
  return {};
}

// {"producer", "columns": [{name, unit}…], "traces": [{label, file, rows: [[t, v…]…]}…]}
Result<void> write_json(const std::vector<TraceSource>& inputs, const std::vector<std::string>& names,
                        const ColumnSet& set, Unit unit, std::ostream& out) {
  const std::vector<Column> columns = set.columns(unit);
  out << "{\"producer\":" << json_string("qprof " + std::string(kVersion)) << ",\n\"columns\":[";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    out << (i ? "," : "") << "{\"name\":" << json_string(columns[i].name)
        << ",\"unit\":" << json_string(columns[i].unit) << "}";
  }
  out << "],\n\"traces\":[";
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    out << (k ? ",\n" : "\n") << "{\"label\":" << json_string(names[k]) << ",\"file\":" << json_string(inputs[k].path())
        << ",\"rows\":[";
    bool first = true;
    const Result<void> streamed = stream_rows(inputs[k], set, unit, [&](const Row& r) {
      out << (first ? "\n[" : ",\n[") << number_text(r.time_s, "null");
      for (const auto& v : r.values) out << ',' << value_text(v, "null");
      out << ']';
      first = false;
    });
    if (!streamed) return streamed;
    out << "\n]}";
  }
  out << "\n]}\n";
  return {};
}

}  // namespace

std::optional<Format> parse_format(std::string_view name) {
  if (name == "chrome" || name == "perfetto") return Format::chrome;
  if (name == "csv") return Format::csv;
  if (name == "json") return Format::json;
  return std::nullopt;
}

Result<void> check_inputs(const std::vector<Input>& inputs) {
  const auto unreadable = [](const Input& in, int error) { return Failure{in.path + ": " + std::strerror(error)}; };
  for (const Input& in : inputs) {
    struct stat st {};
    if (::stat(in.path.c_str(), &st) != 0) return unreadable(in, errno);
    if (S_ISDIR(st.st_mode)) return unreadable(in, EISDIR);
    // A regular file is opened to see that it can be read; a FIFO is not (that would wait for its
    // writer, or take its data), nor is a pipe given as /dev/fd/N.
    if (!S_ISREG(st.st_mode)) continue;
    const int fd = ::open(in.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return unreadable(in, errno);
    ::close(fd);
  }
  return {};
}

Result<void> write_export(const std::vector<Input>& inputs, const Options& options, std::ostream& out) {
  if (options.format == Format::chrome) {
    // Written in one pass: for an output in place, a first pass to nowhere finds a bad trace.
    // Only regular files: a FIFO cannot be read twice.
    const auto regular = [](const Input& in) {
      struct stat st {};
      return ::stat(in.path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    };
    if (options.in_place && std::all_of(inputs.begin(), inputs.end(), regular)) {
      trace::Visitor nothing;  // the events refuse no record: the reading alone finds a bad trace
      for (const Input& in : inputs) trace::parse_file(in.path, nothing);
    }
    write_chrome_trace(inputs, options.unit, out);
    return {};
  }
  // CSV and JSON read every trace through (the column scan) before their first byte.
  std::vector<TraceSource> sources;
  for (const Input& in : inputs) {
    Result<TraceSource> source = TraceSource::open(in.path);
    if (!source) return source.failure();
    sources.push_back(std::move(*source));
  }
  ColumnSet set;
  std::vector<TraceIdentity> ids;
  for (const TraceSource& source : sources) {
    Result<TraceIdentity> id = set.scan(source);
    if (!id) return id.failure();
    ids.push_back(*id);
  }
  const std::vector<std::string> names = trace_names(inputs, ids);  // as the Chrome trace names them
  if (options.warn && set.children_left_out + set.gpus_left_out > 0) {
    options.warn(std::to_string(set.children_left_out) + " processes and " + std::to_string(set.gpus_left_out) +
                 " GPU devices beyond the first " + std::to_string(ColumnSet::kMaxColumnsPerKind) +
                 " of each have no column");
  }
  if (options.format == Format::csv) return write_csv(sources, names, set, options.unit, out);
  return write_json(sources, names, set, options.unit, out);
}

}  // namespace qprof::exports
