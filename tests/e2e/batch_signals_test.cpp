// SPDX-License-Identifier: Apache-2.0
// compare --run and sweep under the signals a terminal or a job manager sends: INT, TERM, HUP and
// QUIT during a run or between two runs stop the batch cleanly, the table of the runs done on
// stdout, their traces on disk, and qprof exits with the interruption's status (128+N).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// Until `path` exists (qprof creates a run's trace before the run starts), at most 60 s.
bool wait_for(const std::string& path) {
  for (int i = 0; i < 12000 && !fs::exists(path); ++i) std::this_thread::sleep_for(5ms);
  return fs::exists(path);
}

std::size_t dat_files(const std::string& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) n += e.path().extension() == ".dat" ? 1 : 0;
  return n;
}

// The signal reaches the second command while it sleeps: that run is cut short and left out, the
// first one's row is printed, and the status says which signal ended it.
TEST(BatchSignals, CompareStoppedDuringARunPrintsTheRunsDone) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    const std::string prefix = temp_dir() + "/cmpsig" + std::to_string(sig);
    Process p({qprof_bin(), "compare", "--format", "json", "--cgroup", "off", "--no-pss", "-o", prefix, "--run", "true",
               "--run", "sleep 30", "--run", "true"});
    ASSERT_TRUE(wait_for(prefix + "-2.dat"));
    std::this_thread::sleep_for(300ms);  // the second command has started
    const auto sent = std::chrono::steady_clock::now();
    ::kill(p.pid(), sig);
    const Result r = p.wait(60);
    EXPECT_LT(std::chrono::steady_clock::now() - sent, 20s) << "the sleep was cut short";
    EXPECT_EQ(r.status, 128 + sig) << r.err;
    EXPECT_TRUE(contains(r.err, "interrupted by SIG")) << r.err;
    EXPECT_TRUE(contains(r.err, "-2.dat is kept, left out of the table")) << r.err;
    const auto j = nlohmann::json::parse(r.out);  // the table was printed
    ASSERT_EQ(j["comparison"].size(), 1u) << r.out;
    EXPECT_EQ(j["comparison"][0]["label"], "true");
    EXPECT_TRUE(fs::exists(prefix + "-1.dat"));
    EXPECT_TRUE(fs::exists(prefix + "-2.dat"));
    EXPECT_FALSE(fs::exists(prefix + "-3.dat")) << "no run after the interruption";
  }
}

// Short runs, one after the other: the signal lands during a run or between two (where qprof
// used to die of SIGHUP's default action, or, where the command outlived it, go on). Either
// way the batch stops with its table.
TEST(BatchSignals, CompareStoppedAtAnyMomentStopsWithItsTable) {
  const std::string dir = temp_dir() + "/cmpany";
  fs::create_directories(dir);
  Process p({qprof_bin(), "compare", "--format", "json", "--cgroup", "off", "--no-pss", "-o", dir + "/t", "--repeat",
             "500", "--run", "true"});
  ASSERT_TRUE(wait_for(dir + "/t-1-3.dat"));
  ::kill(p.pid(), SIGHUP);
  const Result r = p.wait(120);
  EXPECT_EQ(r.status, 128 + SIGHUP) << r.err;
  EXPECT_TRUE(contains(r.err, "interrupted by SIGHUP")) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["comparison"].size(), 1u) << r.out;
  const int runs = j["comparison"][0]["runs"].get<int>();
  EXPECT_GE(runs, 2);
  EXPECT_LT(runs, 500) << "no run after the interruption";
  EXPECT_LE(static_cast<std::size_t>(runs), dat_files(dir)) << "each run's trace is on disk";
}

TEST(BatchSignals, SweepStoppedAtAnyMomentWritesWhatItMeasured) {
  for (int sig : {SIGHUP, SIGTERM}) {
    const std::string dir = temp_dir() + "/sweepsig" + std::to_string(sig);
    std::string values = "1";
    for (int v = 2; v <= 300; ++v) values += "," + std::to_string(v);
    Process p({qprof_bin(), "sweep", "-d", dir, "-p", "n=" + values, "--format", "json", "--cgroup", "off", "--no-pss",
               "--", "sh", "-c", "exit 0", "sh", "{n}"});
    ASSERT_TRUE(wait_for(dir + "/n=3.dat"));
    ::kill(p.pid(), sig);
    const Result r = p.wait(120);
    EXPECT_EQ(r.status, 128 + sig) << r.err;
    EXPECT_TRUE(contains(r.err, "interrupted")) << r.err;
    const auto j = nlohmann::json::parse(r.out);  // the runs' table was printed
    const std::size_t runs = j["sweep_runs"].size();
    EXPECT_GE(runs, 2u) << r.out;
    EXPECT_LT(runs, 300u) << "no run after the interruption";
    EXPECT_FALSE(fs::exists(dir + "/n=300.dat"));
    EXPECT_EQ(dat_files(dir), runs) << "a trace per run in the table";
  }
}

}  // namespace
}  // namespace qprof::test
