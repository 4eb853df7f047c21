// SPDX-License-Identifier: Apache-2.0
// qprof peak: one-liners over traces (as mprof peak prints them) and over a command run at once.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return data_file("report/" + name); }

// qprof peak with a TMPDIR of its own (a fresh_dir), to see that the temporary trace is removed.
Result peak_with_tmpdir(const std::string& tmpdir, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"env", "TMPDIR=" + tmpdir, qprof_bin(), "peak"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

double value_of(const std::string& line) { return std::strtod(line.c_str(), nullptr); }

TEST(PeakCommand, PrintsOnlyThePeakOfTheWholeTree) {
  // The tree's peak is 100 + 3 × 100 MiB over what the same tree holds allocating nothing.
  const std::string tmp = fresh_dir("peak_tmp");
  const Result base = peak_with_tmpdir(tmp, {"--", workload("alloc_tree"), "0", "3", "0", "300"});
  const Result full = peak_with_tmpdir(tmp, {"--", workload("alloc_tree"), "100", "3", "100", "400"});
  ASSERT_EQ(base.status, 0) << base.err;
  ASSERT_EQ(full.status, 0) << full.err;
  for (const Result* r : {&base, &full}) {
    ASSERT_EQ(r->out.find('\n'), r->out.size() - 1) << "one line: " << r->out;
    EXPECT_TRUE(r->out.ends_with(" MiB\n")) << r->out;
    EXPECT_EQ(r->err.find("qprof:   peak"), std::string::npos) << "no summary: " << r->err;
  }
  const double expected = 400.0 + value_of(base.out);
  EXPECT_NEAR(value_of(full.out), expected, 0.05 * expected) << full.out;
  EXPECT_TRUE(fs::is_empty(tmp)) << "the temporary trace was not removed";
}

TEST(PeakCommand, CommandsStdoutGoesToStderrAndItsStatusIsKept) {
  const Result r = qprof({"peak", "--", "sh", "-c", "echo from the job; exit 4"});
  EXPECT_EQ(r.status, 4);
  ASSERT_TRUE(r.out.ends_with(" MiB\n")) << r.out;
  EXPECT_EQ(r.out.find("from the job"), std::string::npos);
  EXPECT_NE(joined(r.err).find("from the job\n"), std::string::npos) << r.err;
  EXPECT_EQ(qprof({"peak", "--", "no-such-command-qprof"}).status, 127);
}

TEST(PeakCommand, KeepsTheTraceWithOutputAndSpeaksJson) {
  const std::string out = temp_dir() + "/peak_kept.dat";
  // --metric rss: the figure of the MEM lines, compared with them (-- CMD's default is the footprint).
  const Result r = qprof({"peak", "--json", "--unit", "KiB", "--metric", "rss", "-o", out, "--", workload("markers")});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_object()) << r.out;
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(j["file"], out);
  EXPECT_EQ(j["bytes"].get<Bytes>(), max_mem(t));
  EXPECT_EQ(j["unit"], "KiB");
  EXPECT_NEAR(j["value"].get<double>(), static_cast<double>(max_mem(t)) / 1024.0, 1e-6);  // 6 decimals
  EXPECT_EQ(j["stage"], "Calibration");  // 120 MiB held between its markers
}

TEST(PeakCommand, BudgetOverUnderAndTheCommandsFailureWins) {
  // The markers workload peaks inside its Calibration stage (121 MiB: 40 + 80 + its own).
  const std::vector<std::string> job{"--", workload("markers")};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "peak");
    args.insert(args.end(), job.begin(), job.end());
    return qprof(args);
  };
  const Result over = with({"--max-peak", "50MiB"});
  EXPECT_EQ(over.status, 3) << over.err;
  EXPECT_TRUE(over.out.ends_with(" MiB\n"));
  EXPECT_NE(joined(over.err).find("memory budget exceeded: peak footprint ("), std::string::npos) << over.err;
  EXPECT_NE(joined(over.err).find("exceeds the budget of 50.0 MiB by "), std::string::npos) << over.err;
  // Σ RSS is sampled every 10 ms: its peak's moment names the stage.
  const Result over_rss = with({"--max-peak", "50MiB", "--metric", "rss"});
  EXPECT_EQ(over_rss.status, 3) << over_rss.err;
  EXPECT_NE(joined(over_rss.err).find("memory budget exceeded: peak RSS "), std::string::npos) << over_rss.err;
  EXPECT_NE(joined(over_rss.err).find("in stage 'Calibration'"), std::string::npos) << over_rss.err;
  EXPECT_EQ(with({"--max-peak", "1GiB"}).status, 0);
  EXPECT_EQ(with({"--max-peak", "1073741824"}).status, 0);
  EXPECT_EQ(qprof({"peak", "--max-peak", "1KiB", "--", workload("exit_with"), "5"}).status, 5);
}

