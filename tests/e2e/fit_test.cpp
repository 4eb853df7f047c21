// SPDX-License-Identifier: Apache-2.0
// qprof fit on a job whose needs are known by construction: A MiB of anonymous memory it keeps,
// and an F MiB file it reads through mmap k times, from a cold cache. Scaled down from the issue's
// A = 200, F = 300 to A = 100, F = 150 (k = 4) so that the search stays under 30 s on two shared
// cores; the bounds scale with A and F. Needs the right to create memory cgroups (root here).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "../support/own_cgroup.hpp"
#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr double A = 100, F = 150;
constexpr int kPasses = 4;
constexpr Bytes MiB = Bytes{1} << 20;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::vector<std::string> bounded(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"prlimit", as_limit("2147483648"), qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// F MiB written to `path`, its pages then clean in page cache, charged to this test's group.
void write_data(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char> block(MiB);
  for (int i = 0; i < static_cast<int>(F); ++i) {
    for (std::size_t j = 0; j < block.size(); j += 4096) block[j] = static_cast<char>(i + j / 4096 + 1);
    EXPECT_EQ(::write(fd, block.data(), block.size()), static_cast<ssize_t>(block.size()));
  }
  ::fdatasync(fd);
  ::close(fd);
}

// The F MiB file, written and then dropped from the page cache: every run reads it from storage
// (a tmpfs would make its pages unreclaimable shared memory: the test needs a disk).
std::string cold_file() {
  const std::string path = temp_dir() + "/data.bin";
  if (!fs::exists(path)) write_data(path);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return path;
}

// The F MiB file in page cache charged to this test's group, not to any of qprof's: the job maps
// it without being charged for it.
std::string warm_file() {
  const std::string path = temp_dir() + "/warm.bin";
  write_data(path);
  return path;
}

// Where qprof, a child of this test, creates its groups: this process's own memory group.
std::string parent_group() { return "/sys/fs/cgroup/memory" + own_v1_memory_group(); }

std::vector<std::string> groups_left(pid_t qprof) {
  std::vector<std::string> left;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent_group(), ec)) {
    if (e.path().filename() == "qprof-" + std::to_string(qprof)) left.push_back(e.path().string());
  }
  return left;
}

std::string skip_reason(const Result& r) {
  if (r.status == 2 && contains(joined(r.err), "may not create one here")) return r.err;
  return "";
}

std::string sentence(const std::string& err, const std::string& start) {
  for (const std::string& s : sentences(err)) {
    if (s.starts_with(start)) return s;
  }
  return "";
}

// Every line fits 80 columns (stderr is not a terminal here), and each finding's words agree
// with the run it rests on: "completed in" only where that run completed, "still running at"
// only where it was stopped at the cutoff; every noisy or non-monotone limit is said.
void expect_text_agrees_with_table(const std::string& err, const nlohmann::json& j) {
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);) EXPECT_LE(l.size(), 80u) << l;
  const std::map<std::string, std::string> titles{
      {"smallest_running", "qprof fit: smallest limit not OOM-killed: "},
      {"smallest_within_slowdown", "qprof fit: smallest limit it completes in within "},
      {"full_speed", "qprof fit: smallest limit at full speed "}};
  if (j["probes"].empty()) {
    EXPECT_TRUE(contains(err, "qprof fit: no limited run was made, so no limit was measured")) << err;
    return;
  }
  int disagreements = 0;
  for (const auto& [key, title] : titles) {
    const auto& f = j["findings"][key];
    const std::string said = sentence(err, title);
    ASSERT_FALSE(said.empty()) << key << ": " << err;
    disagreements += static_cast<int>(f["noisy"].size() + f["not_monotone"].size());
    if (f["probe"].is_null()) {
      EXPECT_TRUE(contains(said, "none measured below the unlimited run's peak charge")) << said;
      continue;
    }
    const auto& p = j["probes"][f["probe"].get<std::size_t>()];
    EXPECT_EQ(p["limit_bytes"], f["limit_bytes"]);
    if (p["outcome"] == "completed") {
      EXPECT_TRUE(contains(said, " (completed in ")) << said;
    } else {
      EXPECT_EQ(p["outcome"], "too_slow") << said;
      EXPECT_TRUE(contains(said, " (still running at ")) << said;
      EXPECT_FALSE(contains(said, "(completed")) << said;
    }
  }
  int said = 0;
  for (const std::string& s : sentences(err)) said += s.ends_with(": noisy") || contains(s, ": not monotone");
  EXPECT_EQ(said, disagreements) << err;
}

