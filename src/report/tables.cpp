// SPDX-License-Identifier: Apache-2.0
// Documents filled from analysis: the stage table, the peaks table, `qprof report`'s document and
// `qprof compare`'s.
#include <algorithm>

#include "qprof/analysis/checkpoints.hpp"
#include "qprof/analysis/default_metric.hpp"
#include "qprof/report/report.hpp"
#include "qprof/report/trend.hpp"
#include "qprof/trace/completeness.hpp"
#include "qprof/trace/footprint.hpp"
#include "usage_report.hpp"

namespace qprof::report {
using analysis::available_metrics;
using analysis::CompareColumn;
using analysis::CompareEntry;
using analysis::CompareValue;
using analysis::Comparison;
using analysis::cpu_use;
using analysis::find_peak;
using analysis::has_metric;
using analysis::io_totals;
using analysis::kMaxStageColumns;
using analysis::largest_cgroup_sample;
using analysis::Metric;
using analysis::metric_info;
using analysis::peak_bracket;
using analysis::peak_meaning;
using analysis::relative_time;
using analysis::stage_stats;
using analysis::stages_at;
using analysis::StageStats;
using analysis::trace_duration;
using trace::basis_name;
using trace::footprint_of;
using trace::Trace;

namespace {

constexpr auto column = &Column::of;

Column machine_only(Column c) {
  c.human = false;
  return c;
}

Cell seconds_cell(std::optional<Seconds> s) { return s ? Cell::number(*s) : Cell{}; }

}  // namespace

Table stage_table(const Trace& trace, Metric metric) {
  Table t;
  t.name = "stages";
  t.title = "Stages (" + std::string(metric_info(metric).what) + ")";
  // The footprint says its basis: "Stages (footprint, shared pages once: Σ PSS)".
  if (const auto f = footprint_of(trace); f && metric == Metric::footprint)
    t.title = "Stages (footprint, shared pages once: " + std::string(basis_name(f->basis)) + ")";
  t.columns = {
      column("stage", "stage", Kind::text),
      column("start", "start", Kind::seconds),
      column("end", "end", Kind::seconds),
      column("duration", "duration", Kind::seconds),
      column("share", "share", Kind::share),
      column("peak", "peak", Kind::bytes),
      machine_only(column("peak_at", "peak at", Kind::seconds)),
      column("mem_start", "at start", Kind::bytes),
      column("mem_end", "at end", Kind::bytes),
      column("mem_delta", "delta", Kind::signed_bytes),
      machine_only(column("closed", "closed", Kind::flag)),
  };
  // Narrowed to a terminal (the summary after qprof run): the levels at start and end go first,
  // then the times; the name, duration, share, peak and delta stay.
  for (Column& c : t.columns) {
    if (c.key == "mem_start" || c.key == "mem_end") c.narrow = 2;
    if (c.key == "start" || c.key == "end") c.narrow = 1;
  }
  bool unclosed = false;
  const std::vector<StageStats> stats = stage_stats(trace, metric);
  for (const StageStats& s : stats) {
    if (t.rows.size() == kMaxTableRows) {
      leave_out_rows(t, stats.size() - t.rows.size(), "stages");
      break;
    }
    Cell name = Cell::string(s.stage.name);
    if (!s.stage.closed) name.note = "never ended";
    unclosed = unclosed || !s.stage.closed;
    std::optional<Seconds> peak_at;
    if (s.peak && s.peak->t) peak_at = relative_time(trace, *s.peak->t);
    Cell delta;
    if (s.at_start && s.at_end) delta = Cell::number(static_cast<double>(*s.at_end) - static_cast<double>(*s.at_start));
    t.rows.push_back({
        std::move(name),
        Cell::number(s.start),
        Cell::number(s.end),
        Cell::number(s.duration),
        Cell::number(s.share),
        Cell::bytes(s.peak ? std::optional<Bytes>(s.peak->bytes) : std::nullopt),
        seconds_cell(peak_at),
        Cell::bytes(s.at_start),
        Cell::bytes(s.at_end),
        delta,
        Cell::number(s.stage.closed ? 1 : 0),
    });
  }
  if (unclosed)
    t.notes.push_back("never ended: a Start marker without its End; the stage runs to the end of the trace");
  return t;
}

Table peaks_table(const Trace& trace) {
  Table t;
  t.name = "peaks";
  t.title = "Peaks";
  t.columns = {
      column("metric", "metric", Kind::text),
      column("peak", "peak", Kind::bytes),
      column("at", "at", Kind::seconds),
      column("stage", "stage", Kind::text),
      machine_only(column("kernel_high_water_mark", "kernel high-water mark", Kind::flag)),
      column("what", "what", Kind::text),
  };
  for (Metric m : available_metrics(trace)) {
    const auto p = find_peak(trace, m);
    if (!p) continue;
    std::optional<Seconds> at;
    std::string stage;
    if (p->t) {
      at = relative_time(trace, *p->t);
      if (const auto where = stages_at(trace, *p->t); !where.empty()) stage = where.front()->name;
    }
    const std::string what = peak_meaning(trace, m);
    t.rows.push_back({
        Cell::string(std::string(metric_info(m).name)),
        Cell::bytes(p->bytes),
        seconds_cell(at),
        Cell::string(stage),
        Cell::number(p->exact ? 1 : 0),
        Cell::string(what),
    });
  }
  return t;
}

Document trace_report(const Trace& trace, std::optional<Metric> asked) {
  const analysis::MetricChoice chosen = analysis::choose_metric(asked, trace);
  const Metric metric = chosen.metric;
  Document d;
  auto fact = [&](std::string key, std::string title, Kind kind, Cell cell) {
    d.facts.push_back({column(std::move(key), std::move(title), kind), std::move(cell)});
  };
  fact("trace", "trace", Kind::text, Cell::string(trace.source));
  fact("command", "command", Kind::text, Cell::string(trace.cmdline));
  // A trace cut short (qprof or the machine stopped first): said in every format, not only on stderr.
  if (const std::string why = trace::incomplete_reason(trace); !why.empty())
    fact("incomplete", "trace incomplete", Kind::text, Cell::string(why));
  // Machine formats name the stage table's metric; human ones in its title.
  d.facts.push_back(
      {machine_only(column("metric", "metric", Kind::text)), Cell::string(std::string(metric_info(metric).name))});
  say_metric_fallback(d, chosen.fallback);
  // The answer first: the footprint (shared pages once), then Σ RSS as mprof counts it.
  if (const auto f = footprint_of(trace)) {
    fact("footprint", "footprint", Kind::bytes, Cell::bytes(f->peak));
    fact("footprint_basis", "footprint basis", Kind::text, Cell::string(std::string(basis_name(f->basis))));
    if (f->unreclaimable) fact("unreclaimable_peak", "unreclaimable peak", Kind::bytes, Cell::bytes(*f->unreclaimable));
    if (f->reclaimable) fact("reclaimable_at_peak", "reclaimable at peak", Kind::bytes, Cell::bytes(*f->reclaimable));
  }
  if (const auto p = find_peak(trace, Metric::rss))
    fact("rss_sum_peak", "Σ RSS peak", Kind::bytes, Cell::bytes(p->bytes));
  if (!trace.meta.host.empty()) fact("host", "host", Kind::text, Cell::string(trace.meta.host));
  fact("duration", "duration", Kind::seconds, Cell::number(trace_duration(trace)));
  fact("samples", "samples", Kind::count, Cell::number(static_cast<double>(trace.samples())));
  if (trace.meta.interval > 0) fact("interval", "interval", Kind::seconds, Cell::number(trace.meta.interval));
  if (trace.exit) {
    // Attached to a process that was not qprof's child: its status was never learnt, and a 0 here
    // would read as success (to a script reading the JSON too).
    fact("exit_status", "exit status", Kind::count,
         trace.exit->status_known ? Cell::number(trace.exit->status) : Cell{});
    if (!trace.exit->status_known) fact("exit_status_known", "exit status known", Kind::flag, Cell::number(0));
    if (trace.exit->signal) fact("signal", "signal", Kind::count, Cell::number(trace.exit->signal));
    if (trace.exit->timed_out) fact("timed_out", "timed out", Kind::flag, Cell::number(1));
  }
  if (const auto cpu = cpu_use(trace)) {
    fact("cpu", "CPU time", Kind::seconds, Cell::number(cpu->seconds));
    if (cpu->peak_percent) fact("cpu_peak_percent", "CPU peak %", Kind::count, Cell::number(*cpu->peak_percent));
  }
  if (const auto io = io_totals(trace)) {
    fact("disk_read", "disk read", Kind::bytes, Cell::bytes(io->read_bytes));
    fact("disk_write", "disk written", Kind::bytes, Cell::bytes(io->write_bytes));
    fact("syscall_read", "rchar", Kind::bytes, Cell::bytes(io->rchar));
    fact("syscall_write", "wchar", Kind::bytes, Cell::bytes(io->wchar));
  }
  if (const auto cg = largest_cgroup_sample(trace); cg && cg->anon && cg->file) {
    fact("cgroup_anon", "cgroup anon", Kind::bytes, Cell::bytes(*cg->anon));
    fact("cgroup_file", "cgroup file", Kind::bytes, Cell::bytes(*cg->file));
    // Of file: shared memory, which cannot be dropped (reclaimable at peak is file less it).
    if (cg->shmem) fact("cgroup_shmem", "cgroup shmem (of file)", Kind::bytes, Cell::bytes(*cg->shmem));
  }
  if (const auto b = peak_bracket(trace); has_metric(trace, Metric::hwm_sum) && !b.upper) {
    fact("hwm_sum_is_bound", "Σ VmHWM bound", Kind::flag, Cell::number(0));
  }
  if (trace.unread_processes > 0) {
    // Every figure misses them: said before the figures, in every format.
    fact("unread_processes", "INCOMPLETE: processes not read", Kind::count,
         Cell::number(static_cast<double>(trace.unread_processes)));
  }
  add_limit_facts(d, trace);
  add_trend_facts(d, trace);
  if (!trace.notes.empty()) {
    std::string notes;
    for (const std::string& n : trace.notes) notes += (notes.empty() ? "" : "; ") + n;
    fact("notes", "notes", Kind::text, Cell::string(notes));
  }
  detail::add_usage_facts(trace, d);
  d.tables.push_back(peaks_table(trace));
  d.tables.push_back(stage_table(trace, metric));
  add_stage_trends(d.tables.back(), trace, metric);
  d.csv_table = 1;
  detail::add_bottlenecks(trace, d.tables[1], d);
  if (auto dirs = watched_dirs_table(trace)) d.tables.push_back(std::move(*dirs));
  return d;
}

void say_metric_fallback(Document& d, const std::string& fallback) {
  if (fallback.empty()) return;
  d.facts.push_back({column("metric_fallback", "metric", Kind::text), Cell::string(fallback)});
}

namespace {

// The comparison's figure columns, in the order human formats show them: the answer first (the
// footprint, shared pages once), then the figure the ratio is on, Σ RSS as mprof counts it, the
// duration, --stages' stages, the rest. A narrowed text table keeps the footprint and the compared
// figure, then what was asked for (the stages), then the others in that order.
std::vector<Column> comparison_columns(const Comparison& c, bool repeated) {
  std::vector<Column> out;
  int stage = 0, other = 0;
  const bool asked_stages =
      std::any_of(c.columns.begin(), c.columns.end(), [](const CompareColumn& cc) { return !cc.stage.empty(); });
  for (const CompareColumn& cc : c.columns) {
    Column col = column(cc.key, cc.title, cc.kind == CompareColumn::Kind::seconds ? Kind::seconds : Kind::bytes);
    col.key_detail = cc.stage;
    col.has_lowest = col.has_ratio = true;
    col.has_spread = repeated;
    col.show_ratio = cc.key == "duration" || (cc.metric == c.metric && cc.stage.empty());
    const bool peak = cc.metric && cc.stage.empty();
    if (peak && *cc.metric == Metric::footprint)
      col.order = col.narrow = 1;
    else if (peak && *cc.metric == c.metric)
      col.order = col.narrow = 2;
    else if (peak && *cc.metric == Metric::rss)
      col.order = col.narrow = 3;
    else if (cc.key == "duration")
      col.order = col.narrow = 4;
    else if (!cc.stage.empty()) {
      col.order = 10 + ++stage;
      col.narrow = 2 + stage;
    } else {
      col.order = 100 + ++other;
      col.narrow = 1000 + other;
    }
    if (asked_stages && cc.stage.empty() && col.narrow >= 3 && col.narrow <= 4) col.narrow += 100;
    out.push_back(std::move(col));
  }
  return out;
}

}  // namespace

Document comparison_document(const std::vector<CompareEntry>& entries, const Comparison& c,
                             const std::vector<RowBudget>& budgets) {
  Document d;
  // Human formats name the metric in the ratio's column.
  d.facts.push_back(
      {machine_only(column("metric", "metric", Kind::text)), Cell::string(std::string(metric_info(c.metric).name))});
  const bool repeated =
      std::any_of(entries.begin(), entries.end(), [](const CompareEntry& e) { return e.runs.size() > 1; });
  const bool budgeted = std::any_of(budgets.begin(), budgets.end(), [](const RowBudget& b) { return !b.text.empty(); });

  Table t;
  t.name = "comparison";
  t.columns.push_back(column("label", "label", Kind::text));
  t.columns.push_back(machine_only(column("trace", "trace", Kind::text)));
  Column runs = column("runs", "runs", Kind::count);
  runs.human = repeated;
  t.columns.push_back(runs);
  for (Column& col : comparison_columns(c, repeated)) t.columns.push_back(std::move(col));
  if (budgeted) {
    // The verdict is why a budget was given: never left out, shown last.
    Column budget = column("budget", "budget", Kind::text);
    budget.order = 10000;
    t.columns.push_back(std::move(budget));
    t.columns.push_back(machine_only(column("over_budget", "over budget", Kind::flag)));
  }

  for (std::size_t r = 0; r < entries.size(); ++r) {
    const CompareEntry& e = entries[r];
    std::string sources;
    for (const Trace* tr : e.runs) sources += (sources.empty() ? "" : ";") + tr->source;
    std::vector<Cell> row{Cell::string(e.label), Cell::string(sources),
                          Cell::number(static_cast<double>(e.runs.size()))};
    for (const CompareValue& v : c.rows[r]) {
      Cell cell;
      if (v.value) {
        cell.value = v.value->median;
        cell.min = v.value->min;
        cell.max = v.value->max;
      }
      cell.ratio = v.ratio;
      cell.lowest = v.lowest;
      cell.summed = e.summed;
      row.push_back(std::move(cell));
    }
    if (budgeted) {
      const RowBudget b = r < budgets.size() ? budgets[r] : RowBudget{};
      row.push_back(Cell::string(b.text));
      row.push_back(b.text.empty() ? Cell{} : Cell::number(b.over ? 1 : 0));
    }
    t.rows.push_back(std::move(row));
  }
  if (!entries.empty()) t.notes.push_back("ratios: to the first row (" + entries.front().label + ")");
  if (repeated) t.notes.push_back("repeated runs: the median, then (min\u2013max)");
  if (c.stages_left_out > 0) {
    t.notes.push_back(std::to_string(c.stages_left_out) + " more stage names without a column: the first " +
                      std::to_string(kMaxStageColumns) + " have one");
  }
  d.tables.push_back(std::move(t));
  return d;
}

}  // namespace qprof::report
