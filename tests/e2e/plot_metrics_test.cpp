// SPDX-License-Identifier: Apache-2.0
// qprof plot end to end, per metric: PSS overlaid over three runs, the footprint on each trace's
// own basis, and series read less often than the samples drawn as readings with gaps left open.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "e2e_util.hpp"
#include "plot_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

using namespace plot_files;  // NOLINT: the fixtures are this file's vocabulary

// PSS of three recorded runs overlaid: each trace's line is its PSS, named so in the legend.
TEST(Plot, MetricPssOverlaysThreeRuns) {
  const std::string dir = test_dir();
  std::vector<std::string> args{"plot", "--metric", "pss", "-o", dir + "/pss.svg", "--script", dir + "/pss.gp"};
  for (const char* name : {"a", "b", "c"}) {
    const std::string out = dir + "/" + name + ".dat";
    const Result r = qprof({"run", "-q", "--metric", "pss", "--pss-interval", "0.02", "--cgroup", "off", "-o", out,
                            "--", workload("alloc_tree"), "20", "1", "20", "300"});
    ASSERT_EQ(r.status, 0) << r.err;
    args.push_back(out);
  }
  const Result r = qprof(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string script = read_file(dir + "/pss.gp");
  for (const char* name : {"a", "b", "c"}) {
    EXPECT_NE(script.find(std::string("\"") + name + ", tree PSS peak "), std::string::npos) << name << "\n"
                                                                                             << script.substr(0, 4000);
  }
  EXPECT_EQ(script.find(", peak "), std::string::npos) << "no RSS line titled as the traces' peak";

  // A trace without PSS: an error that names what it has.
  const Result bad = qprof({"plot", "--metric", "pss", "-o", dir + "/bad.svg", plot_data("empty.dat")});
  EXPECT_EQ(bad.status, 2);
  const Result rss_only = qprof({"plot", "--metric", "gpu", "-o", dir + "/bad.svg", dir + "/a.dat"});
  EXPECT_EQ(rss_only.status, 2);
  EXPECT_NE(joined(rss_only.err).find("no gpu series (it has: rss, footprint, "), std::string::npos) << rss_only.err;
}

// The memory kinds are titled as what they are, not as the tree's RSS they are parts of.
TEST(Plot, MemoryKindsAreTitledAsThemselves) {
  const std::string dir = test_dir();
  const std::string trace = dir + "/kinds.dat";
  const Result run = qprof({"run", "-q", "--stats-interval", "0.05", "--cgroup", "off", "-o", trace, "--",
                            workload("alloc_tree"), "20", "1", "20", "300"});
  ASSERT_EQ(run.status, 0) << run.err;
  for (const auto& [metric, title] : {std::pair{"anon", "tree anonymous RSS"},
                                      std::pair{"file", "tree file-backed RSS"}, std::pair{"swap", "tree swap"}}) {
    const std::string gp = dir + "/" + metric + ".gp";
    const Result r = qprof({"plot", "--metric", metric, "-o", dir + "/" + metric + ".svg", "--script", gp, trace});
    ASSERT_EQ(r.status, 0) << metric << ": " << r.err;
    const std::string script = read_file(gp);
    EXPECT_NE(script.find(std::string(title) + ", peak "), std::string::npos) << metric << "\n"
                                                                              << script.substr(0, 4000);
    EXPECT_EQ(script.find("tree RSS, peak "), std::string::npos) << metric;
  }
}

// --metric footprint draws each trace's footprint on its own basis: the cgroup's charge where the
// tree had a group, else Σ PSS; unreclaimable, its anonymous and shared part (truth by
// construction: the traces below hold the values).
TEST(Plot, MetricFootprintTakesEachTracesOwnBasis) {
  const std::string dir = test_dir();
  const double MiB = 1048576;
  auto mem = [](double t, double mib) {
    return "MEM " + std::to_string(mib) + " " + std::to_string(1700000000 + t) + "\n";
  };
  auto at = [](double t) { return std::to_string(1700000000 + t); };
  std::string pss = "QPROF 1 version=0.1.0 interval=0.1 start=1700000000 metric=rss\nCMDLINE pss-job\n";
  std::string cg = "QPROF 1 version=0.1.0 interval=0.1 start=1700000000 metric=rss\nCMDLINE cgroup-job\n";
  for (int i = 0; i <= 20; ++i) {
    const double t = i * 0.1;
    const double level = i == 10 ? 1.0 : 0.5;  // the peak at 1 s
    pss += mem(t, 900 * level) + "PSS " + at(t) + " " + std::to_string(static_cast<long long>(300 * level * MiB)) +
           " " + std::to_string(static_cast<long long>(100 * level * MiB)) + " " +
           std::to_string(static_cast<long long>(120 * level * MiB)) + "\n";
    cg += mem(t, 900 * level) + "CGROUP " + at(t) + " " + std::to_string(static_cast<long long>(500 * level * MiB)) +
          " " + std::to_string(static_cast<long long>(500 * MiB)) + " " +
          std::to_string(static_cast<long long>(200 * level * MiB)) + " " +
          std::to_string(static_cast<long long>(300 * level * MiB)) + "\n";
  }
  write(dir + "/pss.dat", pss);
  write(dir + "/cg.dat", cg);
  Result r = qprof(
      {"plot", "--metric", "footprint", "--label", "P,C", dir + "/pss.dat", dir + "/cg.dat", "-o", dir + "/fp.svg"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = svg_text(dir + "/fp.svg");
  EXPECT_TRUE(has(text, "P, footprint peak 300.0 MiB at 1 s")) << text;
  EXPECT_TRUE(has(text, "C, footprint peak 500.0 MiB at 1 s")) << text;
  r = qprof({"plot", "--metric", "unreclaimable", "--label", "P,C", dir + "/pss.dat", dir + "/cg.dat", "-o",
             dir + "/un.svg"});
  ASSERT_EQ(r.status, 0) << r.err;
  text = svg_text(dir + "/un.svg");
  EXPECT_TRUE(has(text, "P, unreclaimable peak 120.0 MiB")) << text;
  EXPECT_TRUE(has(text, "C, unreclaimable peak 200.0 MiB")) << text;
  // An mprof trace has no footprint: the error says what it has.
  r = qprof({"plot", "--metric", "footprint", data_file("mprof/func.dat"), "-o", dir + "/none.svg"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "no footprint series (it has: rss")) << r.err;
}

// The data a saved script sends for the series titled `title`: its plot item and its block of
// "t v" lines (gnuplot writes NaN as "nan"); an empty spec when no item has that title.
struct SentSeries {
  std::string spec;
  std::vector<std::pair<double, double>> points;
  std::size_t breaks = 0;  // "nan" lines: where gnuplot ends the line
  std::vector<double> break_at;
};
SentSeries sent_series(const std::string& script, const std::string& title) {
  std::vector<std::string> lines;
  std::istringstream in(script);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  SentSeries out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].starts_with("plot ")) continue;
    // The items, one per line while a line ends with ", \"; then one data block per item.
    std::vector<std::string> items{lines[i]};
    std::size_t k = i;
    while (lines[k].ends_with(", \\") && k + 1 < lines.size()) items.push_back(lines[++k]);
    std::size_t block = 0;
    for (std::size_t j = k + 1; j < lines.size() && block < items.size(); ++j) {
      const bool wanted = items[block].find("title \"" + title + "\"") != std::string::npos;
      if (lines[j] == "e") {
        if (wanted) return out;
        ++block;
        continue;
      }
      if (!wanted) continue;
      out.spec = items[block];
      double t = 0, v = 0;
      if (lines[j].ends_with(" nan") && std::sscanf(lines[j].c_str(), "%lf", &t) == 1) {
        ++out.breaks;
        out.break_at.push_back(t);
      } else if (std::sscanf(lines[j].c_str(), "%lf %lf", &t, &v) == 2) {
        out.points.emplace_back(t, v);
      }
    }
    i = k;
  }
  return out;
}