TEST(Fit, FindsTheSmallestLimitAndTheFullSpeedOne) {
  if (sanitized())
    GTEST_SKIP() << "the probes' timings are the subject: an AddressSanitizer qprof distorts none of "
                    "them, but the job runs under its shadow limits";
  const std::string json = temp_dir() + "/fit.json", csv = temp_dir() + "/fit.csv";
  Process p(bounded({"fit", "--json", json, "--csv", csv, "--", workload("anon_and_mmap"), "100", cold_file(),
                     std::to_string(kPasses)}));
  const pid_t pid = p.pid();
  const Result r = p.wait(90);
  if (const std::string why = skip_reason(r); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(json));
  const double runs_in = j["findings"]["smallest_running"]["limit_bytes"].get<double>() / MiB;
  const double full = j["findings"]["full_speed"]["limit_bytes"].get<double>() / MiB;
  EXPECT_GE(runs_in, A) << r.err;
  EXPECT_LE(runs_in, A + std::max(16.0, 0.05 * A)) << r.err;
  // Full speed needs the file's pages kept: below A + F every pass reads them again, which the
  // probes' bytes read say whatever the storage (truth by construction). Whether those reads
  // cost more than 10 % of the time depends on the storage: a virtual disk served from the
  // host's cache re-read 618 MiB in no measurable time here, and the job ran at full speed in
  // 175 MiB. So a full-speed limit below A + 0.9 F must be one whose run read the file again.
  const double baseline_read = j["baseline"]["read_bytes"].get<double>();
  for (const auto& probe : j["probes"]) {
    if (probe["limit_bytes"].is_null() || probe["read_bytes"].is_null() || probe["outcome"] != "completed") continue;
    if (probe["limit_bytes"].get<double>() / MiB >= A + F * 0.8) continue;
    EXPECT_GT(probe["read_bytes"].get<double>(), 1.5 * baseline_read) << "read again below A + F: " << r.err;
  }
  if (full < A + F * 0.9) {
    bool reread = false;
    for (const auto& probe : j["probes"]) {
      if (!probe["limit_bytes"].is_null() && probe["limit_bytes"].get<double>() / MiB == full &&
          !probe["read_bytes"].is_null()) {
        reread = probe["read_bytes"].get<double>() > 1.5 * baseline_read;
      }
    }
    EXPECT_TRUE(reread) << "full speed below A + 0.9 F only where storage re-reads cost nothing: " << r.err;
  }
  EXPECT_GE(full, j["findings"]["smallest_within_slowdown"]["limit_bytes"].get<double>() / MiB) << r.err;
  EXPECT_GE(j["findings"]["smallest_within_slowdown"]["limit_bytes"].get<double>() / MiB, runs_in);
  EXPECT_EQ(j["end"], "searched");
  EXPECT_TRUE(j["swap_limited"].get<bool>()) << "memsw exists here";
  // The unlimited run read the whole file from storage once: the cache was cold.
  EXPECT_GE(j["baseline"]["read_bytes"].get<double>() / MiB, F * 0.9) << r.err;
  EXPECT_TRUE(groups_left(pid).empty()) << "every probe's group is removed";
  // The same on stderr and in the CSV.
  expect_text_agrees_with_table(r.err, j);
  EXPECT_TRUE(contains(joined(r.err), "qprof fit: smallest limit at full speed (within 10 % of the fastest run, "))
      << r.err;
  // The file was open and mapped for a few hundred ms: seen (its size by construction).
  EXPECT_GE(j["input"]["size_bytes"].get<double>() / MiB, F) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "  input: ")) << r.err;
  EXPECT_LT(j["input"]["cached_outside_bytes"].get<double>(), 0.1 * F * MiB) << "the file was cold: " << r.err;
  const std::string table = read_file(csv);
  EXPECT_TRUE(table.starts_with("kind,name,limit_bytes,outcome,seconds,")) << table;
  EXPECT_TRUE(contains(table, "finding,smallest_running," +
                                  std::to_string(j["findings"]["smallest_running"]["limit_bytes"].get<Bytes>())))
      << table;
  // fit's own cost is measured by bench/fit_cost.py, not asserted here: a shared machine's load
  // moves it (1.1 % on a busy CI runner, 0.4 % on a quiet one). Here only that it is counted.
  EXPECT_GT(j["qprof_cpu_seconds"].get<double>(), 0.0);
  // Every group held the file's pages when evicted: the kernel's reclaim took some of qprof's time.
  EXPECT_GT(j["eviction_cpu_seconds"].get<double>(), 0.0);
  EXPECT_LE(j["eviction_cpu_seconds"].get<double>(), j["qprof_cpu_seconds"].get<double>());
  EXPECT_TRUE(contains(joined(r.err), "qprof fit: of it, evicting the probes' page cache: ")) << r.err;
  EXPECT_GE(j["runs_seconds"].get<double>(), j["baseline"]["seconds"].get<double>());
}

