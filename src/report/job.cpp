// SPDX-License-Identifier: Apache-2.0
// A job of several traces as one document and one-liners (qprof report --sum, qprof peak --sum).
#include "qprof/report/job.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "qprof/common/safe_text.hpp"
#include "qprof/trace/completeness.hpp"
#include "qprof/trace/oom.hpp"

namespace qprof::report {
using analysis::Align;
using analysis::clock_skew_note;
using analysis::find_peak;
using analysis::group_by_host;
using analysis::HostGroup;
using analysis::job_peak;
using analysis::job_stages;
using analysis::JobPeak;
using analysis::JobStage;
using analysis::kernel_floor_note;
using analysis::Metric;
using analysis::metric_info;
using analysis::Peak;
using analysis::rank_label;
using analysis::several_jobs_note;
using analysis::trace_duration;
using analysis::world_size_note;
using trace::JobMeta;
using trace::Trace;

namespace {

Column column(std::string key, std::string title, Kind kind, bool human = true) {
  Column c;
  c.key = std::move(key);
  c.title = std::move(title);
  c.kind = kind;
  c.human = human;
  return c;
}

std::vector<const Trace*> subset(const std::vector<const Trace*>& traces, const std::vector<std::size_t>& idx) {
  std::vector<const Trace*> out;
  for (std::size_t i : idx) out.push_back(traces[i]);
  return out;
}

std::string count_text(std::size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

Cell optional_number(const std::optional<std::int64_t>& v) {
  return v ? Cell::number(static_cast<double>(*v)) : Cell{};
}

// Each rank's figure is the one the job sums (job_footprint_metric): its value at the job's peak
// is part of that peak.
Table ranks_table(const std::vector<const Trace*>& traces, Metric asked, const std::optional<JobPeak>& job) {
  const Metric metric = analysis::job_footprint_metric(traces, asked);
  Table t;
  t.name = "ranks";
  t.title = "Ranks (" + std::string(metric_info(metric).what) + ")";
  t.columns = {column("label", "rank", Kind::text),
               column("trace", "trace", Kind::text, false),
               column("host", "host", Kind::text, false),
               column("rank", "rank", Kind::count, false),
               column("local_rank", "local rank", Kind::count, false),
               column("duration", "duration", Kind::seconds),
               column("peak", "peak", Kind::bytes),
               column("at_job_peak", "at job peak", Kind::bytes),
               column("highest", "highest", Kind::flag, false),
               column("incomplete", "incomplete", Kind::text, false),
               column("exit_status", "exit status", Kind::count, false),
               column("oom_kills", "OOM kills", Kind::count, false)};
  std::vector<std::optional<Peak>> peaks;
  for (const Trace* tr : traces) peaks.push_back(find_peak(*tr, metric));
  std::optional<std::size_t> highest;
  for (std::size_t i = 0; i < peaks.size(); ++i) {
    if (peaks[i] && (!highest || peaks[i]->bytes > peaks[*highest]->bytes)) highest = i;
  }
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const Trace& tr = *traces[i];
    Cell label = Cell::string(rank_label(tr));
    if (highest && *highest == i && traces.size() > 1) label.note = "highest peak";
    t.rows.push_back({label, Cell::string(tr.source), Cell::string(tr.meta.host), optional_number(tr.meta.job.rank),
                      optional_number(tr.meta.job.local_rank), Cell::number(trace_duration(tr)),
                      Cell::bytes(peaks[i] ? std::optional<Bytes>(peaks[i]->bytes) : std::nullopt),
                      Cell::bytes(job ? std::optional<Bytes>(job->each[i]) : std::nullopt),
                      Cell::number(highest && *highest == i ? 1 : 0), Cell::string(trace::incomplete_reason(tr)),
                      tr.exit && tr.exit->status_known ? Cell::number(tr.exit->status) : Cell{},
                      Cell::number(static_cast<double>(tr.oom_kills.size()))});
  }
  return t;
}

// `whole`: the job's peak, which is the peak of a host that holds every trace (read once: each
// sum reads every rank's file again).
Table hosts_table(const std::vector<const Trace*>& traces, Metric metric, Align align,
                  const std::optional<JobPeak>& whole) {
  Table t;
  t.name = "hosts";
  t.title = "Hosts (each host's ranks summed)";
  t.columns = {column("host", "host", Kind::text), column("traces", "traces", Kind::count),
               column("peak", "peak", Kind::bytes), column("peak_at", "at", Kind::seconds)};
  for (const HostGroup& g : group_by_host(traces)) {
    // A host's ranks are summed as the job's are (its footprint of the kind the whole job sums).
    const auto peak = g.traces.size() == traces.size()
                          ? whole
                          : job_peak(subset(traces, g.traces), analysis::job_footprint_metric(traces, metric), align);
    t.rows.push_back({Cell::string(g.host), Cell::number(static_cast<double>(g.traces.size())),
                      Cell::bytes(peak ? std::optional<Bytes>(peak->bytes) : std::nullopt),
                      peak && !peak->kernel_rank ? Cell::number(peak->t) : Cell{}});
  }
  return t;
}

Table stages_table(const std::vector<const Trace*>& traces, Align align) {
  Table t;
  t.name = "stages";
  t.title = "Stages across ranks (earliest start to latest end)";
  t.columns = {column("stage", "stage", Kind::text),
               column("start", "start", Kind::seconds),
               column("end", "end", Kind::seconds),
               column("duration", "duration", Kind::seconds),
               column("ranks", "ranks", Kind::count),
               column("slowest", "slowest rank", Kind::text),
               column("slowest_duration", "its duration", Kind::seconds),
               column("closed", "closed", Kind::flag, false)};
  bool unclosed = false;
  for (const JobStage& s : job_stages(traces, align)) {
    Cell name = Cell::string(s.name);
    if (!s.closed) name.note = "never ended on some rank";
    unclosed = unclosed || !s.closed;
    t.rows.push_back({name, Cell::number(s.start), Cell::number(s.end), Cell::number(s.end - s.start),
                      Cell::number(static_cast<double>(s.ranks)), Cell::string(rank_label(*traces[s.slowest])),
                      Cell::number(s.slowest_duration), Cell::number(s.closed ? 1 : 0)});
  }
  if (unclosed) t.notes.push_back("never ended: a rank's Start marker without its End runs to the end of its trace");
  return t;
}

std::string one_line(const std::string& name, std::optional<JobPeak> peak, Unit unit) {
  return name + "\t" + (peak ? peak_value(peak->bytes, unit, true) : std::string("-")) + "\n";
}

// `summed`: what the whole job sums for `metric` (job_footprint_metric), for a host's part of it.
nlohmann::ordered_json peak_object(const std::vector<const Trace*>& traces, Metric metric, Metric summed, Align align,
                                   Unit unit) {
  nlohmann::ordered_json j;
  const auto peak = job_peak(traces, summed, align);
  j["traces"] = traces.size();
  j["metric"] = std::string(metric_info(metric).name);
  j["align"] = align == Align::wall ? "wall" : "start";
  if (peak) {
    j["bytes"] = peak->bytes;
    j["value"] = in_unit(peak->bytes, unit);
    j["unit"] = std::string(unit_name(unit));
    j["time_s"] = peak->kernel_rank ? nlohmann::ordered_json() : nlohmann::ordered_json(peak->t);
    if (peak->kernel_rank) j["job_peak_kernel_mark_of"] = rank_label(*traces[*peak->kernel_rank]);
  } else {
    j["bytes"] = nullptr;
  }
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < traces.size(); ++i) {
    nlohmann::ordered_json r;
    r["file"] = traces[i]->source;
    r["host"] = traces[i]->meta.host;
    if (traces[i]->meta.job.rank) r["rank"] = *traces[i]->meta.job.rank;
    if (const auto own = find_peak(*traces[i], summed)) {
      r["peak_bytes"] = own->bytes;
    }
    if (peak) r["bytes_at_job_peak"] = peak->each[i];
    r["oom_kills"] = traces[i]->oom_kills.size();
    ranks.push_back(std::move(r));
  }
  j["ranks"] = std::move(ranks);
  return j;
}

// The ranks whose traces are cut short or not whole, as one sentence: the sum counts what they
// hold (a rank killed early adds nothing after its last sample). The first three are named, with why.
std::optional<std::string> incomplete_ranks(const std::vector<const Trace*>& traces) {
  constexpr std::size_t kNamed = 3;
  std::string named;
  std::size_t count = 0;
  for (const Trace* tr : traces) {
    const std::string why = trace::incomplete_reason(*tr);
    if (why.empty()) continue;
    if (++count <= kNamed) named += (named.empty() ? "" : "; ") + rank_label(*tr) + " (" + tr->source + "): " + why;
  }
  if (count == 0) return std::nullopt;
  if (count > kNamed) named += "; and " + std::to_string(count - kNamed) + " more";
  return count_text(count, "trace") + " incomplete, the sum counts what " +
         (count == 1 ? "it holds: " : "they hold: ") + named;
}

}  // namespace

