// SPDX-License-Identifier: Apache-2.0
// Where the trace goes, and what happens when it cannot be written: devices refused, streams
// never read back, failed writes said at once with an exit status of their own, default names
// that two runs never share, a file another live qprof writes refused. Every qprof here runs
// inside an address-space limit and a timeout, so that a regression fails the test, not the
// machine.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// qprof under `prlimit --as` (1 GiB: qprof needs a few tens of MB) and a hard timeout.
std::vector<std::string> bounded(const std::vector<std::string>& args, int timeout_s = 60) {
  std::vector<std::string> argv{"timeout",  "-s", "KILL", std::to_string(timeout_s), "prlimit", as_limit("1073741824"),
                                qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

void wait_for(const std::string& path, const std::string& what) {
  for (int i = 0; i < 1000 && !contains(read_file(path), what); ++i) std::this_thread::sleep_for(10ms);
}

TEST(RunOutput, ADeviceIsRefusedBeforeTheCommandStarts) {
  const std::string marker = temp_dir() + "/device_ran";
  const Result r = run(bounded({"run", "-o", "/dev/full", "--", "touch", marker}));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "/dev/full is a device")) << r.err;
  EXPECT_FALSE(fs::exists(marker)) << "the command must not run";
}

// A trace that stops being writable: RLIMIT_FSIZE makes every write past 1500 bytes fail (EFBIG)
// as a full disk would, on any machine.
TEST(RunOutput, AFailedWriteIsSaidAtOnceAndTheJobGoesOn) {
  const std::string out = temp_dir() + "/fsize.dat";
  // The job outlives the failure by far; its own line comes after qprof's.
  const std::string job = "sleep 2; echo job-finished >&2; exit 0";
  const Result r = run({"timeout", "-s", "KILL", "60", "prlimit", as_limit("1073741824"), "--fsize=1500", qprof_bin(),
                        "run", "-v", "-o", out, "--", "sh", "-c", job});
  EXPECT_EQ(r.status, 4) << r.err;
  const auto said = joined(r.err).find("the trace is incomplete from here on");
  ASSERT_NE(said, std::string::npos) << r.err;
  EXPECT_LT(said, joined(r.err).find("job-finished")) << "said while the job runs, not at the end:\n" << r.err;
  EXPECT_TRUE(contains(joined(r.err), "File too large")) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "exit status 4")) << r.err;
  EXPECT_LE(fs::file_size(out), 1500u);
  // The summary still has the figures sampled into memory.
  EXPECT_TRUE(contains(joined(r.err), "qprof:   Σ RSS")) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "INCOMPLETE")) << r.err;
}

TEST(RunOutput, TheCommandsFailureWinsAndBudgetsUseTheSamplesInMemory) {
  const std::string out = temp_dir() + "/fsize2.dat";
  const auto with = [&](std::vector<std::string> args) {
    std::vector<std::string> argv{"timeout",      "-s",        "KILL", "60", "prlimit", as_limit("1073741824"),
                                  "--fsize=1500", qprof_bin(), "run",  "-o", out};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  };
  EXPECT_EQ(with({"--", "sh", "-c", "sleep 1.5; exit 7"}).status, 7);
  // The spike workload holds 60 MiB for 1.5 s after the trace broke: the budget sees it.
  const Result over = with({"--max-peak", "30MiB", "--", workload("spike"), "60", "1500", "1500"});
  EXPECT_EQ(over.status, 3) << over.err;
  EXPECT_TRUE(contains(joined(over.err), "memory budget exceeded: peak footprint")) << over.err;
  const Result within = with({"--max-peak", "1GiB", "--", workload("spike"), "60", "1500", "1500"});
  EXPECT_EQ(within.status, 4) << within.err;
  EXPECT_TRUE(contains(joined(within.err), "is within the budget of 1.00 GiB")) << within.err;
}

