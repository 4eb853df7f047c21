// SPDX-License-Identifier: Apache-2.0
// The Quark-layout YAML report (see report_yaml.hpp), emitted with yaml-cpp.
#include <yaml-cpp/yaml.h>

#include <cassert>
#include <cmath>

#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/checkpoints.hpp"
#include "qprof/trace/completeness.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/report/quark_yaml.hpp"

#include "qprof/analysis/bottleneck.hpp"
#include "qprof/common/number_text.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/version.hpp"
#include "trend_yaml.hpp"

namespace qprof::report {
using analysis::available_metrics;
using analysis::Checkpoint;
using analysis::checkpoints;
using analysis::dir_growths;
using analysis::DirGrowth;
using analysis::find_peak;
using analysis::has_metric;
using analysis::io_totals;
using analysis::memory_limit;
using analysis::Metric;
using analysis::metric_info;
using analysis::MetricInfo;
using analysis::MetricKind;
using analysis::Peak;
using analysis::peak_dir_growth;
using analysis::peak_meaning;
using analysis::relative_time;
using analysis::stage_bottlenecks;
using analysis::stage_stats;
using analysis::StageBottleneck;
using analysis::stages_at;
using analysis::StageStats;
using analysis::trace_duration;
using trace::basis_name;
using trace::footprint_of;
using trace::Trace;

namespace {

// Numbers are emitted from text of our own (common/number_text.hpp): fixed notation with the zeros
// trimmed keeps them floats for every reader (Python's yaml reads "1e-07" as a string).
std::string fixed(double v, int decimals) { return yaml_float(v, decimals); }

std::string mb(Bytes b) { return fixed(trace::to_mib(b), 3); }
std::string mb(std::optional<Bytes> b) { return mb(b.value_or(0)); }
std::string mb(const std::optional<Peak>& p) { return mb(p ? p->bytes : 0); }
std::string secs(Seconds s) { return fixed(s, 6); }

void key(YAML::Emitter& e, const char* k) { e << YAML::Key << k << YAML::Value; }
// A plain value: a number formatted above, an integer, a bool.
template <class T>
void put(YAML::Emitter& e, const char* k, const T& v) {
  e << YAML::Key << k << YAML::Value << v;
}
// Text is always quoted: yaml-cpp writes the string "true" or "12" plain, which reads back as a
// bool or a number. Any bytes a label holds become text every YAML reader accepts (yaml_text).
void text(YAML::Emitter& e, const char* k, const std::string& v) {
  e << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << yaml_text(v);
}

void emit_peaks(YAML::Emitter& e, const Trace& t) {
  key(e, "peaks");
  e << YAML::BeginMap;
  for (Metric m : available_metrics(t)) {
    if (m.kind == MetricKind::dir) continue;  // under watched_dirs, where the path is quoted text
    const auto p = find_peak(t, m);
    if (!p) continue;
    const MetricInfo& info = metric_info(m);
    e << YAML::Key << std::string(info.name) << YAML::Value << YAML::BeginMap;
    put(e, "mb", mb(p->bytes));
    put(e, "bytes", p->bytes);
    if (p->t) {
      put(e, "relative_time_secs", secs(relative_time(t, *p->t)));
      const auto where = stages_at(t, *p->t);
      key(e, "stage");
      if (where.empty())
        e << YAML::Null;
      else
        e << YAML::DoubleQuoted << yaml_text(where.front()->name);
    }
    put(e, "kernel_high_water_mark", p->exact);
    text(e, "what", peak_meaning(t, m));
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
}

void emit_stages(YAML::Emitter& e, const Trace& t) {
  key(e, "stages");
  e << YAML::BeginSeq;
  for (const StageStats& s : stage_stats(t, Metric::rss)) {
    e << YAML::BeginMap;
    text(e, "name", s.stage.name);
    put(e, "start_secs", secs(s.start));
    put(e, "end_secs", secs(s.end));
    put(e, "duration_secs", secs(s.duration));
    put(e, "share_of_time", fixed(s.share, 4));
    put(e, "peak_memory_mb", mb(s.peak));
    put(e, "start_memory_mb", mb(s.at_start));
    put(e, "end_memory_mb", mb(s.at_end));
    const double delta = trace::to_mib(s.at_end.value_or(0)) - trace::to_mib(s.at_start.value_or(0));
    put(e, "delta_memory_mb", fixed(delta, 3));
    put(e, "closed", s.stage.closed);
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

// PSS, USS, CPU time and the GPU figure's age at each checkpoint: the record keys Quark has no
// name for.
void emit_checkpoint_extras(YAML::Emitter& e, const std::vector<Checkpoint>& cps, const Trace& t) {
  if (t.pss.empty() && t.cpu.empty() && t.gpu.empty()) return;
  key(e, "checkpoints");
  e << YAML::BeginSeq;
  for (const Checkpoint& c : cps) {
    e << YAML::BeginMap;
    text(e, "step", c.step);
    if (!t.pss.empty()) {
      put(e, "pss_mb", mb(c.at.pss));
      put(e, "uss_mb", mb(c.at.uss));
      // PSS runs on a slower schedule: how old its figure was at the checkpoint.
      if (c.at.pss_age) put(e, "pss_age_s", secs(*c.at.pss_age));
    }
    if (!t.cpu.empty()) put(e, "cpu_seconds", fixed(c.at.cpu_seconds.value_or(0), 6));
    // 0 when the GPU was queried for the checkpoint; more when that query timed out (100 ms).
    if (c.at.gpu_age) put(e, "gpu_age_s", secs(*c.at.gpu_age));
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

// Each stage's bottleneck figures (analysis/bottleneck.hpp): absent numbers are left out.
void emit_bottlenecks(YAML::Emitter& e, const Trace& t) {
  const std::vector<StageBottleneck> all = stage_bottlenecks(t);
  if (all.empty()) return;
  key(e, "stage_bottlenecks");
  e << YAML::BeginSeq;
  for (const StageBottleneck& b : all) {
    e << YAML::BeginMap;
    text(e, "name", b.stage);
    const auto number = [&](const char* k, const std::optional<double>& v, double scale) {
      if (v) put(e, k, fixed(*v * scale, 3));
    };
    number("cpu_mean_percent", b.cpu_mean_percent, 1);
    number("cpu_peak_percent", b.cpu_peak_percent, 1);
    number("gpu_busy_mean_percent", b.gpu_mean_percent, 1);
    number("gpu_busy_peak_percent", b.gpu_peak_percent, 1);
    number("disk_read_mean_mb_per_s", b.read_mean_bytes_per_s, 1.0 / (1 << 20));
    number("disk_read_peak_mb_per_s", b.read_peak_bytes_per_s, 1.0 / (1 << 20));
    if (b.memory_growth) put(e, "memory_growth_mb", fixed(static_cast<double>(*b.memory_growth) / (1 << 20), 3));
    put(e, "input_bound", b.input_bound);
    if (!b.verdict.empty()) text(e, "verdict", b.verdict);
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

// --watch-dir's directories and the memory limit in force.
void emit_dirs_and_limit(YAML::Emitter& e, const Trace& t) {
  if (const auto limit = memory_limit(t)) {
    key(e, "memory_limit");
    e << YAML::BeginMap;
    put(e, "mb", mb(limit->bytes));
    put(e, "bytes", limit->bytes);
    text(e, "source", limit->source);
    if (const auto p = find_peak(t, Metric::rss))
      put(e, "tree_peak_share", fixed(static_cast<double>(p->bytes) / static_cast<double>(limit->bytes), 4));
    e << YAML::EndMap;
  }
  const std::vector<DirGrowth> dirs = dir_growths(t);
  if (dirs.empty()) return;
  key(e, "watched_dirs");
  e << YAML::BeginSeq;
  for (const DirGrowth& g : dirs) {
    e << YAML::BeginMap;
    text(e, "path", g.dir.path);
    text(e, "metric", "dir:" + g.name);
    put(e, "start_mb", mb(g.start));
    put(e, "peak_mb", mb(g.peak));
    put(e, "peak_relative_time_secs", secs(relative_time(t, g.peak_t)));
    put(e, "growth_mb", mb(g.growth));
    put(e, "end_mb", mb(g.last));
    put(e, "allocated_peak_mb", mb(g.allocated_peak));
    put(e, "fs_free_min_mb", mb(g.fs_free_min));
    put(e, "samples", g.samples);
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

// Quark writes a block of definitions after its summary; these say what each key means here.
constexpr const char* kDefinitions =
    "Metric definitions (as qprof measures them; mb: MiB)\n"
    "step: checkpoint name (Start, each QPROF_MARK marker, End)\n"
    "timestamp: Unix seconds; relative_time_secs: seconds since profiling started\n"
    "cpu_memory_mb: RSS of the whole process tree at the sample taken at the checkpoint\n"
    "gpu_memory_mb: GPU memory of the tree's processes, summed over devices\n"
    "disk_read_mb / disk_write_mb: storage bytes (read_bytes/write_bytes) of the tree, cumulative since start\n"
    "total_quantization_time_seconds: start to end of the run\n"
    "peak_memory_mb: kernel high-water mark (ru_maxrss) of the largest single process, as Quark's VmHWM of its main "
    "process\n"
    "tree_peak_memory_mb: peak of the tree's RSS summed over its processes, sampled\n"
    "peak_gpu_memory_mb / gpu_peak_memory_mb: peak GPU memory of the tree (both names Quark uses)\n"
    "total_disk_read_mb / total_disk_write_mb: storage bytes of the tree over the run\n"
    "peak_cache_dir_disk_usage_mb: with --watch-dir only, the largest growth of any watched directory over its "
    "size at the start (Σ st_size of its files, hard links once), walked every second or less often";

// Quark's memory_usage list: one entry a checkpoint.
void emit_memory_usage(YAML::Emitter& e, const std::vector<Checkpoint>& cps, const Trace& t) {
  key(e, "memory_usage");
  e << YAML::BeginSeq;
  for (const Checkpoint& c : cps) {
    e << YAML::BeginMap;
    text(e, "step", c.step);
    put(e, "timestamp", secs(c.t));
    put(e, "relative_time_secs", secs(relative_time(t, c.t)));
    put(e, "cpu_memory_mb", mb(c.at.rss));
    put(e, "gpu_memory_mb", mb(c.at.gpu_tree));
    put(e, "disk_read_mb", mb(c.at.read_bytes));
    put(e, "disk_write_mb", mb(c.at.write_bytes));
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

// Quark's summary keys with Quark's meanings; `main_peak` is the peak of the kernel's high-water
// mark (see quark_yaml).
void emit_summary(YAML::Emitter& e, const Trace& t, const std::optional<Peak>& main_peak,
                  const std::optional<trace::IoSample>& io) {
  const auto gpu_peak = find_peak(t, Metric::gpu);
  e << YAML::Newline << YAML::Comment("Summary Metrics (mb: MiB, 2^20 bytes)");
  put(e, "total_quantization_time_seconds", secs(trace_duration(t)));
  put(e, "peak_memory_mb", mb(main_peak));
  put(e, "tree_peak_memory_mb", mb(find_peak(t, Metric::rss)));
  put(e, "peak_gpu_memory_mb", mb(gpu_peak));  // Quark's code
  put(e, "gpu_peak_memory_mb", mb(gpu_peak));  // Quark's docs
  put(e, "total_disk_read_mb", mb(io ? io->read_bytes : 0));
  put(e, "total_disk_write_mb", mb(io ? io->write_bytes : 0));
  // Quark writes its cache-dir figure only when it watched one (None otherwise): so does qprof.
  if (const auto dir_growth = peak_dir_growth(t)) put(e, "peak_cache_dir_disk_usage_mb", mb(*dir_growth));
}

// The keys written as 0.0 above because the trace has no such series.
void emit_missing(YAML::Emitter& e, bool has_main_peak, bool has_gpu, bool has_io) {
  e << YAML::Newline << YAML::Comment("Keys above written as 0.0 because the trace has no such series");
  key(e, "missing");
  e << YAML::Flow << YAML::BeginSeq;
  if (!has_main_peak) e << "peak_memory_mb";
  if (!has_gpu)
    e << "gpu_memory_mb"
      << "peak_gpu_memory_mb"
      << "gpu_peak_memory_mb";
  if (!has_io)
    e << "disk_read_mb"
      << "disk_write_mb"
      << "total_disk_read_mb"
      << "total_disk_write_mb";
  e << YAML::EndSeq;
}

// The run's own facts in the qprof map: versions, command, host, sampling.
// `in_progress`: the run goes on (--yaml-stream), or its trace was cut short (no EXIT record:
// qprof was killed, or the machine stopped), so that no figure of it is the run's last.
// `incomplete` says why, in a report made afterwards.
void emit_run_facts(YAML::Emitter& e, const Trace& t, bool in_progress, const std::string& incomplete) {
  text(e, "version", std::string(kVersion));
  text(e, "trace", t.source);
  put(e, "trace_format", t.meta.format_version);
  if (!t.meta.qprof_version.empty()) text(e, "recorded_by", t.meta.qprof_version);
  text(e, "command", t.cmdline);
  if (!t.meta.host.empty()) text(e, "host", t.meta.host);
  put(e, "start_timestamp", secs(t.t0()));
  if (t.meta.interval > 0) put(e, "interval_secs", secs(t.meta.interval));
  put(e, "samples", t.samples());
  text(e, "memory_unit", "MiB");
  put(e, "in_progress", in_progress);
  if (!incomplete.empty()) text(e, "incomplete", incomplete);
}

void emit_footprint(YAML::Emitter& e, const Trace& t) {
  const auto f = footprint_of(t);
  if (!f) return;
  // The answer to "how much memory does it need": shared pages once (Quark's keys above keep
  // their meanings: peak_memory_mb is the main process's high-water mark).
  key(e, "footprint");
  e << YAML::BeginMap;
  put(e, "peak_mb", mb(f->peak));
  text(e, "basis", std::string(basis_name(f->basis)));
  if (f->t) put(e, "at_secs", secs(*f->t - t.t0()));
  if (f->unreclaimable) put(e, "unreclaimable_peak_mb", mb(*f->unreclaimable));
  if (f->reclaimable) put(e, "reclaimable_at_peak_mb", mb(*f->reclaimable));
  e << YAML::EndMap;
}

void emit_exit(YAML::Emitter& e, const Trace& t) {
  if (!t.exit) return;
  key(e, "exit");
  e << YAML::BeginMap;
  put(e, "status", t.exit->status);
  put(e, "signal", t.exit->signal);
  put(e, "timed_out", t.exit->timed_out);
  if (!t.exit->status_known) put(e, "status_known", false);
  e << YAML::EndMap;
}

void emit_notes(YAML::Emitter& e, const Trace& t) {
  if (t.notes.empty()) return;
  key(e, "notes");
  e << YAML::BeginSeq;
  for (const std::string& n : t.notes) e << YAML::DoubleQuoted << yaml_text(n);
  e << YAML::EndSeq;
}

}  // namespace

std::string quark_yaml(const Trace& t, const QuarkYamlOptions& options) {
  // A trace without its EXIT record ends where qprof stopped, not where the run did: no End
  // record is made up for it.
  const bool in_progress = options.in_progress || trace::completeness_of(t).ends_early();
  const std::vector<Checkpoint> cps = checkpoints(t, !in_progress);
  const auto io = io_totals(t);
  // Quark's summary keys with Quark's meanings (its profiler's code, not only its docs):
  // peak_memory_mb is the kernel's high-water mark of the job's main process; under qprof the
  // largest single process of the tree (ru_maxrss), the Python process behind a wrapper shell.
  const auto main_peak = find_peak(t, Metric::kernel_process);

  YAML::Emitter e;
  e << YAML::BeginMap;
  emit_memory_usage(e, cps, t);
  emit_summary(e, t, main_peak, io);
  e << YAML::Newline << YAML::Comment(kDefinitions);
  emit_missing(e, main_peak.has_value(), has_metric(t, Metric::gpu), io.has_value());

  e << YAML::Newline << YAML::Comment("Everything else qprof knows about the run");
  key(e, "qprof");
  e << YAML::BeginMap;
  emit_run_facts(e, t, in_progress, options.in_progress ? "" : trace::incomplete_reason(t));
  emit_footprint(e, t);
  emit_exit(e, t);
  emit_peaks(e, t);
  emit_dirs_and_limit(e, t);
  emit_stages(e, t);
  detail::emit_trends(e, t);
  emit_bottlenecks(e, t);
  emit_checkpoint_extras(e, cps, t);
  emit_notes(e, t);
  e << YAML::EndMap;
  e << YAML::EndMap;
  // Every Begin has its End above and every text went through yaml_text: an emitter gone bad is
  // a bug here, never an input's fault.
  assert(e.good() && "YAML emitter: Begin/End out of step");
  return std::string(e.c_str()) + "\n";
}

}  // namespace qprof::report