Document job_report(const std::vector<const Trace*>& traces, Metric metric, Align align) {
  Document d;
  auto fact = [&](std::string key, std::string title, Kind kind, Cell cell) {
    d.facts.push_back({column(std::move(key), std::move(title), kind), std::move(cell)});
  };
  const auto hosts = group_by_host(traces);
  // Said first, as for one run: a rank's process killed explains a sum that stays under the limit.
  for (const std::string& kill : rank_oom_kills(traces)) {
    const std::string key = d.facts.empty() ? "oom_kill" : "oom_kill_" + std::to_string(d.facts.size() + 1);
    fact(key, "OOM kill", Kind::text, Cell::string(kill));
  }
  fact("traces", "traces", Kind::count, Cell::number(static_cast<double>(traces.size())));
  d.facts.push_back(
      {column("metric", "metric", Kind::text, false), Cell::string(std::string(metric_info(metric).name))});
  fact("host_count", "hosts", Kind::count, Cell::number(static_cast<double>(hosts.size())));
  const JobMeta* first = traces.empty() ? nullptr : &traces.front()->meta.job;
  if (first && !first->job_id.empty()) fact("job_id", "job id", Kind::text, Cell::string(first->job_id));
  if (first && !first->launcher.empty()) fact("launcher", "launcher", Kind::text, Cell::string(first->launcher));
  if (first && first->world_size) {
    fact("world_size", "world size", Kind::count, Cell::number(static_cast<double>(*first->world_size)));
  }
  fact("align", "time axis", Kind::text,
       Cell::string(align == Align::wall ? "wall clock, from the earliest start" : "each trace from its own start"));
  const auto peak = job_peak(traces, metric, align);
  if (peak) {
    fact("job_peak", "job peak (" + std::string(metric_info(metric).title) + ", ranks summed)", Kind::bytes,
         Cell::bytes(peak->bytes));
    if (peak->kernel_rank) {
      const Trace& rank = *traces[*peak->kernel_rank];
      fact("job_peak_floor", "job peak from", Kind::text,
           Cell::string(kernel_floor_note(rank, peak->each[*peak->kernel_rank])));
      d.facts.push_back({column("job_peak_kernel_mark_of", "job peak from the mark of", Kind::text, false),
                         Cell::string(rank_label(rank))});
    } else {
      fact("job_peak_at", "job peak at", Kind::moment, Cell::number(peak->t));
    }
  }
  if (const auto ranks = world_size_note(traces)) fact("missing_ranks", "note", Kind::text, Cell::string(*ranks));
  if (const auto jobs = several_jobs_note(traces)) fact("several_jobs", "jobs", Kind::text, Cell::string(*jobs));
  if (const auto kinds = analysis::mixed_footprint_note(traces); kinds && metric == Metric::footprint) {
    fact("footprint_kinds", "footprint", Kind::text, Cell::string(*kinds));
  }
  if (const auto cut = incomplete_ranks(traces)) fact("incomplete", "trace incomplete", Kind::text, Cell::string(*cut));
  if (const auto skew = clock_skew_note(traces)) fact("clock_skew", "clock skew", Kind::text, Cell::string(*skew));
  d.tables.push_back(ranks_table(traces, metric, peak));
  d.tables.push_back(hosts_table(traces, metric, align, peak));
  d.tables.push_back(stages_table(traces, align));
  d.csv_table = 0;
  return d;
}