// The end of a run reads the trace through the descriptor it wrote: moved away and replaced by
// another file during the run, the stage table, --yaml and --yaml-stream still describe the
// recorded one, and the file put at the path is left as it is.
TEST(RunOutput, TheEndOfARunReadsTheTraceItWroteNotWhatIsAtItsPathNow) {
  const std::string dir = temp_dir() + "/moved";
  fs::create_directories(dir);
  const std::string out = dir + "/t.dat", away = dir + "/away.dat";
  const std::string impostor =
      "QPROF 1 version=0.1.0 interval=0.010000 host=h root_pid=1 start=100.000000 metric=rss\n"
      "MEM 999.000000 100.0000\nMARK 100.100000 Impostor Start\nMEM 999.000000 100.2000\n"
      "MARK 100.300000 Impostor End\n";
  const std::string job = "echo 'QPROF_MARK: Work Start' >&2; sleep 0.3; mv '" + out + "' '" + away + "'; printf '" +
                          std::regex_replace(impostor, std::regex("\n"), "\\n") + "' > '" + out +
                          "'; echo 'QPROF_MARK: Work End' >&2; sleep 0.3";
  for (const bool stream : {false, true}) {
    const std::string yaml = dir + (stream ? "/stream.yaml" : "/t.yaml");
    std::vector<std::string> argv = bounded({"run", "-o", out, "--yaml", yaml});
    if (stream) argv.push_back("--yaml-stream");
    argv.insert(argv.end(), {"--", "sh", "-c", job});
    const Result r = run(argv);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(out), impostor);  // never written, never described
    // The stage table and the YAML's steps are those of the recorded trace (the command line
    // names the impostor's text, so only these are looked at).
    EXPECT_TRUE(contains(joined(r.err), "qprof: Work ")) << r.err;
    EXPECT_FALSE(contains(joined(r.err), "qprof: Impostor ")) << r.err;
    const std::string y = read_file(yaml);
    EXPECT_TRUE(contains(y, "step: \"Work Start\"")) << y;
    EXPECT_FALSE(contains(y, "step: \"Impostor")) << y;
    EXPECT_FALSE(contains(y, "cpu_memory_mb: 999")) << y;
    EXPECT_GT(trace::read_trace(away).markers.size(), 1u);
    fs::remove(out);
  }
}

TEST(RunOutput, AnIncompleteTraceIsNeverReadBack) {
  const std::string dir = temp_dir() + "/never_read";
  fs::create_directories(dir);
  const std::string out = dir + "/t.dat", yaml = dir + "/t.yaml";
  const std::vector<std::string> fsize{"timeout",      "-s",       "KILL", "60", "prlimit", as_limit("1073741824"),
                                       "--fsize=1500", qprof_bin()};
  // Checkpoints after the failure: the --yaml-stream rewriter must not read the broken trace.
  const std::string job = "sleep 1.5; echo 'QPROF_MARK: After Start' >&2; sleep 0.3; echo 'QPROF_MARK: After End' >&2";
  std::vector<std::string> argv = fsize;
  argv.insert(argv.end(), {"run", "-o", out, "--yaml", yaml, "--yaml-stream", "--", "sh", "-c", job});
  const Result r = run(argv);
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "--yaml: not written: the trace is incomplete")) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "no stage table: the trace is incomplete")) << r.err;
  // Every checkpoint came after the failure: a rewrite would have read the broken trace back.
  EXPECT_FALSE(fs::exists(yaml)) << read_file(yaml);
  // qprof peak -- CMD answers from the peaks it held in memory, and says the trace is incomplete.
  argv = fsize;
  argv.insert(argv.end(), {"peak", "-o", dir + "/p.dat", "--", workload("spike"), "60", "1500", "1500"});
  const Result peak = run(argv);
  EXPECT_EQ(peak.status, 4) << peak.err;
  EXPECT_NEAR(std::stod(peak.out), 61.0, 4.0) << peak.out;
  // compare --run stops: a row built on a cut trace would mislead.
  argv = fsize;
  argv.insert(argv.end(), {"compare", "-o", dir + "/c", "--run", "sleep 1.5"});
  const Result cmp = run(argv);
  EXPECT_EQ(cmp.status, 4) << cmp.err;
  EXPECT_TRUE(contains(joined(cmp.err), "is incomplete")) << cmp.err;
}

