// SPDX-License-Identifier: Apache-2.0
// qprof compare: traces side by side, commands run first (with repeats), budgets on a baseline.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return data_file("report/" + name); }

TEST(CompareFiles, LabelsAndFormats) {
  const Result text = qprof(
      {"compare", fixture("minmax.dat"), fixture("layerwise.dat"), "--label", "minmax (v1)", "--label", "layerwise"});
  ASSERT_EQ(text.status, 0) << text.err;
  // 80 columns into a pipe: the columns past them are named under the table.
  EXPECT_EQ(text.out,
            "label        peak RSS MiB   peak ratio  duration s   time ratio\n"
            "minmax (v1)        2580.0         1.00      10.000*        1.00\n"
            "layerwise          2468.0*        0.96      15.000         1.50\n"
            "* lowest of its column\n"
            "ratios: to the first row (minmax (v1))\n"
            "no footprint in these traces (recorded with --no-pss, or by mprof):\n"
            "  the figures are \u03a3 RSS\n"
            "left out to fit 80 columns: peak kernel, disk read, disk write;\n"
            "  --wide shows them, as do --format csv, json and md\n");
  const Result wide = qprof({"compare", "--wide", fixture("minmax.dat"), fixture("layerwise.dat"), "--label",
                             "minmax (v1)", "--label", "layerwise"});
  ASSERT_EQ(wide.status, 0) << wide.err;
  EXPECT_EQ(wide.out,
            "label        peak RSS MiB   peak ratio  duration s   time ratio  peak kernel MiB   disk read MiB   disk "
            "write MiB\n"
            "minmax (v1)        2580.0         1.00      10.000*        1.00           2400.0           300.0*      "
            "      20.0\n"
            "layerwise          2468.0*        0.96      15.000         1.50                -           900.0       "
            "      20.0\n"
            "* lowest of its column\n"
            "ratios: to the first row (minmax (v1))\n"
            "no footprint in these traces (recorded with --no-pss, or by mprof): the figures are \u03a3 RSS\n");
  const Result csv =
      qprof({"compare", "--format", "csv", "--unit", "MiB", fixture("minmax.dat"), fixture("layerwise.dat")});
  ASSERT_EQ(csv.status, 0);
  EXPECT_TRUE(csv.out.starts_with("label,trace,runs,duration_s,duration_s_ratio,duration_s_lowest,peak_rss_mib,"))
      << csv.out;
  EXPECT_NE(csv.out.find("\nlayerwise," + fixture("layerwise.dat") + ",1,15,1.5,false,2468,0.956589,true,"),
            std::string::npos)
      << csv.out;
  const auto j = nlohmann::json::parse(
      qprof({"compare", "--format", "json", "--stages", fixture("minmax.dat"), fixture("layerwise.dat")}).out);
  EXPECT_EQ(j["comparison"][1]["stage_peak_bytes:Quantization"]["value"], 2468u << 20);
  EXPECT_EQ(j["comparison"][0]["stage_peak_bytes:Quantization"]["lowest"], true);
}

// Four traces with stages: every line of the default table fits 80 columns (a pipe), the footprint
// leads, and what was left out is named; --stages' stages and --sweep's tables obey the same rule.
TEST(CompareFiles, TextFitsATerminal) {
  const std::vector<std::string> files = {fixture("quark.dat"), fixture("minmax.dat"), fixture("percentile.dat"),
                                          fixture("layerwise.dat")};
  auto fits = [](const std::string& out) {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      std::size_t width = 0;
      for (unsigned char c : line) width += (c & 0xC0) != 0x80;
      if (width > 80) return false;
    }
    return true;
  };
  std::vector<std::string> args{"compare", "--stages"};
  args.insert(args.end(), files.begin(), files.end());
  const Result r = qprof(args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fits(r.out)) << r.out;
  // --stages asked for the stages: they come before Σ RSS's other columns and the duration.
  EXPECT_TRUE(r.out.starts_with("label       peak footprint MiB   peak RSS MiB   peak ratio")) << r.out;
  EXPECT_NE(r.out.find("left out to fit 80 columns: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--wide shows them"), std::string::npos) << r.out;
  args.push_back("--wide");
  const Result wide = qprof(args);
  ASSERT_EQ(wide.status, 0) << wide.err;
  EXPECT_FALSE(fits(wide.out)) << wide.out;
  EXPECT_NE(wide.out.find("peak in Quantization MiB"), std::string::npos) << wide.out;
  EXPECT_EQ(wide.out.find("left out"), std::string::npos) << wide.out;
  // The machine formats keep every column whatever the width.
  const Result csv = qprof({"compare", "--stages", "--format", "csv", files[0], files[1]});
  EXPECT_NE(csv.out.find("stage_peak_bytes:Quantization"), std::string::npos) << csv.out;
  const Result sweep =
      qprof({"compare", "--sweep", "n", "--label", "n=1,n=2,n=3,n=4", files[0], files[1], files[2], files[3]});
  EXPECT_TRUE(fits(sweep.out)) << sweep.out;
}