TEST(PeakCommand, BadValuesAreUsageErrorsBeforeAnythingRuns) {
  const std::string flag = temp_dir() + "/peak_ran";
  for (const std::vector<std::string>& bad : {
           std::vector<std::string>{"--max-peak", "4 gigs"},
           {"--max-peak", "-1GiB"},
           {"--unit", "mib"},
           {"--metric", "vram"},
           {"--children", "--metric", "pss"},
       }) {
    std::vector<std::string> args{"peak"};
    args.insert(args.end(), bad.begin(), bad.end());
    args.insert(args.end(), {"--", "touch", flag});
    EXPECT_EQ(qprof(args).status, 2) << bad[0] << " " << bad[1];
  }
  EXPECT_FALSE(fs::exists(flag));
  EXPECT_EQ(qprof({"peak", fixture("quark.dat"), "--", "true"}).status, 2);
}

TEST(PeakFiles, OneLinePerFileAsMprofPeakPrintsIt) {
  const std::vector<std::string> files{fixture("quark.dat"), fixture("minmax.dat"), data_file("mprof/children.dat"),
                                       data_file("mprof/func.dat")};
  std::vector<std::string> args{"peak"};
  args.insert(args.end(), files.begin(), files.end());
  // --no-children: one line per file.
  args.push_back("--no-children");
  const Result ours = qprof(args);
  args.pop_back();
  ASSERT_EQ(ours.status, 0) << ours.err;
  EXPECT_EQ(ours.out, fixture("quark.dat") + "\t900.000 MiB\n" + fixture("minmax.dat") + "\t2580.000 MiB\n" +
                          data_file("mprof/children.dat") + "\t100.473 MiB\n" + data_file("mprof/func.dat") +
                          "\t141.797 MiB\n");
  // By default mprof peak's very output: the per-child lines of children.dat included (qprof
  // needed --children for them, yet the README said "same output").
  std::vector<std::string> margs{mprof_bin(), "peak"};
  margs.insert(margs.end(), files.begin(), files.end());
  const Result theirs = run(margs);
  ASSERT_EQ(theirs.status, 0) << theirs.err;
  ASSERT_NE(theirs.out.find("  Child "), std::string::npos) << theirs.out;
  EXPECT_EQ(qprof(args).out, theirs.out);
  args.push_back("--children");
  EXPECT_EQ(qprof(args).out, theirs.out);
}

// Without a file, the newest trace by the time in its name: qprof list's last row, the file mprof
// takes; not the one written last (a copy, a touch), which plot and peak took.
TEST(PeakFiles, WithoutAFileTheNewestByNameAsListAndMprof) {
  const std::string dir = fresh_dir("newest");
  fs::copy_file(fixture("quark.dat"), dir + "/mprofile_20300101000000.dat");
  fs::copy_file(fixture("minmax.dat"), dir + "/mprofile_20200101000000.dat");
  fs::last_write_time(dir + "/mprofile_20300101000000.dat",
                      fs::last_write_time(dir + "/mprofile_20200101000000.dat") - std::chrono::hours(24 * 365));
  const Result r = run({"sh", "-c", "cd \"$0\" && exec \"$1\" peak", dir, qprof_bin()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("mprofile_20300101000000.dat\t", 0), 0u) << r.out;
  const Result list = qprof({"list", "--dir", dir});
  EXPECT_NE(list.out.find("\n1  mprofile_20300101000000.dat"), std::string::npos) << list.out;
}

// A trace of qprof run -M: the child lines as mprof peak prints them, by default.
TEST(PeakFiles, ChildLinesOfAMultiprocessTraceAsMprofPeak) {
  const std::string out = temp_dir() + "/tree.dat";
  ASSERT_EQ(qprof({"run", "-q", "-M", "-o", out, workload("alloc_tree"), "10", "2", "20", "200"}).status, 0);
  const Result ours = qprof({"peak", out});
  ASSERT_EQ(ours.status, 0) << ours.err;
  const Result theirs = run({mprof_bin(), "peak", out});
  ASSERT_EQ(theirs.status, 0) << theirs.err;
  EXPECT_EQ(ours.out, theirs.out);
  std::size_t children = 0;
  for (std::size_t at = 0; (at = ours.out.find("\n  Child ", at)) != std::string::npos; ++at) ++children;
  EXPECT_EQ(children, 2u) << ours.out;
  EXPECT_EQ(qprof({"peak", "--no-children", out}).out.find("Child"), std::string::npos);
  EXPECT_EQ(qprof({"peak", "--children", "--no-children", out}).status, 2);
}

// --children on a trace without -M said nothing at all.
TEST(PeakFiles, ChildrenOfATraceWithoutThemIsSaid) {
  const Result r = qprof({"peak", "--children", fixture("minmax.dat")});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, fixture("minmax.dat") + "\t2580.000 MiB\n");
  EXPECT_NE(joined(r.err).find("no child lines"), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("-M"), std::string::npos) << r.err;
}

