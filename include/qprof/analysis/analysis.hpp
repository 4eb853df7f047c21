// Numbers derived from a recorded run: peaks of every metric, the statistics of each stage, the
// checkpoints of a Quark-style report, memory budgets, and the comparison of several runs.
// Pure functions over Trace: no I/O, no formatting (that is report.hpp's job).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qprof/trace/bracket.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof {

// ── Metrics ─────────────────────────────────────────────────────────────────────────────────

// The memory figures a trace can hold.
enum class Metric {
  rss,             // MEM lines: the tree's RSS, sampled
  pss,             // PSS lines: the tree's proportional set size, sampled
  uss,             // PSS lines: the tree's unique set size, sampled
  gpu,             // GPU lines: the tree's GPU memory summed over devices, sampled
  cgroup,          // CGROUP lines (usage) and the kernel's high-water mark (CGROUP peak, PEAK cgroup)
  hwm_sum,         // HWM lines and PEAK hwm_sum: Σ VmHWM of the tree, an upper bound of its peak
  kernel_process,  // PEAK kernel_process: the largest single process (RUSAGE_CHILDREN), exact
  anon,            // KINDS lines: the tree's anonymous RSS (RssAnon)
  file,            // KINDS lines: the tree's file-backed RSS (RssFile)
  shmem,           // KINDS lines: the tree's shared-memory RSS (RssShmem)
  swap,            // KINDS lines: the tree's swapped-out pages (VmSwap)
};

struct MetricInfo {
  Metric metric;
  std::string_view name;   // on the command line and in machine output: "rss"
  std::string_view title;  // in tables: "RSS"
  std::string_view what;   // "RSS of the tree, sampled"
  // Instantaneous samples: a peak inside a time window means something. Cumulative figures
  // (hwm_sum) and end-of-run figures (kernel_process) have none.
  bool windowed;
};

const MetricInfo& metric_info(Metric m);
std::optional<Metric> parse_metric(std::string_view name);
// Every metric, in the order tables list them.
const std::vector<Metric>& all_metrics();
// "rss, pss, uss, gpu, cgroup, hwm_sum, kernel_process", or of the given ones.
std::string metric_names(const std::vector<Metric>& metrics = all_metrics());

bool has_metric(const Trace& trace, Metric m);
std::vector<Metric> available_metrics(const Trace& trace);

// The samples of a metric in time order (empty when the trace has none). gpu: one value per GPU
// sample time, the latest value of each device summed; cgroup: the usage; hwm_sum: Σ VmHWM so far.
std::vector<MemSample> metric_series(const Trace& trace, Metric m);

// ── Watched directories (--watch-dir) and the memory limit ─────────────────────────────────

// `dir:NAME`: the apparent size of a watched directory (DIR lines), NAME being its path as
// recorded or, when no path equals it, its last component (the first directory that matches).
// Such metrics are made on demand (parse_metric("dir:NAME") registers NAME for the process):
// they are not in all_metrics(), but available_metrics() lists those of a trace.
Metric dir_metric(std::string_view name);
bool is_dir_metric(Metric m);
// The trace's watched directory that `name` names, as above.
const WatchedDir* find_watched_dir(const Trace& t, std::string_view name);
// What `dir:NAME` calls a directory of the trace: its last component, or its path when another
// directory of the trace has the same last component.
std::string dir_name(const Trace& t, const WatchedDir& d);

// A watched directory over the run. Growth is Quark's: the largest apparent size over the first
// (a directory that did not exist counts as empty), never below 0.
struct DirGrowth {
  WatchedDir dir;
  std::string name;  // dir_name
  Bytes start = 0, peak = 0, last = 0, growth = 0;
  Seconds peak_t = 0;
  Bytes allocated_peak = 0;
  Bytes fs_free_min = 0;
  std::size_t samples = 0;
};
std::vector<DirGrowth> dir_growths(const Trace& t);  // directories with samples, in index order
// The most dir:NAME metrics a trace lists (available_metrics, compare's columns): each is a
// column and a pass over the samples, so a trace of 100 000 directories would be quadratic.
// Tables of directories say how many they leave out.
inline constexpr std::size_t kMaxDirMetrics = 64;
// Quark's peak_cache_dir_disk_usage_mb in bytes: the largest growth of any watched directory.
std::optional<Bytes> peak_dir_growth(const Trace& t);