// PSS read every 0.1 s but not from 1 s to 2 s, beside RSS every 10 ms: the PSS and USS lines
// are readings (a point each) broken over the gap; RSS is one line; without a gap, no break.
TEST(Plot, SparseSeriesAreReadingsWithGapsLeftOpen) {
  const std::string dir = test_dir();
  auto trace = [&](const std::string& name, bool gap) {
    std::string text = "QPROF 1 version=0.1.0 interval=0.010000 start=1700000000 metric=rss\nCMDLINE ./job\n";
    char line[128];
    for (int i = 0; i <= 300; ++i) {
      const double t = 1700000000.0 + i * 0.01;
      std::snprintf(line, sizeof line, "MEM %.6f %.4f\n", 100 + i * 0.1, t);
      text += line;
      if (i % 10 == 0 && !(gap && i > 100 && i < 200)) {
        std::snprintf(line, sizeof line, "PSS %.6f %d %d\n", t, (50 + i / 10) << 20, (40 + i / 10) << 20);
        text += line;
        std::snprintf(line, sizeof line, "CPU %.6f %.6f\n", t, i * 0.005);  // half a core
        text += line;
      }
    }
    text += "EXIT 1700000003.000000 status=0 signal=0 timed_out=0\n";
    write(dir + "/" + name, text);
    // --metric rss: Σ RSS filled, so that PSS and USS are the sparse lines drawn beside it.
    const Result r = qprof({"plot", dir + "/" + name, "--metric", "rss", "--panels", "memory,cpu", "-o",
                            dir + "/" + name + ".svg", "--script", dir + "/" + name + ".gp"});
    EXPECT_EQ(r.status, 0) << r.err;
    return read_file(dir + "/" + name + ".gp");
  };
  const std::string gapped = trace("gap.dat", true);
  for (const char* title : {"footprint: PSS of the tree", "USS of the tree"}) {
    const SentSeries s = sent_series(gapped, title);
    ASSERT_FALSE(s.spec.empty()) << title << "\n" << gapped.substr(0, 6000);
    EXPECT_NE(s.spec.find("with linespoints"), std::string::npos) << s.spec;
    EXPECT_EQ(s.points.size(), 22u) << title;  // 0 … 1 s and 2 … 3 s, every 0.1 s
    ASSERT_EQ(s.breaks, 1u) << title;
    EXPECT_GT(s.break_at[0], 1.0 - 1e-6);
    EXPECT_LT(s.break_at[0], 2.0 + 1e-6);
  }
  // CPU, read on the stats schedule: its rate is not held across the stretch without a reading.
  const SentSeries cpu = sent_series(gapped, "CPU of the tree");
  ASSERT_FALSE(cpu.spec.empty()) << gapped.substr(0, 6000);
  EXPECT_NE(cpu.spec.find("with steps"), std::string::npos) << cpu.spec;
  ASSERT_EQ(cpu.breaks, 1u);
  EXPECT_GT(cpu.break_at[0], 1.0 - 1e-6);
  EXPECT_LT(cpu.break_at[0], 2.0 + 1e-6);
  for (const auto& [t, v] : cpu.points) {
    if (t < 0.95 || t > 2.05) {
      EXPECT_NEAR(v, 50.0, 0.5) << t;  // 0.05 s of CPU per 0.1 s: half a core
    }
  }
  const SentSeries rss = sent_series(gapped, "tree RSS sum, peak 130.0 MiB at 3 s");
  ASSERT_FALSE(rss.spec.empty()) << gapped.substr(0, 6000);
  EXPECT_NE(rss.spec.find("with lines "), std::string::npos) << rss.spec;
  EXPECT_EQ(rss.breaks, 0u);
  EXPECT_EQ(rss.points.size(), 301u);

  const std::string whole = trace("whole.dat", false);
  const SentSeries pss = sent_series(whole, "footprint: PSS of the tree");
  EXPECT_EQ(pss.points.size(), 31u);
  EXPECT_EQ(pss.breaks, 0u) << "a series read on its schedule is one line";
  EXPECT_EQ(sent_series(whole, "CPU of the tree").breaks, 0u);
  EXPECT_EQ(whole.find(" nan\n"), std::string::npos);
}

}  // namespace
}  // namespace qprof::test
