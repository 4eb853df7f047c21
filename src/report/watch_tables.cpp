// SPDX-License-Identifier: Apache-2.0
// What `qprof report` says of the memory limit in force and of the --watch-dir directories.
#include <algorithm>

#include "qprof/analysis/dirs.hpp"
#include "qprof/report/report.hpp"
#include "qprof/trace/footprint.hpp"

namespace qprof::report {
using analysis::dir_growths;
using analysis::DirGrowth;
using analysis::find_peak;
using analysis::memory_limit;
using analysis::Metric;
using trace::footprint_of;
using trace::TasksSample;
using trace::Trace;

namespace {

constexpr auto column = &Column::of;

}  // namespace

void add_limit_facts(Document& d, const Trace& trace) {
  const auto limit = memory_limit(trace);
  if (!limit) return;
  d.facts.push_back({column("limit", "limit", Kind::bytes), Cell::bytes(limit->bytes)});
  d.facts.push_back({column("limit_source", "limit source", Kind::text), Cell::string(limit->source)});
  // On the basis the limit counts: RLIMIT_AS caps address space (VSZ); a cgroup, Slurm or the
  // machine's memory count each page once, as the footprint does (Σ RSS where there is none).
  std::optional<Bytes> figure;
  std::string basis;
  if (limit->source == "rlimit-as") {
    for (const TasksSample& t : trace.tasks) figure = std::max(figure.value_or(0), t.vsz);
    basis = "VSZ";
  } else if (const auto f = footprint_of(trace)) {
    figure = f->peak, basis = "footprint";
  } else if (const auto p = find_peak(trace, Metric::rss)) {
    figure = p->bytes, basis = "Σ RSS";
  }
  if (!figure) return;
  d.facts.push_back({column("limit_basis", "limit basis", Kind::text), Cell::string(basis)});
  d.facts.push_back({column("peak_share_of_limit", basis + " of limit", Kind::share),
                     Cell::number(static_cast<double>(*figure) / static_cast<double>(limit->bytes))});
  d.facts.push_back({column("headroom", "headroom", Kind::signed_bytes),
                     Cell::number(static_cast<double>(limit->bytes) - static_cast<double>(*figure))});
}

std::optional<Table> watched_dirs_table(const Trace& trace) {
  const std::vector<DirGrowth> dirs = dir_growths(trace);
  if (dirs.empty()) return std::nullopt;
  Table t;
  t.name = "watched_dirs";
  t.title = "Watched directories (apparent size: Σ st_size of the files)";
  // The file system's free space is no size of the directory: in words of its own in human
  // formats (66.8 GiB beside directories of a few MiB had put the whole table in GiB), bytes in
  // machine ones. Into 80 columns it goes first, then the allocated size, each said.
  Column allocated = column("allocated_peak", "allocated peak", Kind::bytes);
  allocated.narrow = 1;
  Column free_bytes = column("fs_free_min", "fs free min", Kind::bytes);
  free_bytes.human = false;
  Column free_words = column("fs_free_min_words", "fs free min", Kind::text);
  free_words.machine = false;
  free_words.narrow = 2;
  t.columns = {
      column("metric", "metric", Kind::text),
      column("start", "at start", Kind::bytes),
      column("peak", "peak", Kind::bytes),
      column("growth", "growth", Kind::bytes),
      column("end", "at end", Kind::bytes),
      allocated,
      free_bytes,
      free_words,
      column("path", "path", Kind::text),
  };
  for (const DirGrowth& g : dirs) {
    if (t.rows.size() == kMaxTableRows) {
      leave_out_rows(t, dirs.size() - t.rows.size(), "directories");
      break;
    }
    t.rows.push_back({Cell::string("dir:" + g.name), Cell::bytes(g.start), Cell::bytes(g.peak), Cell::bytes(g.growth),
                      Cell::bytes(g.last), Cell::bytes(g.allocated_peak), Cell::bytes(g.fs_free_min),
                      Cell::string(human_bytes(g.fs_free_min)), Cell::string(g.dir.path)});
  }
  return t;
}

}  // namespace qprof::report