// The memory limit in force the header recorded (`limit`, `limit_source`).
struct LimitInfo {
  Bytes bytes = 0;
  std::string source;  // cgroup, cgroup-v1, slurm, rlimit-as, memtotal
};
std::optional<LimitInfo> memory_limit(const Trace& t);
// A budget "90%" of the trace's limit, or a size; nullopt with `error` set when it cannot be had.
std::optional<Bytes> budget_bytes(std::string_view text, const Trace& t, std::string& error);
// "90%" → 0.9; nullopt for anything else.
std::optional<double> parse_percent(std::string_view text);

// ── Time ────────────────────────────────────────────────────────────────────────────────────

// MEM lines carry 4 decimals of time and MARK lines 6, so the sample taken at a marker can read up
// to 50 µs off the marker's time; windows are widened by this much to keep it inside.
inline constexpr Seconds kTimeSlack = 1e-4;

// The end of the run: the latest of its EXIT time, its last sample, marker and stage end.
Seconds trace_end(const Trace& trace);
// trace_end − t0.
Seconds trace_duration(const Trace& trace);
// Seconds since the trace's start, never negative.
Seconds relative_time(const Trace& trace, Seconds t);

struct TimeWindow {
  Seconds from = 0;
  Seconds to = 0;
  bool contains(Seconds t) const { return t >= from - kTimeSlack && t <= to + kTimeSlack; }
};

// The stages whose window holds t, innermost (latest start) first.
std::vector<const Stage*> stages_at(const Trace& trace, Seconds t);
// Every stage called `name` (a stage can run several times).
std::vector<const Stage*> stages_named(const Trace& trace, std::string_view name);
// Distinct stage names in order of first start.
std::vector<std::string> stage_names(const Trace& trace);

// ── Peaks ───────────────────────────────────────────────────────────────────────────────────

struct Peak {
  Bytes bytes = 0;
  std::optional<Seconds> t;  // when it was sampled (Unix s); unknown for figures the kernel kept
  bool exact = false;        // the kernel's own high-water mark, not a sample
};

// nullopt when the trace does not have the metric. hwm_sum obeys the bracket (peak_bracket).
std::optional<Peak> find_peak(const Trace& trace, Metric m);
// What the peak of `m` is in this trace, in words: the metric's own description, except that a
// Σ VmHWM that cannot be bounded (a member reaped out of qprof's sight) is not called a bound.
std::string peak_meaning(const Trace& trace, Metric m);

// The bracket of the tree's peak (trace/bracket.hpp) from a trace's PEAK lines and samples:
// upper is absent when the trace has no Σ VmHWM that is a bound (a trace cut short, or
// processes it could not cover: PEAK hwm_sum_partial).
BracketInputs bracket_inputs(const Trace& trace);
PeakBracket peak_bracket(const Trace& trace);
// The peak inside every run of the stage `name`: the samples between its start and end markers,
// both marker samples included (for rss, the memory the markers carry counts too). nullopt when
// no sample falls inside.
std::optional<Peak> stage_peak(const Trace& trace, Metric m, std::string_view name);

struct ChildPeak {
  std::int64_t pid = 0;
  Bytes bytes = 0;
};
// RSS peak of each process recorded with -M (CHLD lines), in first-seen order; only samples
// inside the windows when some are given.
std::vector<ChildPeak> child_peaks(const Trace& trace, const std::vector<TimeWindow>& windows = {});

// ── Stages ──────────────────────────────────────────────────────────────────────────────────

struct StageStats {
  Stage stage;
  Seconds start = 0;  // relative to the trace's start
  Seconds end = 0;
  Seconds duration = 0;
  double share = 0;   // duration / trace duration
  std::optional<Peak> peak;       // inside the stage
  std::optional<Bytes> at_start;  // the metric at the start marker (rss: the marker's own sample)
  std::optional<Bytes> at_end;
};

// One entry per stage, in order of start. Throws std::invalid_argument for a metric without
// instantaneous samples (see MetricInfo::windowed).
std::vector<StageStats> stage_stats(const Trace& trace, Metric m = Metric::rss);

// ── Checkpoints (the records of a Quark-style report) ───────────────────────────────────────

struct Checkpoint {
  std::string step;  // "Start", a marker's label, "End"
  Seconds t = 0;
  Snapshot at;
};

// "Start" (the first value of every series, at the first sample), one per marker (the values at
// the marker: its immediate sample), and "End" (the last value of every series, at the last
// sample) unless `with_end` is false (a run still going on).
std::vector<Checkpoint> checkpoints(const Trace& trace, bool with_end = true);

// Totals since the start: the last IO sample; nullopt without IO lines.
std::optional<IoSample> io_totals(const Trace& trace);