TEST(RunOutput, AFullSmallTmpfs) {
  const std::string dir = temp_dir() + "/tmpfs";
  fs::create_directories(dir);
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << ")";
  }
  // Fill it to the last 8 KiB, so that the trace soon finds it full.
  const Result fill = run({"sh", "-c", "head -c 57344 /dev/zero > " + dir + "/filler"});
  const std::string out = dir + "/trace.dat";
  const Result r =
      run(bounded({"run", "-o", out, "--max-peak", "1GiB", "--", workload("spike"), "40", "1500", "1000"}));
  const std::string trace = read_file(out);
  umount2(dir.c_str(), MNT_DETACH);
  EXPECT_EQ(fill.status, 0);
  EXPECT_EQ(r.status, 4) << r.err;
  // Cut back to its last whole line, never "MEM 31.601562 1795731"; the summary says where it ends.
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(trace.back(), '\n') << trace.substr(trace.size() > 80 ? trace.size() - 80 : 0);
  EXPECT_TRUE(contains(joined(r.err), "the trace ends at its last whole line, byte " + std::to_string(trace.size())))
      << r.err;
  EXPECT_TRUE(contains(joined(r.err), "No space left on device")) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "is within the budget")) << r.err;
}

TEST(RunOutput, DashIsStdoutAndTheCommandsStdoutGoesToStderr) {
  const Result r = run(bounded({"run", "-o", "-", "--", "sh", "-c", "echo job-out; echo job-err >&2"}));
  EXPECT_EQ(r.status, 0) << r.err;
  // The CMDLINE line quotes the job; its output is a line of its own, on stderr only.
  EXPECT_FALSE(contains(r.out, "\njob-out\n")) << r.out;
  EXPECT_TRUE(contains(joined(r.err), "job-out\n")) << r.err;
  const Trace t = trace::read_trace_text(r.out, "stdout");
  ASSERT_TRUE(t.exit);
  EXPECT_EQ(t.exit->status, 0);
  EXPECT_FALSE(t.mem.empty());
  EXPECT_TRUE(contains(joined(r.err), "qprof:   trace           stdout")) << r.err;
}

// A FIFO without a reader holds the run before its command starts, as a shell redirection does,
// and qprof says so instead of hanging silently.
TEST(RunOutput, AFifoWithNoReaderIsSaidWhileItWaits) {
  const std::string fifo = temp_dir() + "/unread.fifo";
  const std::string marker = temp_dir() + "/unread_fifo_ran";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Process run_it(bounded({"run", "-o", fifo, "--", "touch", marker}));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(fs::exists(marker)) << "the command waits for the FIFO's reader";
  const Result copy = run({"cat", fifo}, "", 30);
  const Result r = run_it.wait(30);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "is a FIFO with no reader yet: waiting for one before the command starts"))
      << r.err;
  EXPECT_TRUE(fs::exists(marker));
  EXPECT_NO_THROW(trace::read_trace_text(copy.out, "fifo"));
}

TEST(RunOutput, AFifoIsStreamedAndNeverReadBack) {
  const std::string fifo = temp_dir() + "/trace.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Process reader({"cat", fifo});
  const Result r = run(bounded({"run", "-o", fifo, "--max-peak", "1GiB", "--", workload("markers")}));
  const Result copy = reader.wait(30);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "no stage table: qprof does not read back a trace it streamed")) << r.err;
  const Trace t = trace::read_trace_text(copy.out, "fifo");
  ASSERT_TRUE(t.exit);
  EXPECT_FALSE(t.markers.empty());
  // --yaml needs the trace read back: refused before the command runs.
  const std::string marker = temp_dir() + "/fifo_yaml_ran";
  const Result yaml = run(bounded({"run", "-o", fifo, "--yaml", temp_dir() + "/f.yaml", "--", "touch", marker}));
  EXPECT_EQ(yaml.status, 2) << yaml.err;
  EXPECT_FALSE(fs::exists(marker));
}

