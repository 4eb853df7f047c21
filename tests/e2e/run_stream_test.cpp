// SPDX-License-Identifier: Apache-2.0
// The stderr tee, stdin/stdout inheritance, the streamed trace, the sampling schedule.
#include <gtest/gtest.h>

#include <fstream>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

using namespace std::chrono_literals;

TEST(RunStream, StderrPassesThroughByteForByte) {
  const std::string out = temp_dir() + "/blast.dat";
  const Result direct = run({workload("stderr_blast"), "4", "12345"});
  const Result profiled = qprof({"run", "-q", "-o", out, "--", workload("stderr_blast"), "4", "12345"});
  ASSERT_EQ(direct.status, 0);
  ASSERT_EQ(profiled.status, 0) << profiled.err.substr(0, 200);
  ASSERT_EQ(direct.err.size(), 4u * 1024 * 1024);
  EXPECT_EQ(profiled.err.size(), direct.err.size());
  EXPECT_TRUE(profiled.err == direct.err) << "the bytes differ";
  EXPECT_NO_THROW(trace::read_trace(out));
}

TEST(RunStream, StdinAndStdoutAreInherited) {
  const Result r = qprof({"run", "-q", "-o", temp_dir() + "/cat.dat", "--", "cat"}, "hello through qprof\n");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "hello through qprof\n");
  EXPECT_EQ(joined(r.err), "");
}

TEST(RunStream, TraceIsReadableWhileTheRunGoesOn) {
  const std::string out = temp_dir() + "/live.dat";
  Process p({qprof_bin(), "run", "-q", "-o", out, "--", workload("spike"), "1", "1", "4000"});
  // Read as soon as 20 samples are there (a sanitized qprof on a loaded machine starts late), well
  // before the job's 4 s are over.
  const auto start = std::chrono::steady_clock::now();
  std::size_t lines = 0;
  while (lines < 20 && std::chrono::steady_clock::now() - start < 3s) {
    std::this_thread::sleep_for(50ms);
    std::ifstream in(out);
    lines = 0;
    for (std::string l; std::getline(in, l);) lines += l.starts_with("MEM ") ? 1 : 0;
  }
  const Trace partial = trace::read_trace(out);  // no truncated line, samples already there
  EXPECT_GE(partial.mem.size(), 20u);
  EXPECT_FALSE(partial.exit);
  EXPECT_EQ(p.wait().status, 0);
  EXPECT_GT(trace::read_trace(out).mem.size(), partial.mem.size());
}

TEST(RunStream, KillingQprofLeavesAReadableTraceUpToTheLastFlush) {
  const std::string out = temp_dir() + "/sigkilled.dat";
  Process p({qprof_bin(), "run", "-q", "-o", out, "--", workload("spike"), "1", "1", "3000"});
  std::this_thread::sleep_for(1000ms);
  const auto killed_at = std::chrono::system_clock::now();
  ASSERT_EQ(kill(p.pid(), SIGKILL), 0);
  p.wait();
  std::vector<std::string> warnings;
  const Trace t = trace::read_trace(out, &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  // Flushed at least every 100 ms: the last sample on disk is recent (loosely, on a busy machine).
  const double killed_unix = std::chrono::duration<double>(killed_at.time_since_epoch()).count();
  EXPECT_GT(t.mem.back().t, killed_unix - 1.5);
  EXPECT_GE(t.mem.size(), 30u);
}

TEST(RunStream, FastIntervalHoldsItsSchedule) {
  const std::string out = temp_dir() + "/fast.dat";
  const Result r = qprof({"run", "-v", "-o", out, "--interval", "0.001", "--", "sleep", "1"});
  ASSERT_EQ(r.status, 0);
  const Trace t = trace::read_trace(out);
  const double span = t.mem.back().t - t.mem.front().t;
  const double mean = span / static_cast<double>(t.mem.size() - 1);
  // A fixed-deadline schedule does not drift: the mean period is the asked one unless the
  // machine stalls the sampler (then deadlines are skipped, never shifted). Loose on purpose.
  EXPECT_GE(mean, 0.00095);
  EXPECT_LT(mean, 0.003);
  EXPECT_GE(t.mem.size(), 300u);
  EXPECT_NE(joined(r.err).find("asked 1 ms"), std::string::npos) << r.err;
}

TEST(RunStream, MissedSpikeIsReported) {
  const std::string out = temp_dir() + "/spike.dat";
  // Larger than qprof itself (see run_accounting_test.cpp), so the kernel's figure counts.
  const double spike = sanitized() ? 400.0 : 200.0;
  const Result r = qprof({"run", "-o", out, "--interval", "0.1", "--", workload("spike"),
                          std::to_string(static_cast<int>(spike)), "5", "250"});
  ASSERT_EQ(r.status, 0);
  const Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.peaks.count("kernel_process")) << r.err;
  EXPECT_GE(mib(t.peaks.at("kernel_process")), spike);
  if (mib(max_mem(t)) < 0.95 * spike) {  // the sampler missed the top (it almost always does at 100 ms)
    EXPECT_NE(joined(r.err).find("a spike between samples was missed; try a smaller --interval"), std::string::npos)
        << r.err;
    EXPECT_FALSE(t.notes.empty());
  }
}

TEST(RunStream, DefaultTraceNameIsTimestampedInTheCurrentDirectory) {
  const std::string dir = temp_dir() + "/cwd";
  std::filesystem::create_directories(dir);
  const Result r = run({"sh", "-c", "cd '" + dir + "' && '" + qprof_bin() + "' run -q -- true"});
  ASSERT_EQ(r.status, 0) << r.err;
  int found = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    // qprof_YYYYMMDDhhmmss.mmm_PID.dat
    EXPECT_TRUE(std::regex_match(name, std::regex(R"(qprof_\d{14}\.\d{3}_\d+\.dat)"))) << name;
    ++found;
  }
  EXPECT_EQ(found, 1);
}

}  // namespace
}  // namespace qprof::test