// The tree's CPU use from the cumulative CPU lines: nullopt without them.
struct CpuUse {
  double seconds = 0;       // user + system of the whole tree
  double peak_percent = 0;  // of one core, the highest over intervals of at least `min_interval`
};
std::optional<CpuUse> cpu_use(const Trace& trace, Seconds min_interval = 0.05);

// The cgroup sample with the highest charge (usage), with its memory.stat parts where recorded.
std::optional<CgroupSample> largest_cgroup_sample(const Trace& trace);

// ── Budgets ─────────────────────────────────────────────────────────────────────────────────

// A growth allowed over a baseline: "10%" (relative) or "200MiB" (absolute).
struct Growth {
  std::optional<double> fraction;  // 0.10 for "10%"
  std::optional<Bytes> bytes;
  Bytes limit_over(Bytes baseline) const;
  std::string text() const;  // "10%", "200.0 MiB"
};
std::optional<Growth> parse_growth(std::string_view text);

struct BudgetCheck {
  Metric metric = Metric::rss;
  Bytes limit = 0;
  Peak peak;
  std::vector<std::string> stages;  // where the peak was, innermost first; empty: outside any
  bool exceeded() const { return peak.bytes > limit; }
  Bytes over() const { return exceeded() ? peak.bytes - limit : 0; }
};

// nullopt when the trace does not have the metric.
std::optional<BudgetCheck> check_budget(const Trace& trace, Metric m, Bytes limit);
// "in stage 'Calibration'", "in stage 'Layer 3' (inside 'Calibration')", "outside any stage", or
// "" when the time is unknown.
std::string where_in_stages(const std::vector<std::string>& stages, bool time_known);

// ── Comparison ──────────────────────────────────────────────────────────────────────────────

// One row to compare: a trace, or several runs of the same command (their median is the row's
// value, their min and max its spread).
struct CompareEntry {
  std::string label;
  std::vector<const Trace*> runs;
};

struct Spread {
  double median = 0;
  double min = 0;
  double max = 0;
};
// nullopt for no values. The median of an even count is the mean of the middle two.
std::optional<Spread> spread_of(std::vector<double> values);

struct CompareValue {
  std::optional<Spread> value;  // absent: the trace does not have it
  bool lowest = false;          // the lowest of its column (marked when two rows or more have one)
  std::optional<double> ratio;  // value / the first row's value
};

struct CompareColumn {
  enum class Kind { seconds, bytes };
  std::string key;    // "duration", "peak_rss", "stage_peak" (+ stage) …
  std::string title;  // "duration", "peak RSS", "peak in Calibration"
  Kind kind = Kind::bytes;
  std::optional<Metric> metric;  // the metric of a peak column
  std::string stage;             // the stage of a per-stage peak column
};

struct Comparison {
  Metric metric = Metric::rss;  // the metric of the per-stage peaks (and of budgets)
  std::vector<CompareColumn> columns;
  std::vector<std::vector<CompareValue>> rows;  // one per entry, one value per column
  std::size_t stages_left_out = 0;  // stage names past kMaxStageColumns, without a column
};
// The most stage names that get a column of their own in a comparison.
inline constexpr std::size_t kMaxStageColumns = 64;

// Columns: duration; the peak of every metric one trace or more has (rss always); total disk read
// and write where a trace has IO; with `stages`, the peak of `metric` inside each stage name.
Comparison compare(const std::vector<CompareEntry>& entries, Metric metric, bool stages);
// The index of the column holding the peak of `m`, if there is one.
std::optional<std::size_t> peak_column(const Comparison& c, Metric m);

// Budgets on the rows of a comparison, on the peak of `c.metric` (a row's median): `max_peak` on
// every row but the first when it is an explicit baseline, `growth` on every row against the first.
struct RowCheck {
  bool checked = false;          // a budget applies to this row
  bool known = false;            // the row (and the first, for a growth) has the metric
  Bytes value = 0;               // the row's peak
  std::optional<Bytes> over_max_peak;  // by how much it exceeds max_peak
  std::optional<Bytes> over_growth;    // by how much it exceeds the growth allowed over the first row
  Bytes baseline = 0;            // the first row's peak (with a growth)
  double growth = 0;             // value / baseline − 1
  bool over() const { return over_max_peak || over_growth; }
};
std::vector<RowCheck> check_rows(const Comparison& c, std::optional<Bytes> max_peak, std::optional<Growth> growth,
                                 bool first_is_baseline);
// The same with a budget per row (--max-peak 90%: each row's share of its own traces' limit).
std::vector<RowCheck> check_rows(const Comparison& c, const std::vector<std::optional<Bytes>>& max_peaks,
                                 std::optional<Growth> growth, bool first_is_baseline);

}  // namespace qprof
