// SPDX-License-Identifier: Apache-2.0
// qprof fit under the signals a terminal or a job manager sends: HUP and QUIT end it as INT and
// TERM do (the probe stopped, its group removed, what was measured written), and the time it was
// stopped (Ctrl-Z) is no part of a probe's duration. Needs the right to create memory cgroups.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "../support/own_cgroup.hpp"
#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::vector<std::string> bounded(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"prlimit", as_limit("2147483648"), qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string group_of(pid_t qprof) {
  return "/sys/fs/cgroup/memory" + own_v1_memory_group() + "/qprof-" + std::to_string(qprof);
}

bool no_cgroups(const Result& r) { return r.status == 2 && contains(joined(r.err), "may not create one here"); }

// The unlimited run is under way once its group holds a process. `spin`: look without pausing, so
// that the caller acts in the moment the probe joins its group, before it has even exec'd.
bool wait_for_probe(pid_t qprof, bool spin = false) {
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream procs(group_of(qprof) + "/cgroup.procs");
    pid_t pid = 0;
    if (procs >> pid) return true;
    if (!spin) std::this_thread::sleep_for(5ms);
  }
  return false;
}

TEST(FitSignals, HupAndQuitEndTheSearchAsIntDoes) {
  for (int sig : {SIGHUP, SIGQUIT}) {
    const std::string json = temp_dir() + "/sig" + std::to_string(sig) + ".json";
    Process p(bounded({"fit", "--json", json, "--", "sleep", "5"}));
    if (!wait_for_probe(p.pid())) {
      const Result r = p.wait(60);
      if (no_cgroups(r)) GTEST_SKIP() << r.err;
      FAIL() << "no probe started: " << r.err;
    }
    ::kill(p.pid(), sig);
    const Result r = p.wait(60);
    EXPECT_EQ(r.status, 128 + sig) << r.err;
    EXPECT_TRUE(contains(joined(r.err), "stopped by SIG")) << r.err;
    EXPECT_FALSE(fs::exists(group_of(p.pid()))) << "the probe's group is removed";
    const auto j = nlohmann::json::parse(read_file(json));
    EXPECT_EQ(j["end"], "interrupted") << sig;
  }
}

// Ctrl-Z for `stop_s`, sent to qprof alone once its first probe is in its group; the unlimited
// run's seconds as the JSON has them.
struct StoppedFit {
  bool skipped = false;
  std::string why;
  bool stopped = false;
  Result result;
  double baseline = 0;
};

StoppedFit fit_stopped_at_start(bool spin) {
  StoppedFit out;
  const std::string json = temp_dir() + "/stopped" + std::to_string(spin) + ".json";
  // Ten short sleeps in a row: a stopped shell starts no next one, so the job's progress halts
  // with it (a single `sleep 1` would go on sleeping while stopped, as nanosleep does).
  Process p(bounded({"fit", "--runs-max", "2", "--json", json, "--", "sh", "-c",
                     "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.1; done"}));
  if (!wait_for_probe(p.pid(), spin)) {
    out.result = p.wait(60);
    out.skipped = no_cgroups(out.result);
    out.why = out.skipped ? out.result.err : "no probe started: " + out.result.err;
    return out;
  }
  ::kill(p.pid(), SIGTSTP);  // qprof alone: it passes the stop on to the probe
  std::this_thread::sleep_for(200ms);
  const std::string state = read_file("/proc/" + std::to_string(p.pid()) + "/stat");
  out.stopped = state.find(") T ") != std::string::npos;
  std::this_thread::sleep_for(2500ms);
  ::kill(p.pid(), SIGCONT);
  out.result = p.wait(60);
  if (fs::exists(json)) out.baseline = nlohmann::json::parse(read_file(json))["baseline"]["seconds"].get<double>();
  return out;
}

void expect_the_stop_left_out(const StoppedFit& f) {
  ASSERT_TRUE(f.result.status == 0 || f.result.status == 1) << f.result.err;
  EXPECT_GE(f.baseline, 0.9) << "the probe ran on while qprof was stopped: " << f.result.err;
  EXPECT_LT(f.baseline, 2.0) << "the 2.7 s stopped were counted: " << f.result.err;
}

TEST(FitSignals, TimeStoppedIsNoPartOfAProbesDuration) {
  const StoppedFit f = fit_stopped_at_start(false);
  if (f.skipped) GTEST_SKIP() << f.why;
  ASSERT_TRUE(f.why.empty()) << f.why;
  if (!f.stopped) GTEST_SKIP() << "SIGTSTP did not stop qprof here (an orphaned process group)";
  expect_the_stop_left_out(f);
}

// The stop comes while the probe is joining its group, before qprof has its pid: it waits until
// qprof can pass it on, or the probe would run through the stop while its time was left out.
TEST(FitSignals, AStopAsTheProbeStartsStopsTheProbeToo) {
  for (int round = 0; round < 3; ++round) {
    const StoppedFit f = fit_stopped_at_start(true);
    if (f.skipped) GTEST_SKIP() << f.why;
    ASSERT_TRUE(f.why.empty()) << f.why;
    if (!f.stopped) GTEST_SKIP() << "SIGTSTP did not stop qprof here (an orphaned process group)";
    expect_the_stop_left_out(f);
  }
}

// The unlimited run has no limit of qprof's: a SIGKILL there names its two possible senders, the
// OOM killer of a limit around qprof and a kill -9 (as here), not SIGKILL alone nor one as certain.
TEST(FitSignals, ABaselineKilledBySigkillNamesTheEnclosingOomKiller) {
  const Result r = run(bounded({"fit", "--", workload("exit_with"), "-9"}), "", 60);
  if (no_cgroups(r)) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "the OOM killer of a limit around qprof")) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "or a kill -9 from elsewhere")) << r.err;
}

}  // namespace
}  // namespace qprof::test