TEST(Fit, TheJobsOwnFailureStopsFitWithItsStatus) {
  const Result r = run(bounded({"fit", "--", workload("exit_with"), "3"}), "", 60);
  if (const std::string why = skip_reason(r); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "failed in the unlimited run (exit status 3)")) << r.err;
}

TEST(Fit, ACommandThatCannotStartIs127) {
  const Result r = run(bounded({"fit", "--", "/nonexistent/qprof-no-such-command"}), "", 60);
  if (const std::string why = skip_reason(r); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(r.status, 127) << r.err;
}

TEST(Fit, SigintMidSearchLeavesNoGroupAndPrintsWhatWasFound) {
  if (sanitized()) GTEST_SKIP() << "timed against the job's runs";
  Process p(bounded({"fit", "--json", temp_dir() + "/int.json", "--", workload("anon_and_mmap"), "100", cold_file(),
                     std::to_string(kPasses)}));
  const std::string group = parent_group() + "/qprof-" + std::to_string(p.pid());
  // Every run's group has this name; a limited probe's has a limit (the unlimited run's is the
  // kernel's "none", 2^63 rounded to pages).
  bool limited = false;
  for (int i = 0; i < 6000 && !limited; ++i) {
    std::ifstream in(group + "/memory.limit_in_bytes");
    unsigned long long limit = 0;
    limited = static_cast<bool>(in >> limit) && limit < (1ULL << 62);
    if (!limited) std::this_thread::sleep_for(5ms);
  }
  if (!limited) {
    const Result r = p.wait(60);
    if (const std::string why = skip_reason(r); !why.empty()) GTEST_SKIP() << why;
    FAIL() << "no limited probe started: " << r.err;
  }
  std::this_thread::sleep_for(100ms);
  ::kill(p.pid(), SIGINT);
  const Result r = p.wait(60);
  EXPECT_EQ(r.status, 128 + SIGINT) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "stopped by SIGINT")) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "unlimited: ")) << r.err;
  EXPECT_FALSE(fs::exists(group)) << "the probe's group is removed";
  const auto j = nlohmann::json::parse(read_file(temp_dir() + "/int.json"));
  EXPECT_EQ(j["end"], "interrupted");
  // The interrupted run says nothing of its limit: with no other limited run there is no finding.
  if (j["probes"].empty()) {
    EXPECT_TRUE(contains(joined(r.err),
                         "qprof fit: no limited run was made, so no limit was measured: the search "
                         "stopped before the first"))
        << r.err;
  } else {
    EXPECT_TRUE(contains(joined(r.err), "qprof fit: smallest limit at full speed")) << r.err;
  }
}

TEST(Fit, TheCommandNeverBreaksTheJson) {
  const std::string json = temp_dir() + "/hostile.json";
  const Result r = run(bounded({"fit", "--json", json, "--", "sh", "-c", "exit 0", "\"}\x1b[2J\xff"}), "", 60);
  if (const std::string why = skip_reason(r); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(json));
  EXPECT_TRUE(contains(j["command"].get<std::string>(), "sh -c")) << j.dump();
  EXPECT_FALSE(contains(joined(r.err), "\x1b[2J")) << "nothing of the command drives the terminal";
}

