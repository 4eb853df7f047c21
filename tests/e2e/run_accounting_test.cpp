// SPDX-License-Identifier: Apache-2.0
// Numbers that survive the traps: copy-on-write (PSS), missed spikes (kernel, cgroup), I/O and
// CPU of processes that are gone by the end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::IoSample;
using trace::PssSample;
using trace::Trace;

namespace {

bool can_make_cgroups() { return geteuid() == 0 && std::filesystem::exists("/sys/fs/cgroup/memory/cgroup.procs"); }

// A directory on a real file system (not tmpfs), so that storage writes are counted.
std::string disk_dir() {
  const std::string dir = std::string(QPROF_TEST_SCRATCH) + "/accounting";
  std::filesystem::create_directories(dir);
  return dir;
}

Bytes max_pss(const Trace& t) {
  Bytes m = 0;
  for (const PssSample& p : t.pss) m = std::max(m, p.pss);
  return m;
}

TEST(RunAccounting, CopyOnWriteTreeSumsRssFourTimesButPssOnce) {
  // The tree holds its memory 2.5 s: on a loaded machine a PSS pass is slow and its schedule
  // stretches (passes stay under 5 % of the time), and a shorter hold could fall between two.
  const std::string base = temp_dir() + "/cow_base.dat", full = temp_dir() + "/cow.dat";
  ASSERT_EQ(qprof({"run", "-q", "--metric", "all", "-o", base, "--", workload("cow_tree"), "0", "3", "2500"}).status,
            0);
  ASSERT_EQ(qprof({"run", "-q", "--metric", "all", "-o", full, "--", workload("cow_tree"), "200", "3", "2500"}).status,
            0);
  const Trace b = trace::read_trace(base), t = trace::read_trace(full);
  const double rss = mib(max_mem(t)) - mib(max_mem(b));
  const double pss = mib(max_pss(t)) - mib(max_pss(b));
  EXPECT_NEAR(rss, 800.0, 80.0) << "Σ RSS counts the shared 200 MiB once per process";
  EXPECT_NEAR(pss, 200.0, 20.0) << "Σ PSS counts it once";
  EXPECT_EQ(t.meta.metric, "all");
  ASSERT_FALSE(t.pss.empty());
  Bytes uss = 0;
  for (const PssSample& p : t.pss) uss = std::max(uss, p.uss);
  EXPECT_LT(mib(uss), 210.0 + mib(max_pss(b)));  // the shared pages are nobody's own once forked
}

TEST(RunAccounting, PssIsReadOnItsOwnSlowerSchedule) {
  const std::string out = temp_dir() + "/pss_schedule.dat";
  const Result r = qprof({"run", "-v", "--metric", "pss", "--interval", "0.005", "--pss-interval", "0.2", "-o", out,
                          "--", workload("spike"), "1", "1", "1000"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  // About 400 RSS samples. The job holds still but for a 1 ms spike: its scheduled passes every
  // 0.2 s are skipped while the sampler sees no change, down to one a second, plus those at its
  // new highs; never one per sample.
  EXPECT_GT(t.mem.size(), 5 * t.pss.size());
  EXPECT_GE(t.pss.size(), 2u);
  EXPECT_LE(t.pss.size(), 13u);
  EXPECT_NE(r.err.find("qprof:   Σ PSS"), std::string::npos) << r.err;
}

// The spike is larger than qprof itself (about 220 MB under AddressSanitizer), whose size the
// kernel counts for the command's pre-exec copy and which qprof therefore does not take for a peak.
double spike_mib() { return sanitized() ? 400.0 : 200.0; }

TEST(RunAccounting, ShortSpikeIsCaughtByTheKernelAndCgroupFigures) {
  const std::string out = temp_dir() + "/spike_cgroup.dat";
  const Result r = qprof({"run", "--cgroup", "--interval", "0.1", "-o", out, "--", workload("spike"),
                          std::to_string(static_cast<int>(spike_mib())), "5", "300"});
  ASSERT_EQ(r.status, 0) << r.err;
  const double spike = spike_mib();
  const Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.peaks.count("kernel_process")) << r.err;
  EXPECT_GE(mib(t.peaks.at("kernel_process")), spike);
  ASSERT_TRUE(t.peaks.count("hwm_sum"));
  EXPECT_GE(mib(t.peaks.at("hwm_sum")), spike);
  if (can_make_cgroups()) {
    ASSERT_TRUE(t.peaks.count("cgroup")) << r.err;
    EXPECT_GE(mib(t.peaks.at("cgroup")), spike);
    EXPECT_NE(r.err.find("cgroup charge"), std::string::npos);
    EXPECT_FALSE(t.cgroup.empty());
  }
  // Touching 200 MiB takes a while, so a sample may land on the way up, never at the top.
  if (mib(max_mem(t)) < 0.95 * spike) {
    EXPECT_NE(r.err.find("a spike between samples was missed"), std::string::npos) << r.err;
  }
}

class RunAccountingWrites : public ::testing::TestWithParam<const char*> {};

TEST_P(RunAccountingWrites, StorageWritesOfAChildThatExitedEarlyStillCount) {
  const std::string out = temp_dir() + "/writes_" + GetParam() + ".dat";
  const std::string file = disk_dir() + "/written_" + GetParam() + ".bin";
  const Result r = qprof({"run", "-v", "-o", out, "--", workload("writer"), "40", file, GetParam()});
  ASSERT_EQ(r.status, 0) << r.err;
  std::filesystem::remove(file);
  const Trace t = trace::read_trace(out);
  ASSERT_FALSE(t.io.empty());
  const IoSample& last = t.io.back();
  EXPECT_NEAR(mib(last.write_bytes), 40.0, 2.0);
  EXPECT_GE(mib(last.wchar), 40.0);
  // Cumulative: never decreasing.
  for (std::size_t i = 1; i < t.io.size(); ++i) {
    EXPECT_GE(t.io[i].write_bytes, t.io[i - 1].write_bytes);
    EXPECT_GE(t.io[i].wchar, t.io[i - 1].wchar);
  }
  EXPECT_NE(r.err.find("written 40.0 MiB"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(ReapedBy, RunAccountingWrites, ::testing::Values("direct", "orphan"));

TEST(RunAccounting, UpperBoundIsAtLeastTheSampledPeakAndCheckpointsCarryIoAndCpu) {
  const std::string out = temp_dir() + "/bounds.dat";
  const Result r = qprof({"run", "-o", out, "--", workload("alloc_tree"), "30", "2", "30", "300"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.peaks.count("hwm_sum"));
  EXPECT_GE(t.peaks.at("hwm_sum") + 1, max_mem(t));  // MEM's MiB with six decimals: ±1 byte
  // The kernel's figure is left out when the command never grew past qprof's own size at the
  // fork (the kernel counts the pre-exec copy): a sanitizer build of qprof is that large.
  if (t.peaks.count("kernel_process")) {
    EXPECT_LE(t.peaks.at("kernel_process"), max_mem(t) + (Bytes{4} << 20));
  }
  ASSERT_FALSE(t.markers.empty());
  EXPECT_TRUE(t.markers[0].at.cpu_seconds.has_value());
  EXPECT_TRUE(t.markers[0].at.write_bytes.has_value());
}

}  // namespace
}  // namespace qprof::test