TEST(RunOutput, ThreeConcurrentRunsWithoutOWriteThreeTraces) {
  const std::string dir = temp_dir() + "/concurrent";
  fs::create_directories(dir);
  std::vector<std::unique_ptr<Process>> runs;
  for (int i = 0; i < 3; ++i) {
    runs.push_back(std::make_unique<Process>(
        std::vector<std::string>{"sh", "-c",
                                 "cd " + dir + " && exec timeout -s KILL 60 prlimit " + as_limit("1073741824") + " " +
                                     qprof_bin() + " run -q -- sh -c 'sleep 0.3'"}));
  }
  for (auto& p : runs) EXPECT_EQ(p->wait().status, 0);
  std::set<std::string> names;
  const std::regex name(R"(qprof_\d{14}\.\d{3}_\d+\.dat)");
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    EXPECT_TRUE(std::regex_match(n, name)) << n;
    names.insert(n);
    const Trace t = trace::read_trace(e.path().string());
    EXPECT_TRUE(t.exit) << n;
  }
  EXPECT_EQ(names.size(), 3u);
}

TEST(RunOutput, AFileAnotherLiveQprofWritesIsRefused) {
  const std::string out = temp_dir() + "/shared.dat";
  Process first(bounded({"run", "-o", out, "--", "sleep", "1.5"}));
  wait_for(out, "MEM ");
  const std::string marker = temp_dir() + "/second_ran";
  const Result second = run(bounded({"run", "-o", out, "--", "touch", marker}));
  EXPECT_EQ(second.status, 2) << second.err;
  EXPECT_TRUE(contains(joined(second.err), "is being written by another qprof")) << second.err;
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_EQ(first.wait().status, 0);
  const Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.exit) << "the first run's trace is whole";
  // Once that run is over, -o replaces the file as users expect.
  const Result third = run(bounded({"run", "-q", "-o", out, "--", "true"}));
  EXPECT_EQ(third.status, 0) << third.err;
  EXPECT_EQ(trace::read_trace(out).cmdline, "true");
}

TEST(RunOutput, AfterSigkillOfQprofOrOfTheJobTheTraceReads) {
  const std::string out = temp_dir() + "/killed_qprof.dat";
  Process p(bounded({"run", "-o", out, "--", workload("spike"), "20", "5000", "0"}));
  wait_for(out, "MEM ");
  std::this_thread::sleep_for(300ms);
  const Trace before = trace::read_trace(out);
  ASSERT_GT(before.meta.root_pid, 0);
  // qprof is the job's parent (p is the timeout command above it).
  const std::string stat = read_file("/proc/" + std::to_string(before.meta.root_pid) + "/stat");
  int qprof_pid = 0;
  ASSERT_EQ(std::sscanf(stat.c_str() + stat.rfind(')') + 2, "%*c %d", &qprof_pid), 1) << stat;
  ASSERT_EQ(kill(qprof_pid, SIGKILL), 0);
  p.wait();
  kill(static_cast<pid_t>(before.meta.root_pid), SIGKILL);
  std::vector<std::string> warnings;
  const Trace t = trace::read_trace(out, &warnings);
  EXPECT_FALSE(t.mem.empty());

  const std::string out2 = temp_dir() + "/killed_job.dat";
  const Result r = run(bounded({"run", "-o", out2, "--", "sh", "-c", "kill -9 $$"}));
  EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
  const Trace t2 = trace::read_trace(out2);
  ASSERT_TRUE(t2.exit);
  EXPECT_EQ(t2.exit->signal, SIGKILL);
}

}  // namespace
}  // namespace qprof::test