// A result on stdout is stdout's alone: what the probes print goes to stderr meanwhile, so that
// `qprof fit --json - -- CMD | jq` reads JSON whatever CMD writes.
TEST(Fit, AResultOnStdoutIsStdoutsAlone) {
  const Result r = run(bounded({"fit", "--json", "-", "--", "sh", "-c", "echo from-the-command"}), "", 60);
  if (const std::string why = skip_reason(r); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // throws (fails) if anything else is on stdout
  EXPECT_TRUE(j.contains("command")) << r.out;
  EXPECT_TRUE(contains(r.err, "from-the-command")) << r.err;
}

// The job reads its input from cache within a few milliseconds: a shell holds the file open around
// it, as a wrapper would, so that the samples (every 10 ms) see it whatever the machine's load.
std::string holding() { return "exec 3<\"$1\"; " + workload("anon_and_mmap") + " 100 \"$1\" 4 && sleep 0.2"; }

TEST(Fit, InputCachedByAnotherGroupIsMeasuredAndSaid) {
  if (sanitized()) GTEST_SKIP() << "the probes' timings are the subject";
  const std::string json = temp_dir() + "/warm.json";
  const Result r = run(bounded({"fit", "--json", json, "--", "sh", "-c", holding(), "sh", warm_file()}), "", 90);
  if (const std::string why = skip_reason(r); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(json));
  // By construction the whole file was in this test's cache: measured after the group was evicted.
  EXPECT_GE(j["input"]["cached_outside_bytes"].get<double>() / MiB, 0.9 * F) << r.err;
  EXPECT_LT(j["baseline"]["charge_peak_bytes"].get<double>() / MiB, A + 0.5 * F) << "not charged to the job: " << r.err;
  EXPECT_TRUE(contains(sentence(r.err, "qprof fit: note: "),
                       "of the job's input was in page cache charged to another "
                       "cgroup"))
      << r.err;
  expect_text_agrees_with_table(r.err, j);
}

TEST(Fit, ColdEvictsTheInputBeforeEachRun) {
  if (sanitized()) GTEST_SKIP() << "the probes' timings are the subject";
  const std::string json = temp_dir() + "/cold.json";
  const Result r =
      run(bounded({"fit", "--cold", "--runs-max", "6", "--json", json, "--", "sh", "-c", holding(), "sh", warm_file()}),
          "", 90);
  if (const std::string why = skip_reason(r); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(json));
  EXPECT_TRUE(j["input"]["cold"].get<bool>());
  EXPECT_TRUE(j["input"]["baseline_again"].get<bool>()) << r.err;
  // Evicted, the file is the job's own: read from storage, charged to its group, and searched.
  EXPECT_LT(j["input"]["left_after_eviction_bytes"].get<double>() / MiB, 0.1 * F) << r.err;
  EXPECT_GE(j["baseline"]["read_bytes"].get<double>() / MiB, 0.9 * F) << r.err;
  EXPECT_GE(j["baseline"]["charge_peak_bytes"].get<double>() / MiB, A + 0.9 * F) << r.err;
  EXPECT_FALSE(j["probes"].empty()) << r.err;
  EXPECT_FALSE(contains(joined(r.err), "note: ")) << r.err;
  expect_text_agrees_with_table(r.err, j);
}

// A job of anonymous memory alone (60 MiB, no file): --cold has nothing to evict and says so, the
// footprint is its unreclaimable peak, so no limited run is made, and nothing claims one was.
TEST(Fit, ColdWithoutAFileAndNoLimitedRunSayWhatWasNotDone) {
  const std::string json = temp_dir() + "/anon.json", csv = temp_dir() + "/anon.csv";
  const Result r =
      run(bounded({"fit", "--cold", "--json", json, "--csv", csv, "--", workload("spike"), "60", "300", "50"}), "", 90);
  if (const std::string why = skip_reason(r); !why.empty()) GTEST_SKIP() << why;
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(json));
  ASSERT_TRUE(j["input"].is_object()) << j.dump();
  EXPECT_EQ(j["input"]["files"], 0) << j.dump();
  EXPECT_TRUE(contains(joined(r.err), "--cold evicted nothing")) << r.err;
  expect_text_agrees_with_table(r.err, j);
  if (!j["probes"].empty()) GTEST_SKIP() << "a limited run was made (the charge outgrew the resolution): " << r.err;
  for (const char* key : {"smallest_running", "smallest_within_slowdown", "full_speed"}) {
    EXPECT_TRUE(j["findings"][key]["short_of_bytes"].is_null()) << key << ": nothing ran below it";
  }
  EXPECT_TRUE(contains(joined(r.err), "qprof fit: request: --mem=")) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "(no limit measured: the unlimited run's peak charge")) << r.err;
  EXPECT_FALSE(contains(joined(r.err), "smallest limit")) << r.err;
  EXPECT_TRUE(contains(read_file(csv), "no limited run: not measured")) << read_file(csv);
}