TEST(CompareFiles, UsageErrors) {
  EXPECT_EQ(qprof({"compare"}).status, 2);
  EXPECT_EQ(qprof({"compare", fixture("minmax.dat"), "--label", "a,b"}).status, 2);
  EXPECT_EQ(qprof({"compare", fixture("minmax.dat"), "--repeat", "3"}).status, 2);
  EXPECT_EQ(qprof({"compare", fixture("minmax.dat"), "--max-growth", "10%"}).status, 2);  // nothing to grow from
  EXPECT_EQ(qprof({"compare", fixture("minmax.dat"), fixture("layerwise.dat"), "--max-growth", "ten"}).status, 2);
  EXPECT_EQ(qprof({"compare", fixture("minmax.dat"), fixture("layerwise.dat"), "--max-peak", "2XB"}).status, 2);
  EXPECT_EQ(qprof({"compare", fixture("minmax.dat"), fixture("layerwise.dat"), "--format", "xml"}).status, 2);
  EXPECT_EQ(qprof({"compare", fixture("minmax.dat"), temp_dir() + "/none.dat"}).status, 2);
  const Result metric = qprof({"compare", fixture("minmax.dat"), fixture("layerwise.dat"), "--metric", "gpu"});
  EXPECT_EQ(metric.status, 2);
  EXPECT_NE(joined(metric.err).find("no trace has gpu (the first has: rss, kernel_process)"), std::string::npos)
      << metric.err;
}

// --label takes one value per use (or a comma list): the files after it stay files.
TEST(CompareFiles, LabelNeverSwallowsFiles) {
  const std::vector<std::string> files = {fixture("minmax.dat"), fixture("percentile.dat"), fixture("layerwise.dat")};
  Result r = qprof(
      {"compare", "--format", "json", "--label", "A", "--label", "B", "--label", "C", files[0], files[1], files[2]});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["comparison"].size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(j["comparison"][i]["label"], std::string(1, static_cast<char>('A' + i)));
    EXPECT_EQ(j["comparison"][i]["trace"], files[i]);
  }
  r = qprof({"compare", "--format", "json", "--label", "A,B,C", files[0], files[1], files[2]});
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["comparison"].size(), 3u);
  EXPECT_EQ(j["comparison"][2]["label"], "C");
  EXPECT_EQ(j["comparison"][2]["trace"], files[2]);
  // The old spelling: B and C are files now, not labels, and no such files exist.
  r = qprof({"compare", "--label", "A", "B", "C", files[0], files[1], files[2]});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(joined(r.err).find("nothing to compare"), std::string::npos) << r.err;
}

TEST(CompareFiles, PlotDrawsTheRunsOverlaid) {
  const std::string svg = temp_dir() + "/compare.svg";
  const Result r =
      qprof({"compare", fixture("minmax.dat"), fixture("layerwise.dat"), "--label", "minmax,layerwise", "--plot", svg});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("minmax"), std::string::npos) << "the table is printed too";
  const std::string chart = read_file(svg);
  EXPECT_NE(chart.find("<svg"), std::string::npos);
  // Each run's legend entry: its label and its peak.
  EXPECT_NE(chart.find("minmax, peak"), std::string::npos);
  EXPECT_NE(chart.find("layerwise, peak"), std::string::npos);
  // A bad chart name is a usage error before anything is read or run.
  EXPECT_EQ(qprof({"compare", fixture("minmax.dat"), "--plot", temp_dir() + "/chart.gif"}).status, 2);
  // A sweep's chart is a picture: a text chart is refused before the table is printed.
  const Result text = qprof({"compare", "--sweep", "n", fixture("minmax.dat"), "--plot", "-"});
  EXPECT_EQ(text.status, 2);
  EXPECT_EQ(text.out, "");
  EXPECT_NE(joined(text.err).find("a sweep's chart is a .png, .svg or .pdf file"), std::string::npos) << text.err;
  std::string help;  // its lines joined: the help wraps to the terminal
  for (const char c : qprof({"compare", "--help"}).out) {
    if (!std::isspace(static_cast<unsigned char>(c)))
      help += c;
    else if (!help.empty() && help.back() != ' ')
      help += ' ';
  }
  EXPECT_NE(help.find("with --sweep, the model's chart: .png, .svg or .pdf"), std::string::npos) << help;
}