// mprof's name of --stage.
TEST(PeakFiles, FuncIsMprofsNameOfStage) {
  const std::string q = fixture("quark.dat");
  const Result r = qprof({"peak", "--func", "Calibration", q});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, q + "\t700.000 MiB\n");
}

TEST(PeakFiles, MetricStageUnitAndJson) {
  const std::string q = fixture("quark.dat");
  EXPECT_EQ(qprof({"peak", "--metric", "gpu", q}).out, q + "\t2050.000 MiB\n");
  EXPECT_EQ(qprof({"peak", "--metric", "cgroup", "--unit", "GiB", q}).out, q + "\t0.928 GiB\n");
  EXPECT_EQ(qprof({"peak", "--metric", "kernel_process", "--unit", "B", q}).out, q + "\t734003200 B\n");
  EXPECT_EQ(qprof({"peak", "--stage", "Calibration", q}).out, q + "\t700.000 MiB\n");
  EXPECT_EQ(qprof({"peak", "--stage", "Calibration", "--metric", "pss", q}).out, "");  // no PSS sample inside
  const Result j = qprof({"peak", "--json", "--metric", "pss", q, fixture("open_stage.dat")});
  EXPECT_EQ(j.status, 2);
  const auto arr = nlohmann::json::parse(j.out);
  ASSERT_EQ(arr.size(), 2u);
  EXPECT_EQ(arr[0]["bytes"], 850u << 20);
  EXPECT_EQ(arr[0]["stage"], "Quantization (Static)");
  EXPECT_EQ(arr[1]["error"], fixture("open_stage.dat") + " has no pss (it has: rss)");
}

TEST(PeakFiles, ErrorsNameTheFileAndSayWhatItHas) {
  const Result missing_metric = qprof({"peak", "--metric", "gpu", fixture("open_stage.dat"), fixture("quark.dat")});
  EXPECT_EQ(missing_metric.status, 2);
  EXPECT_EQ(missing_metric.out, fixture("quark.dat") + "\t2050.000 MiB\n");
  EXPECT_NE(joined(missing_metric.err).find("open_stage.dat has no gpu (it has: rss)"), std::string::npos)
      << missing_metric.err;
  const Result no_stage = qprof({"peak", "--stage", "Export", fixture("open_stage.dat")});
  EXPECT_EQ(no_stage.status, 2);
  EXPECT_NE(joined(no_stage.err).find("has no stage 'Export' (stages: 'Load', 'Train', 'Eval')"), std::string::npos)
      << no_stage.err;
  const Result unreadable = qprof({"peak", temp_dir() + "/nope.dat"});
  EXPECT_EQ(unreadable.status, 2);
  EXPECT_NE(joined(unreadable.err).find("nope.dat"), std::string::npos);
}

TEST(PeakFiles, BudgetOnFiles) {
  const Result over = qprof({"peak", "--max-peak", "1000MiB", fixture("quark.dat"), fixture("minmax.dat")});
  EXPECT_EQ(over.status, 3);
  EXPECT_NE(joined(over.err).find("in " + fixture("minmax.dat") +
                                  ": peak RSS 2.52 GiB exceeds the budget of 1000.0 MiB by "
                                  "1.54 GiB (+158.0%), at 4 s, in stage 'Calibration'"),
            std::string::npos)
      << over.err;
  EXPECT_EQ(joined(over.err).find("quark.dat:"), std::string::npos);
  EXPECT_EQ(qprof({"peak", "--max-peak", "3GB", fixture("quark.dat"), fixture("minmax.dat")}).status, 0);
}

}  // namespace
}  // namespace qprof::test