// As another user (uid 1), qprof may not create a group below root's: one sentence of what is
// needed, status 2, and the command never runs.
TEST(Fit, WithoutTheRightToCreateCgroupsSaysWhatIsNeeded) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run qprof as another user";
  if (run({"setpriv", "--version"}).status != 0) GTEST_SKIP() << "no setpriv";
  const std::string marker = temp_dir() + "/shared/ran";
  const Result r = run({"setpriv", "--reuid=1", "--regid=1", "--clear-groups", "prlimit", as_limit("1073741824"),
                        copy_for_other_users(qprof_bin()), "fit", "--", "/bin/sh", "-c", "touch " + marker},
                       "", 60);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "may not create one here")) << r.err;
  EXPECT_TRUE(
      contains(joined(r.err), "run it as root, inside a delegated cgroup v2 subtree, or inside a Slurm job's cgroup"))
      << r.err;
  EXPECT_FALSE(fs::exists(marker)) << "nothing ran";
}

TEST(Fit, UsageErrorsComeBeforeAnyRun) {
  EXPECT_EQ(qprof({"fit", "--resolution", "lots", "--", "true"}).status, 2);
  EXPECT_EQ(qprof({"fit", "--resolution", "150%", "--", "true"}).status, 2);
  // One SIZE and one PCT at most: no part silently wins over another; the range is named.
  for (const char* twice : {"16MiB,5%,1", "16MiB,16MiB", "5%,6%", "5%,", ",5%"}) {
    const Result r = qprof({"fit", "--resolution", twice, "--", "true"});
    EXPECT_EQ(r.status, 2) << twice;
    EXPECT_TRUE(contains(joined(r.err), "qprof fit: --resolution: ")) << r.err;
  }
  EXPECT_TRUE(contains(joined(qprof({"fit", "--resolution", "5%,6%", "--", "true"}).err),
                       "more than one PCT in 5%,6%: give one SIZE, one PCT (5%), or one of each (16MiB,5%)"));
  for (const char* pct : {"100%", "200%", "0%"}) {
    EXPECT_TRUE(contains(joined(qprof({"fit", "--resolution", pct, "--", "true"}).err),
                         "PCT must be above 0% and below 100%, got " + std::string(pct)))
        << pct;
  }
  EXPECT_TRUE(
      contains(joined(qprof({"fit", "--resolution", "0", "--", "true"}).err), "SIZE must be more than 0, got 0"));
  // Valid forms pass the check and reach the next one (an output that cannot be written).
  for (const char* ok : {"16MiB,5%", "5%,16MiB", "99%", "16"}) {
    EXPECT_TRUE(contains(
        joined(qprof({"fit", "--resolution", ok, "--json", "/nonexistent-dir/x.json", "--", "true"}).err), "--json: "))
        << ok;
  }
  EXPECT_EQ(qprof({"fit", "--plot", temp_dir() + "/chart.txt", "--", "true"}).status, 2);
  EXPECT_EQ(qprof({"fit", "--json", "/nonexistent-dir/x.json", "--", "true"}).status, 2);
  EXPECT_EQ(qprof({"fit", "--runs-max", "1", "--", "true"}).status, 2);
  const Result both = qprof({"fit", "--json", "-", "--csv", "-", "--", "true"});
  EXPECT_EQ(both.status, 2);
  EXPECT_TRUE(contains(joined(both.err), "--json - and --csv - would both write to stdout")) << both.err;
  const Result none = qprof({"fit"});
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(contains(joined(none.err), "no command given")) << none.err;
}

}  // namespace
}  // namespace qprof::test
