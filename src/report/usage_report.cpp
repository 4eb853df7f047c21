// SPDX-License-Identifier: Apache-2.0
#include "usage_report.hpp"

#include <algorithm>

#include "qprof/analysis/bottleneck.hpp"

namespace qprof::report::detail {
using analysis::stage_bottlenecks;
using analysis::StageBottleneck;
using trace::is_vsz_peak;
using trace::MemKindsSample;
using trace::MemSample;
using trace::splits_peak;
using trace::TasksSample;
using trace::Trace;

namespace {

Column column(std::string key, std::string title, Kind kind, bool human = true, bool machine = true) {
  Column c;
  c.key = std::move(key);
  c.title = std::move(title);
  c.kind = kind;
  c.human = human;
  c.machine = machine;
  return c;
}

Cell optional(const std::optional<double>& v, double scale = 1.0) { return v ? Cell::number(*v * scale) : Cell{}; }

// A stage's intervals start at its own first reading, the run's at its start: over other windows,
// a stage caught a burst the run's split (51 % against 49). The run's CPU peak fact (tables.cpp)
// is the highest measured, its stages' included: never below one of them.
void raise_run_cpu_peak(const std::vector<StageBottleneck>& stages, Document& doc) {
  for (Document::Fact& f : doc.facts) {
    if (f.column.key != "cpu_peak_percent" || !f.cell.value) continue;
    for (const StageBottleneck& b : stages) {
      if (b.cpu_peak_percent && *b.cpu_peak_percent > *f.cell.value) f.cell.value = *b.cpu_peak_percent;
    }
  }
}

}  // namespace

void add_usage_facts(const Trace& t, Document& doc) {
  const auto fact = [&](std::string key, std::string title, Kind kind, Cell cell) {
    doc.facts.push_back({column(std::move(key), std::move(title), kind), std::move(cell)});
  };
  // The split and the VSZ peak only where they agree with the Σ RSS peak (usage_samples.hpp).
  Bytes rss_peak = 0;
  for (const MemSample& m : t.mem) rss_peak = std::max(rss_peak, m.bytes);
  if (!t.kinds.empty()) {
    const auto largest =
        std::max_element(t.kinds.begin(), t.kinds.end(),
                         [](const MemKindsSample& a, const MemKindsSample& b) { return a.rss() < b.rss(); });
    Bytes swap = 0;
    for (const MemKindsSample& k : t.kinds) swap = std::max(swap, k.swap);
    if (splits_peak(*largest, rss_peak)) {
      fact("kinds_at", "RSS by kind at", Kind::moment, Cell::number(largest->t - t.t0()));
      fact("kinds_anon", "  anon", Kind::bytes, Cell::bytes(largest->anon));
      fact("kinds_file", "  file-backed", Kind::bytes, Cell::bytes(largest->file));
      fact("kinds_shmem", "  shmem", Kind::bytes, Cell::bytes(largest->shmem));
    }
    fact("swap_peak", "swap peak", Kind::bytes, Cell::bytes(swap));
  }
  if (!t.tasks.empty()) {
    std::uint64_t threads = 0, processes = 0;
    Bytes vsz = 0;
    for (const TasksSample& s : t.tasks) {
      threads = std::max(threads, s.threads);
      processes = std::max(processes, s.processes);
      vsz = std::max(vsz, s.vsz);
    }
    fact("threads_peak", "threads at most", Kind::count, Cell::number(static_cast<double>(threads)));
    fact("processes_peak", "processes at most", Kind::count, Cell::number(static_cast<double>(processes)));
    if (is_vsz_peak(vsz, rss_peak)) fact("vsz_peak", "VSZ peak", Kind::bytes, Cell::bytes(vsz));
  }
}

void add_bottlenecks(const Trace& t, Table& stages, Document& doc) {
  // A trace without CPU, I/O or GPU busy series (mprof's, older qprof's) has no such figures.
  if (t.cpu.empty() && t.io.empty() && t.gpu_util.empty()) return;
  const std::vector<StageBottleneck> all = stage_bottlenecks(t);
  if (all.empty() || all.size() != stages.rows.size()) return;
  raise_run_cpu_peak(all, doc);
  const bool gpu = !t.gpu_util.empty();

  // Machine formats: columns of the stage table.
  const std::size_t first = stages.columns.size();
  stages.columns.push_back(column("cpu_mean_percent", "CPU mean %", Kind::count, false));
  stages.columns.push_back(column("cpu_peak_percent", "CPU peak %", Kind::count, false));
  if (gpu) {
    stages.columns.push_back(column("gpu_busy_mean_percent", "GPU busy mean %", Kind::count, false));
    stages.columns.push_back(column("gpu_busy_peak_percent", "GPU busy peak %", Kind::count, false));
  }
  stages.columns.push_back(column("read_mean_bytes_per_s", "read mean B/s", Kind::count, false));
  stages.columns.push_back(column("read_peak_bytes_per_s", "read peak B/s", Kind::count, false));
  stages.columns.push_back(column("memory_growth", "Σ RSS growth", Kind::signed_bytes, false));
  stages.columns.push_back(column("input_bound", "input-bound", Kind::flag, false));
  stages.columns.push_back(column("verdict", "verdict", Kind::text, false));
  (void)first;

  // Human formats: a table of its own.
  Table h;
  h.name = "bottlenecks";
  h.title = "Bottlenecks per stage (CPU % of one core, GPU busy %, storage reads)";
  h.columns = {column("stage", "stage", Kind::text, true, false),
               column("cpu_mean", "CPU mean %", Kind::count, true, false),
               column("cpu_peak", "CPU peak %", Kind::count, true, false)};
  if (gpu) {
    h.columns.push_back(column("gpu_mean", "GPU mean %", Kind::count, true, false));
    h.columns.push_back(column("gpu_peak", "GPU peak %", Kind::count, true, false));
  }
  h.columns.push_back(column("read_mean", "read MB/s", Kind::count, true, false));
  h.columns.push_back(column("read_peak", "read peak MB/s", Kind::count, true, false));
  // No growth here: the stage table's delta is the stage's, in the report's metric (a Σ RSS growth
  // beside it read +50.3 MiB where the footprint's delta said -0.6, for a stage that ran to the exit).

  for (std::size_t i = 0; i < all.size(); ++i) {
    const StageBottleneck& b = all[i];
    const Cell growth = b.memory_growth ? Cell::number(static_cast<double>(*b.memory_growth)) : Cell{};
    std::vector<Cell>& row = stages.rows[i];
    row.push_back(optional(b.cpu_mean_percent));
    row.push_back(optional(b.cpu_peak_percent));
    if (gpu) {
      row.push_back(optional(b.gpu_mean_percent));
      row.push_back(optional(b.gpu_peak_percent));
    }
    row.push_back(optional(b.read_mean_bytes_per_s));
    row.push_back(optional(b.read_peak_bytes_per_s));
    row.push_back(growth);
    row.push_back(Cell::number(b.input_bound ? 1 : 0));
    row.push_back(Cell::string(b.verdict));

    Cell name = Cell::string(b.stage);
    if (!b.closed) name.note = "never ended";  // as the stage table names it
    std::vector<Cell> hrow = {name, optional(b.cpu_mean_percent), optional(b.cpu_peak_percent)};
    if (gpu) {
      hrow.push_back(optional(b.gpu_mean_percent));
      hrow.push_back(optional(b.gpu_peak_percent));
    }
    hrow.push_back(optional(b.read_mean_bytes_per_s, 1e-6));
    hrow.push_back(optional(b.read_peak_bytes_per_s, 1e-6));
    h.rows.push_back(std::move(hrow));
    if (!b.verdict.empty()) h.notes.push_back(b.stage + ": " + b.verdict);
  }
  const auto unmeasured = [&t](const StageBottleneck& b) {
    return (!t.cpu.empty() && !b.cpu_mean_percent) || (!t.io.empty() && !b.read_mean_bytes_per_s);
  };
  if (std::any_of(all.begin(), all.end(), unmeasured)) {
    h.notes.push_back("-: fewer than two CPU or I/O readings inside the stage (they are read on the stats schedule)");
  }
  if (!gpu) h.notes.push_back("no GPU utilisation in this trace (GPUUTIL lines): no GPU verdict");
  doc.tables.push_back(std::move(h));
}

}  // namespace qprof::report::detail