std::vector<std::string> rank_oom_kills(const std::vector<const Trace*>& traces) {
  std::vector<std::string> out;
  for (const Trace* t : traces) {
    for (const trace::OomKill& k : t->oom_kills)
      out.push_back(rank_label(*t) + ": " + trace::describe_oom_kill(k, t->t0()));
  }
  return out;
}

std::string job_peak_lines(const std::vector<const Trace*>& traces, Metric metric, Align align, bool by_host,
                           Unit unit) {
  if (!by_host)
    return one_line("job (" + count_text(traces.size(), "trace") + ")", job_peak(traces, metric, align), unit);
  std::string out;
  for (const HostGroup& g : group_by_host(traces)) {
    out += one_line(terminal_text(g.host) + " (" + count_text(g.traces.size(), "trace") + ")",
                    job_peak(subset(traces, g.traces), analysis::job_footprint_metric(traces, metric), align), unit);
  }
  return out;
}

std::string job_peak_json(const std::vector<const Trace*>& traces, Metric metric, Align align, bool by_host,
                          Unit unit) {
  if (!by_host)
    return peak_object(traces, metric, analysis::job_footprint_metric(traces, metric), align, unit).dump(2) + "\n";
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const HostGroup& g : group_by_host(traces)) {
    nlohmann::ordered_json j;
    j["host"] = g.host;
    const nlohmann::ordered_json group =
        peak_object(subset(traces, g.traces), metric, analysis::job_footprint_metric(traces, metric), align, unit);
    for (const auto& [k, v] : group.items()) j[k] = v;
    all.push_back(std::move(j));
  }
  return all.dump(2) + "\n";
}

}  // namespace qprof::report
