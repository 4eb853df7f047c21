// SPDX-License-Identifier: Apache-2.0
// One rule for every figure a summary or report prints: shown only where defined and
// consistent. A property test over generated and recorded traces checks it in every report
// format; the run summary's own figures and layout are checked on reports built here.
#include <cmath>
#include <algorithm>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "qprof/analysis/bottleneck.hpp"
#include "qprof/analysis/checkpoints.hpp"
#include "qprof/common/charset.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/report/quark_yaml.hpp"
#include "qprof/report/report.hpp"
#include "qprof/runs/run_summary.hpp"
#include "qprof/trace/format.hpp"

namespace qprof {
using analysis::cpu_use;
using analysis::stage_bottlenecks;
using analysis::StageBottleneck;
using record::RunReport;
using runs::format_short_summary;
using runs::format_summary;
using trace::ExitInfo;
using trace::Footprint;
using trace::MemKindsSample;
using trace::MemSample;
using trace::PssSample;
using trace::Stage;
using trace::TasksSample;
using trace::Trace;

namespace {

constexpr Seconds kStart = 1000.0;
constexpr Bytes kMiB = Bytes{1} << 20;

// A qprof trace as a run writes it: Σ RSS every 10 ms, the stats lines (CPU, IO, KINDS, TASKS)
// every 100 ms from the first pass and at some markers, stages of every length (shorter than
// one stats interval too), runs from 20 ms to 3 s.
Trace generated(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double durations[] = {0.02, 0.05, 0.12, 0.3, 1.0, 3.0};
  const Seconds d = durations[rng() % std::size(durations)];
  Trace t;
  t.source = "generated.dat";
  t.meta.format_version = 1;
  t.meta.start = kStart;
  t.meta.interval = 0.01;
  double rss = (20 + 200 * u(rng)) * kMiB;
  for (Seconds s = 0.005; s <= d; s += 0.01) {
    rss = std::max(1.0 * kMiB, rss * (0.8 + 0.45 * u(rng)));
    t.mem.push_back({kStart + s, static_cast<Bytes>(rss)});
  }
  if (t.mem.empty()) t.mem.push_back({kStart + d, static_cast<Bytes>(rss)});
  const auto rss_at = [&](Seconds at) {
    Bytes b = t.mem.front().bytes;
    for (const MemSample& m : t.mem) {
      if (m.t <= at) b = m.bytes;
    }
    return b;
  };
  double cpu = 0, read = 0;
  std::vector<Seconds> passes;
  for (Seconds s = 0.004 + 0.05 * u(rng); s <= d; s += 0.1) {
    passes.push_back(s);
    if (u(rng) < 0.3) passes.push_back(s + 0.003 + 0.02 * u(rng));  // a marker's pass
  }
  passes.push_back(d);  // the final pass
  std::sort(passes.begin(), passes.end());
  Seconds last = 0;
  for (const Seconds s : passes) {
    cpu += (s - last) * 2.0 * u(rng);  // up to two cores
    read += (s - last) * 1e9 * u(rng);
    last = s;
    const Seconds at = kStart + s;
    t.cpu.push_back({at, cpu});
    t.io.push_back({at, static_cast<Bytes>(read), 0, 0, 0});
    // A reading of the stats schedule: the split adds up to Σ RSS then, VSZ holds it.
    const Bytes now = rss_at(at);
    const Bytes anon = static_cast<Bytes>(static_cast<double>(now) * u(rng));
    t.kinds.push_back({at, anon, now - anon, 0, 0});
    t.tasks.push_back({at, 1 + rng() % 4, 1 + rng() % 9, now + static_cast<Bytes>(static_cast<double>(now) * u(rng))});
  }
  for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) {
    const Seconds a = d * u(rng);
    const Seconds b = std::min(d, a + (u(rng) < 0.5 ? 0.08 * u(rng) : d * u(rng)));
    t.stages.push_back(Stage{"S" + std::to_string(k), kStart + a, kStart + b, rss_at(kStart + a), rss_at(kStart + b),
                             true, Stage::Source::markers});
  }
  t.exit = ExitInfo{kStart + d, 0, 0, false, true};
  return t;
}

std::vector<Trace> recorded() {
  std::vector<Trace> out;
  for (const char* f : {"report/quark.dat", "report/open_stage.dat", "report/layerwise.dat", "plot/full.dat",
                        "mprof/func.dat", "mprof/children.dat"}) {
    out.push_back(trace::read_trace(std::string(QPROF_TEST_DATA) + "/" + f));
  }
  return out;
}

double number(const nlohmann::json& j, const char* key) { return j.at(key).get<double>(); }

// Mean never above peak, wherever a YAML holds both (stages of the Quark layout).
void check_yaml(const YAML::Node& n, const std::string& where) {
  if (n.IsMap()) {
    if (n["cpu_mean_percent"] && n["cpu_peak_percent"] && !n["cpu_mean_percent"].IsNull()) {
      ASSERT_FALSE(n["cpu_peak_percent"].IsNull()) << where;
      EXPECT_LE(n["cpu_mean_percent"].as<double>(), n["cpu_peak_percent"].as<double>() + 0.11) << where;
    }
    for (const auto& kv : n) check_yaml(kv.second, where);
  } else if (n.IsSequence()) {
    for (const auto& e : n) check_yaml(e, where);
  }
}

void check_trace(const Trace& t, const std::string& where) {
  // The analysis: each stage's rates from its own readings, the mean never above the peak.
  for (const StageBottleneck& b : stage_bottlenecks(t)) {
    EXPECT_EQ(b.cpu_mean_percent.has_value(), b.cpu_peak_percent.has_value()) << where << " " << b.stage;
    if (b.cpu_mean_percent) {
      EXPECT_LE(*b.cpu_mean_percent, *b.cpu_peak_percent + 1e-6) << where << " " << b.stage;
    }
    if (b.read_mean_bytes_per_s) {
      EXPECT_LE(*b.read_mean_bytes_per_s, *b.read_peak_bytes_per_s * (1 + 1e-9) + 1e-6) << where << " " << b.stage;
    }
  }
  if (const auto cpu = cpu_use(t); cpu && cpu->peak_percent) {
    const Seconds span = t.cpu.back().t - t.t0();
    if (span > 0) {
      EXPECT_LE(100.0 * cpu->seconds / span, *cpu->peak_percent + 1e-6) << where;
    }
  }

  // Every format of `report`, from one document.
  const report::Document doc = report::trace_report(t);
  const nlohmann::json j = nlohmann::json::parse(report::render(doc, report::Format::json));
  const double rss = j.contains("rss_sum_peak_bytes") ? number(j, "rss_sum_peak_bytes") : 0;
  if (j.contains("vsz_peak_bytes")) {
    EXPECT_GE(number(j, "vsz_peak_bytes"), rss) << where << ": VSZ below RSS";
  }
  if (j.contains("kinds_anon_bytes")) {
    const double split = number(j, "kinds_anon_bytes") + number(j, "kinds_file_bytes") + number(j, "kinds_shmem_bytes");
    EXPECT_GE(split, 0.9 * rss - 1) << where << ": a split of another instant than the peak";
  }
  if (j.contains("stages")) {
    for (const auto& row : j.at("stages")) {
      for (const auto& [mean, peak] : {std::pair{"cpu_mean_percent", "cpu_peak_percent"},
                                       std::pair{"read_mean_bytes_per_s", "read_peak_bytes_per_s"}}) {
        if (!row.contains(mean) || row.at(mean).is_null()) continue;
        ASSERT_FALSE(row.at(peak).is_null()) << where;
        EXPECT_LE(row.at(mean).get<double>(), row.at(peak).get<double>() * (1 + 1e-9) + 0.11) << where << " " << mean;
      }
    }
  }
  for (const report::Format f : {report::Format::text, report::Format::markdown}) {
    EXPECT_EQ(report::render(doc, f).find("VSZ peak") != std::string::npos, j.contains("vsz_peak_bytes")) << where;
  }
  // CSV: the stage table, its means never above their peaks.
  const std::string csv = report::render(doc, report::Format::csv);
  std::istringstream rows(csv);
  std::string header, row;
  std::getline(rows, header);
  const auto cells = [](const std::string& line) {
    std::vector<std::string> out(1);
    for (const char c : line) {
      if (c == ',')
        out.emplace_back();
      else
        out.back() += c;
    }
    return out;
  };
  const std::vector<std::string> names = cells(header);
  const auto column = [&](const char* name) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const std::size_t mean = column("cpu_mean_percent"), peak = column("cpu_peak_percent");
  while (mean < names.size() && peak < names.size() && std::getline(rows, row)) {
    const std::vector<std::string> v = cells(row);
    if (v.size() != names.size() || v[mean].empty()) continue;
    ASSERT_FALSE(v[peak].empty()) << where << "\n" << csv;
    EXPECT_LE(std::stod(v[mean]), std::stod(v[peak]) + 0.11) << where << "\n" << csv;
  }
  if (t.is_qprof() && !t.stages.empty()) check_yaml(YAML::Load(report::quark_yaml(t)), where);
}

TEST(Figures, EveryReportFormatHoldsTheRuleOnGeneratedAndRecordedTraces) {
  std::mt19937 rng(20261127);
  for (int i = 0; i < 300; ++i) {
    const Trace t = generated(rng);
    check_trace(t, "generated trace " + std::to_string(i));
    if (HasFatalFailure() || HasFailure()) break;
  }
  for (const Trace& t : recorded()) check_trace(t, t.source);
}

// The stage's CPU mean came from a reading before the stage and its peak from one interval of
// it: "CPU mean 9 %, CPU peak 0 %".
TEST(Figures, AStageRateComesFromReadingsInsideItOrIsNone) {
  Trace t;
  t.meta.format_version = 1;
  t.meta.start = 0;
  t.mem = {{0, kMiB}, {1, kMiB}};
  t.cpu = {{0.0, 0.0}, {0.30, 0.0}, {0.40, 0.0}, {0.43, 0.03}};
  t.stages = {Stage{"Short", 0.35, 0.36, kMiB, kMiB, true, Stage::Source::markers},
              Stage{"Tail", 0.30, 0.45, kMiB, kMiB, true, Stage::Source::markers}};
  const auto b = stage_bottlenecks(t);
  EXPECT_FALSE(b[0].cpu_mean_percent) << "no reading inside: no figure";
  EXPECT_FALSE(b[0].cpu_peak_percent);
  ASSERT_TRUE(b[1].cpu_mean_percent);
  EXPECT_NEAR(*b[1].cpu_mean_percent, 100.0 * 0.03 / 0.13, 1e-6);
  EXPECT_GE(*b[1].cpu_peak_percent, *b[1].cpu_mean_percent) << "the short tail joins the last interval";
  const std::string text = report::render(report::trace_report(t), report::Format::text);
  EXPECT_NE(text.find("-: fewer than two CPU or I/O readings inside the stage"), std::string::npos) << text;
}

// A short run whose KINDS and TASKS were read once, early: "memory kinds at the largest of
// 364.0 KiB" and "VSZ peak 7.16 MiB" beside a 10.6 MiB peak.
TEST(Figures, AReportShowsNoSplitOrVszOfAnotherInstant) {
  Trace t;
  t.meta.format_version = 1;
  t.meta.start = 0;
  t.mem = {{0.01, 364 * 1024}, {0.02, 10 * kMiB}};
  t.kinds = {{0.01, 300 * 1024, 64 * 1024, 0, 0}};
  t.tasks = {{0.01, 1, 1, 7 * kMiB}};
  const std::string text = report::render(report::trace_report(t), report::Format::text);
  EXPECT_EQ(text.find("VSZ peak"), std::string::npos) << text;
  EXPECT_EQ(text.find("RSS by kind"), std::string::npos) << text;
  t.kinds = {{0.02, 6 * kMiB, 4 * kMiB, 0, 0}};
  t.tasks = {{0.02, 1, 1, 70 * kMiB}};
  const std::string read_at_peak = report::render(report::trace_report(t), report::Format::text);
  EXPECT_NE(read_at_peak.find("VSZ peak"), std::string::npos) << read_at_peak;
  EXPECT_NE(read_at_peak.find("RSS by kind"), std::string::npos) << read_at_peak;
}

// A summary's wrapped lines joined: a continuation (indented under its text) follows a space.
std::string unwrapped_summary(const std::string& s) {
  std::string out;
  std::size_t from = 0;
  while (from < s.size()) {
    std::size_t end = s.find('\n', from);
    if (end == std::string::npos) end = s.size();
    std::string line = s.substr(from, end - from);
    const std::size_t text = line.find_first_not_of(' ');
    if (text != std::string::npos && text >= 8 && !out.empty()) {
      out.back() = ' ';
      line = line.substr(text);
    }
    out += line + "\n";
    from = end + 1;
  }
  return out;
}

RunReport short_failed_run() {
  RunReport r;
  r.command = "python3 calib.py";
  r.trace_path = "qprof_1.dat";
  r.launched = true;
  r.start = kStart;
  r.duration = 0.021;
  r.exit.status = 1;
  r.sampling.samples = 1;
  r.sampling.missed_deadlines = 1;
  r.sampling.asked_interval = 0.01;
  r.usage.stats_interval = 0.1;
  r.sampled_peak = MemSample{kStart + 0.02, static_cast<Bytes>(10.6 * kMiB)};
  r.footprint = Footprint{};
  r.footprint->peak = 9 * kMiB;
  r.kernel_process_peak = 11 * kMiB;
  r.hwm.sum = 90 * kMiB;  // 8x the peak: no bound worth showing
  r.hwm.capped = 3;
  r.hwm.useful = false;
  r.usage.most_tasks = TasksSample{kStart + 0.01, 1, 1, 0};
  r.usage.readings = 1;
  r.usage.cpu_seconds = 0.02;
  r.limit.bytes = 24 * 1024 * kMiB;
  r.limit.source = "memtotal";
  r.limit.detail = "MemTotal of /proc/meminfo";
  return r;
}

TEST(Summary, AShortRunSaysOnlyWhatIsDefined) {
  const std::string s = format_summary(short_failed_run());
  EXPECT_NE(s.find("exit status 1"), std::string::npos) << s;
  EXPECT_LT(s.find("footprint"), s.find("duration")) << "the answer first, then how the command ended";
  EXPECT_LT(s.find("duration"), s.find("Σ RSS")) << s;
  EXPECT_EQ(s.find("at most\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("% at most"), std::string::npos) << "no CPU peak without a measured interval\n" << s;
  EXPECT_EQ(s.find("upper bound"), std::string::npos) << "8x the peak brackets nothing\n" << s;
  EXPECT_EQ(s.find("wait4 peak"), std::string::npos) << s;
  EXPECT_EQ(s.find("memory kinds"), std::string::npos) << s;
  EXPECT_EQ(s.find("memtotal"), std::string::npos) << "far below the machine's memory: not said\n" << s;
  EXPECT_NE(s.find("at most 1 thread in 1 process (one reading)"), std::string::npos) << s;
  EXPECT_EQ(s.find("(es)"), std::string::npos) << s;
  EXPECT_EQ(s.find("1 deadlines"), std::string::npos) << s;
  EXPECT_EQ(s.find("--"), std::string::npos) << "no option names\n" << s;
}

// A footprint below the largest process's own peak cannot be the tree's: both summaries say so,
// with the reason; within the allowance for pages shared outside the tree they say nothing.
TEST(Summary, AFootprintBelowTheLargestProcessIsSaid) {
  RunReport r = short_failed_run();
  r.footprint->basis = Footprint::Basis::pss;
  r.footprint->peak = static_cast<Bytes>(0.33 * kMiB);
  r.kernel_process_peak = 108 * kMiB;
  r.pss.passes = 1;
  for (const std::string& s : {format_summary(r), format_short_summary(r)}) {
    const std::string one = unwrapped_summary(s);
    EXPECT_NE(one.find("the footprint is below the largest process's own peak (108.0 MiB, ru_maxrss)"),
              std::string::npos)
        << s;
    EXPECT_NE(one.find("Σ PSS was read once"), std::string::npos) << s;
  }
  r.footprint->peak = 100 * kMiB;  // 8 MiB below: libraries shared with the rest of the machine
  EXPECT_EQ(format_summary(r).find("below the largest"), std::string::npos);
  EXPECT_EQ(format_short_summary(r).find("below the largest"), std::string::npos);
}

// Both summaries as wide as the terminal they are read in: 80 into a pipe, narrower or wider
// where the terminal is; below 40 columns at 40.
TEST(Summary, EveryLineFitsTheColumnsItIsGiven) {
  RunReport r = short_failed_run();
  r.command = std::string(200, 'x');
  r.pss.peak = PssSample{kStart + 0.01, 8 * kMiB, 7 * kMiB, std::nullopt};
  r.pss.passes = 12;
  r.pss.rise_passes = 3;
  r.pss.interval = 1;
  r.hwm.sum = 12 * kMiB;
  r.hwm.useful = true;
  r.usage.kinds_at_peak = MemKindsSample{kStart + 0.02, 6 * kMiB, 4 * kMiB, 0, 0};
  r.usage.cpu_peak_percent = 150;
  r.watch.dirs.push_back(
      record::WatchReport::Dir{"/very/long/path/of/a/watched/directory/that/goes/on/and/on/and/on", 1, 2, 3, 4, true});
  r.watch.walks = 3;
  r.sampling.unread_members = 2;
  for (const std::size_t columns : {80u, 60u, 120u, 20u}) {
    const std::size_t fits = std::max<std::size_t>(columns, 40);
    for (const std::string& s : {format_summary(r, columns), format_short_summary(r, columns)}) {
      std::size_t from = 0, widest = 0;
      while (from < s.size()) {
        const std::size_t end = s.find('\n', from);
        const std::string line = s.substr(from, end - from);
        // A path longer than a line is kept whole (it is copied, not read).
        if (line.find("/very/long") == std::string::npos) {
          EXPECT_LE(text_columns(line), fits) << columns << " columns: " << line;
          widest = std::max(widest, text_columns(line));
        }
        from = end + 1;
      }
      EXPECT_GT(widest, fits - 12) << "the lines use the width they have\n" << s;
      EXPECT_NE(s.find("qprof: xxxx"), std::string::npos) << "the command, cut to a line\n" << s;
    }
  }
  const std::string s = format_summary(r);
  EXPECT_EQ(s, format_summary(r, 80)) << "80 columns unless told";
  EXPECT_NE(s.find("upper bound"), std::string::npos) << s;
  EXPECT_NE(s.find("150 %"), std::string::npos) << "the CPU peak, measured\n" << s;
  EXPECT_NE(s.find("read 12 times"), std::string::npos) << s;
  EXPECT_EQ(s.find("taken again"), std::string::npos) << "no reading was taken twice\n" << s;
  r.pss.rereads = 2;
  EXPECT_NE(unwrapped_summary(format_summary(r)).find("2 readings taken again at once as the tree's sharing moved"),
            std::string::npos)
      << format_summary(r);
  EXPECT_EQ(runs::summary_line("trend", "footprint grows 1.00 MiB/s", 80),
            "qprof:   trend           footprint grows 1.00 MiB/s\n");
}

TEST(Summary, MarksInAsciiWhereTheLocaleIsNotUtf8) {
  EXPECT_EQ(locale_text("Σ RSS – 5 ≥ 4 …", false), "sum RSS - 5 >= 4 ...");
  EXPECT_EQ(locale_text("Σ RSS", true), "Σ RSS");
}

}  // namespace
}  // namespace qprof
