// SPDX-License-Identifier: Apache-2.0
// The bracket of peaks holds on real workloads: lower bound ≤ every figure that claims to bound
// the tree's peak ≤ upper bound, for processes that grow in their last moments (after the last
// VmHWM reading), and with a cgroup whose charge is named for what it is.
#include <unistd.h>

#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>

#include "e2e_util.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/checkpoints.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using analysis::bracket_inputs;
using analysis::largest_cgroup_sample;
using analysis::peak_bracket;
using trace::bracket_violations;
using trace::Marker;
using trace::PeakBracket;
using trace::PssSample;
using trace::Trace;

namespace {

constexpr Bytes kMiB = 1 << 20;

// Runs CMD under qprof RUNS times; every trace's bracket must hold and contain `grown` MiB.
void expect_ordered_bounds(const std::vector<std::string>& cmd, int runs, Bytes grown) {
  for (int i = 0; i < runs; ++i) {
    const std::string out = temp_dir() + "/bounds_" + std::to_string(i) + ".dat";
    std::vector<std::string> args{"run", "-q", "-o", out, "--"};
    args.insert(args.end(), cmd.begin(), cmd.end());
    const Result r = qprof(args);
    ASSERT_EQ(r.status, 0) << r.err;
    const Trace t = trace::read_trace(out);
    const PeakBracket b = peak_bracket(t);
    ASSERT_TRUE(b.lower && b.upper) << "run " << i << ": the trace has both bounds\n" << read_file(out);
    // The process touched `grown` MiB itself: the kernel's figure holds it, and the bound above it.
    EXPECT_GE(*b.lower, grown) << "run " << i;
    EXPECT_LE(*b.lower, *b.upper) << "run " << i;
    // What the trace itself says (PEAK lines) is ordered, not only what a reader makes of it.
    ASSERT_TRUE(t.peaks.count("hwm_sum")) << "run " << i;
    EXPECT_LE(t.peaks.at("kernel_process"), t.peaks.at("hwm_sum")) << "run " << i;
    EXPECT_TRUE(bracket_violations(b, bracket_inputs(t)).empty()) << "run " << i;
    // The bracket raises Σ VmHWM to the figures below it; the raw reading must not have needed it.
    for (const std::string& n : t.notes)
      EXPECT_EQ(n.find("Σ VmHWM as read"), std::string::npos) << "run " << i << ": " << n;
  }
}

TEST(Bounds, PythonThatGrowsJustBeforeItExits) {
  expect_ordered_bounds({debian_python(), "-c", "import os; b = bytearray(b'1') * (300 << 20); os._exit(0)"}, 20,
                        300 * kMiB);
}

TEST(Bounds, CProgramThatMallocsAndExits) { expect_ordered_bounds({workload("late_growth"), "300"}, 20, 300 * kMiB); }

TEST(Bounds, TheSummaryPrintsTheBracketInOrder) {
  const std::string out = temp_dir() + "/summary.dat";
  const Result r = qprof({"run", "-v", "-o", out, "--", workload("late_growth"), "300"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("lower bound"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("upper bound"), std::string::npos) << r.err;
  const Trace t = trace::read_trace(out);
  EXPECT_GE(t.peaks.at("hwm_sum"), t.peaks.at("kernel_process"));
}

// alloc_tree's parent reaps its three children itself: qprof never sees their exit, and covers
// them with the parent's wait4 figure (its RUSAGE_CHILDREN) when it reaps the parent.
TEST(Bounds, ChildrenReapedByTheirParentAreCovered) {
  // An AddressSanitizer qprof is larger at the fork than these jobs grow: the kernel's figure of
  // the command, which counts its pre-exec copy of qprof, is then left out by design.
  if (sanitized()) GTEST_SKIP() << "the kernel's single-process figure is undefined under an AddressSanitizer qprof";
  const std::string out = temp_dir() + "/reaped_by_parent.dat";
  const Result r = qprof({"run", "-q", "-o", out, "--", workload("alloc_tree"), "50", "3", "50", "300"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.peaks.count("hwm_sum")) << "every process covered: Σ VmHWM is a bound\n" << r.err;
  EXPECT_FALSE(t.peaks.count("hwm_sum_partial"));
  EXPECT_GE(t.peaks.at("hwm_sum"), 200 * kMiB);
  EXPECT_GE(t.peaks.at("kernel_process"), 50 * kMiB);
  EXPECT_LE(t.peaks.at("kernel_process"), t.peaks.at("hwm_sum"));
}

// A 300 MiB job that runs short subprocesses one after another: each child's mark starts at the
// job's size (its pages are shared at the fork), but the children never live together, so the
// upper bound counts the job and the children of one stats window, not every process (6×
// before). A window (0.1 s) holds the job and one child as a rule (about 2×); it holds two when
// one child leaves in it and the next, read between its fork and its exec, is alive at its end
// (3×: seen in one run of the parallel test suite on a fresh machine).
TEST(Bounds, ShortSubprocessesOneAfterAnotherCountOneAtATime) {
  const std::string out = temp_dir() + "/subprocesses.dat";
  const Result r = qprof({"run", "-q", "-o", out, "--", debian_python(), "-c",
                          "import subprocess\n"
                          "b = bytearray(300 << 20)\n"
                          "for i in range(0, len(b), 4096): b[i] = 1\n"
                          "for i in range(5): subprocess.run(['sleep', '0.3'])\n"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.peaks.count("hwm_sum")) << r.err;
  const Bytes upper = t.peaks.at("hwm_sum");
  EXPECT_GE(upper, 300 * kMiB);
  EXPECT_GE(upper, t.peaks.at("kernel_process"));
  EXPECT_GE(upper, max_mem(t));
  // The job and at most two children, each counted with at most the job's wait4 figure.
  EXPECT_LE(upper, 3 * t.peaks.at("kernel_process") + 16 * kMiB) << "upper " << mib(upper) << " MiB";
}

// PSS runs on a slower schedule than RSS. At a marker, qprof takes a fresh pass when it is cheap;
// whatever it has, the checkpoint says how old its PSS is, and that age is the trace's own.
TEST(Checkpoints, PssCarriesItsAgeAndEndComesLast) {
  const std::string out = temp_dir() + "/pss_age.dat";
  const std::string yaml = temp_dir() + "/pss_age.yaml";
  const Result r = qprof(
      {"run", "-q", "--metric", "pss", "--pss-interval", "5", "-o", out, "--yaml", yaml, "--", workload("markers")});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_GE(t.markers.size(), 3u);
  const YAML::Node y = YAML::LoadFile(yaml);
  const YAML::Node cps = y["qprof"]["checkpoints"];
  ASSERT_EQ(cps.size(), t.markers.size() + 2);  // Start, the markers, End
  int fresh = 0;
  for (std::size_t i = 0; i < t.markers.size(); ++i) {
    const Marker& m = t.markers[i];
    const YAML::Node c = cps[i + 1];
    ASSERT_TRUE(c["pss_age_s"]) << m.label;
    const double age = c["pss_age_s"].as<double>();
    // The age names a PSS line of the trace: the one taken `age` before the marker, or for a
    // pass taken at the marker (age 0), one just after it.
    bool named = false;
    for (const PssSample& p : t.pss) {
      if (std::abs((m.t - age) - p.t) < 2e-4) named = true;
      if (age == 0.0 && p.t >= m.t - 2e-4 && p.t <= m.t + 0.5) named = true;
    }
    EXPECT_TRUE(named) << m.label << ": pss_age_s " << age;
    if (age < 0.1) ++fresh;
  }
  // With a 5 s schedule only the passes taken at markers can be this fresh.
  EXPECT_GE(fresh, 1);
  // End: the last sample of the live tree, after every marker, not zero.
  const YAML::Node recs = y["memory_usage"];
  const YAML::Node end = recs[recs.size() - 1];
  EXPECT_EQ(end["step"].as<std::string>(), "End");
  EXPECT_GT(end["cpu_memory_mb"].as<double>(), 0.0);
  EXPECT_GE(end["timestamp"].as<double>(), t.markers.back().t - 1e-6);
}

// Four processes of 50 MiB in a cgroup: the charge is named a charge, the bounds stay ordered.
TEST(Bounds, CgroupChargeIsNamedAsSuch) {
  // An AddressSanitizer qprof is larger at the fork than these jobs grow: the kernel's figure of
  // the command, which counts its pre-exec copy of qprof, is then left out by design.
  if (sanitized()) GTEST_SKIP() << "the kernel's single-process figure is undefined under an AddressSanitizer qprof";
  if (geteuid() != 0) GTEST_SKIP() << "--cgroup needs root";
  const std::string out = temp_dir() + "/cgroup.dat";
  const Result r = qprof({"run", "-v", "--cgroup", "-o", out, "--", workload("alloc_tree"), "50", "3", "50", "300"});
  ASSERT_EQ(r.status, 0) << r.err;
  if (r.err.find("--cgroup: cannot create") != std::string::npos ||
      r.err.find("no memory controller") != std::string::npos) {
    GTEST_SKIP() << "no cgroup with a memory controller here: " << r.err;
  }
  EXPECT_NE(r.err.find("cgroup charge"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("includes page cache"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("exact"), std::string::npos) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_FALSE(t.cgroup.empty());
  // The charge is read at every sample; memory.stat's parts with the stats.
  ASSERT_TRUE(std::any_of(t.cgroup.begin(), t.cgroup.end(), [](const auto& s) { return s.anon && s.file; }))
      << "memory.stat's parts are recorded";
  // The four processes' 200 MiB are anonymous memory charged to the cgroup.
  const auto largest = largest_cgroup_sample(t);
  EXPECT_GE(*largest->anon, 190 * kMiB);
  const PeakBracket b = peak_bracket(t);
  ASSERT_TRUE(b.lower && b.upper);
  EXPECT_LE(*b.lower, *b.upper);
  EXPECT_GE(*b.upper, 200 * kMiB);
  EXPECT_TRUE(bracket_violations(b, bracket_inputs(t)).empty());
  const Result rep = qprof({"report", out});
  EXPECT_NE(rep.out.find("cgroup charge (includes page cache)"), std::string::npos) << rep.out;
}

}  // namespace
}  // namespace qprof::test