// Rows are named as qprof plot names traces: two files of one name in other folders by their
// paths, one file given twice by its place; in every format and in the ratio line.
TEST(CompareFiles, RowsOfOneNameAreToldApart) {
  const std::string d1 = temp_dir() + "/names/d1", d2 = temp_dir() + "/names/d2";
  fs::create_directories(d1);
  fs::create_directories(d2);
  fs::copy_file(fixture("minmax.dat"), d1 + "/x.dat", fs::copy_options::overwrite_existing);
  fs::copy_file(fixture("layerwise.dat"), d2 + "/x.dat", fs::copy_options::overwrite_existing);
  const Result text = qprof({"compare", d1 + "/x.dat", d2 + "/x.dat"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_TRUE(text.out.find("\n" + d1 + "/x ") != std::string::npos) << text.out;
  EXPECT_TRUE(text.out.find("\n" + d2 + "/x ") != std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ratios: to the first row (" + d1 + "/x)"), std::string::npos) << text.out;
  const Result md = qprof({"compare", "--format", "md", d1 + "/x.dat", d2 + "/x.dat"});
  EXPECT_NE(md.out.find("| " + d2 + "/x "), std::string::npos) << md.out;

  const std::string a = fixture("minmax.dat");
  const Result csv = qprof({"compare", "--format", "csv", a, a});
  ASSERT_EQ(csv.status, 0) << csv.err;
  // One file twice: its name (its path would be no different), then its place.
  EXPECT_NE(csv.out.find("\nminmax #1," + a + ","), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\nminmax #2," + a + ","), std::string::npos) << csv.out;
  const auto j = nlohmann::json::parse(qprof({"compare", "--format", "json", "--label", "v,v", a, a}).out);
  EXPECT_EQ(j["comparison"][0]["label"], "v #1");
  EXPECT_EQ(j["comparison"][1]["label"], "v #2");
  // Names that differ stay as they were.
  const auto k = nlohmann::json::parse(qprof({"compare", "--format", "json", a, fixture("layerwise.dat")}).out);
  EXPECT_EQ(k["comparison"][0]["label"], "minmax");
  EXPECT_EQ(k["comparison"][1]["label"], "layerwise");
}

TEST(CompareBudgets, GrowthAgainstABaselineFile) {
  // percentile peaks at 2724 MiB, 5.6 % above minmax's 2580 MiB.
  const Result over =
      qprof({"compare", "--baseline", fixture("minmax.dat"), fixture("percentile.dat"), "--max-growth", "5%"});
  EXPECT_EQ(over.status, 3) << over.err;
  EXPECT_NE(joined(over.err).find(
                "memory budget exceeded: percentile: peak RSS 2.66 GiB is +5.6% against the baseline minmax "
                "(2.52 GiB), more than the 5% allowed, by 15.0 MiB, in stage 'Calibration'"),
            std::string::npos)
      << over.err;
  EXPECT_NE(over.out.find("+5.6% over the baseline"), std::string::npos) << over.out;
  EXPECT_EQ(
      qprof({"compare", "--baseline", fixture("minmax.dat"), fixture("percentile.dat"), "--max-growth", "6%"}).status,
      0);
  EXPECT_EQ(qprof({"compare", "--baseline", fixture("minmax.dat"), fixture("percentile.dat"), "--max-growth", "150MiB"})
                .status,
            0);
  EXPECT_EQ(qprof({"compare", "--baseline", fixture("minmax.dat"), fixture("percentile.dat"), "--max-growth", "100MiB"})
                .status,
            3);
  // Without --baseline the first row is the baseline.
  EXPECT_EQ(qprof({"compare", fixture("minmax.dat"), fixture("layerwise.dat"), "--max-growth", "0%"}).status, 0);
}

TEST(CompareBudgets, MaxPeakSparesTheBaselineAndMarksTheRows) {
  const Result r = qprof({"compare", "--format", "json", "--baseline", fixture("percentile.dat"), fixture("minmax.dat"),
                          fixture("layerwise.dat"), "--max-peak", "2500MiB"});
  EXPECT_EQ(r.status, 3) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["comparison"][0]["budget"], "");  // the baseline is the reference, not a candidate
  EXPECT_TRUE(j["comparison"][0]["over_budget"].is_null());
  EXPECT_EQ(j["comparison"][1]["over_budget"], true);
  EXPECT_EQ(j["comparison"][1]["budget"], "over --max-peak by 80.0 MiB (+3.2%)");
  EXPECT_EQ(j["comparison"][2]["over_budget"], false);
  EXPECT_EQ(j["comparison"][2]["budget"], "ok");
}

// --max-peak 90%: each row's budget is its share of the limit its own trace recorded.
TEST(CompareBudgets, MaxPeakAsAShareOfEachRowsLimit) {
  auto trace = [](const std::string& name, int peak_mib, long long limit) {
    const std::string path = temp_dir() + "/" + name + ".dat";
    std::ofstream f(path);
    f << "QPROF 1 version=0.1.0 interval=0.010000 host=h root_pid=1 start=100.000000 metric=rss";
    if (limit > 0) f << " limit=" << limit << " limit_source=cgroup-v2";
    f << "\nCMDLINE job\n";
    for (int i = 0; i <= 10; ++i) f << "MEM " << (i == 5 ? peak_mib : 100) << ".000000 " << 100 + i << ".0000\n";
    return path;
  };
  const long long gib = 1LL << 30;
  const std::string small = trace("small", 600, gib), large = trace("large", 950, gib),
                    tight = trace("tight", 600, gib / 2);
  Result r = qprof({"compare", "--format", "json", small, large, tight, "--max-peak", "90%"});
  EXPECT_EQ(r.status, 3) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["comparison"][0]["budget"], "ok");
  EXPECT_EQ(j["comparison"][1]["over_budget"], true);  // 950 MiB against 921.6 MiB
  EXPECT_EQ(j["comparison"][2]["over_budget"], true);  // 600 MiB against 460.8 MiB
  EXPECT_NE(joined(r.err).find("exceeds the budget of 921.6 MiB (90% of its limit) by 28.4 MiB"), std::string::npos)
      << r.err;
  EXPECT_NE(joined(r.err).find("exceeds the budget of 460.8 MiB (90% of its limit)"), std::string::npos) << r.err;
  EXPECT_EQ(qprof({"compare", small, large, "--max-peak", "95%"}).status, 0);
  // A trace that records no limit (mprof's) cannot be held to a share of it.
  r = qprof({"compare", small, trace("mprof_like", 600, 0), "--max-peak", "90%"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(joined(r.err).find("records no memory limit"), std::string::npos) << r.err;
}

TEST(CompareRuns, RunsEachCommandWithRepeatsAndKeepsTheTraces) {
  const std::string prefix = temp_dir() + "/cmp";
  // The commands also write to stdout: the table on stdout must stay parseable.
  const std::string small = "echo noise; " + workload("alloc_tree") + " 20 0 0 150";
  const std::string large = "echo noise; " + workload("alloc_tree") + " 80 0 0 150";
  const Result r = qprof({"compare", "--format", "json", "--run", small, "--run", large, "--repeat", "2", "--label",
                          "small", "--label", "large", "-o", prefix, "--max-growth", "1GiB"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["comparison"].size(), 2u);
  for (const char* name : {"-1-1.dat", "-1-2.dat", "-2-1.dat", "-2-2.dat"}) {
    EXPECT_TRUE(fs::exists(prefix + name)) << name;
    EXPECT_NE(joined(r.err).find(prefix + name), std::string::npos) << "the trace names are printed: " << r.err;
  }
  EXPECT_NE(joined(r.err).find("noise"), std::string::npos);
  const auto& a = j["comparison"][0];
  const auto& b = j["comparison"][1];
  EXPECT_EQ(a["label"], "small");
  EXPECT_EQ(a["runs"], 2);
  EXPECT_EQ(a["trace"], prefix + "-1-1.dat;" + prefix + "-1-2.dat");
  const double sa = a["peak_rss_bytes"]["value"].get<double>(), sb = b["peak_rss_bytes"]["value"].get<double>();
  EXPECT_NEAR((sb - sa) / (1 << 20), 60.0, 3.0);
  EXPECT_LE(a["peak_rss_bytes"]["min"].get<double>(), sa);
  EXPECT_GE(a["peak_rss_bytes"]["max"].get<double>(), sa);
  EXPECT_EQ(a["peak_rss_bytes"]["lowest"], true);
  EXPECT_GT(b["peak_rss_bytes"]["ratio"].get<double>(), 1.5);
  EXPECT_EQ(b["budget"], "ok");
  // The median of two runs is their mean (JSON carries whole bytes).
  const Trace t1 = trace::read_trace(prefix + "-2-1.dat"), t2 = trace::read_trace(prefix + "-2-2.dat");
  EXPECT_NEAR(sb, (static_cast<double>(max_mem(t1)) + static_cast<double>(max_mem(t2))) / 2.0, 0.5);
}

TEST(CompareRuns, AFailedCommandsStatusWins) {
  const std::string prefix = temp_dir() + "/cmpfail";
  const Result r = qprof({"compare", fixture("minmax.dat"), "--run", "exit 5", "-o", prefix, "--max-peak", "1KiB"});
  EXPECT_EQ(r.status, 5) << r.err;
  EXPECT_NE(joined(r.err).find("'exit 5' exited with status 5; its trace is kept"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("exit 5"), std::string::npos) << "the table is still printed: " << r.out;
  EXPECT_TRUE(fs::exists(prefix + "-1.dat"));
}

}  // namespace
}  // namespace qprof::test
