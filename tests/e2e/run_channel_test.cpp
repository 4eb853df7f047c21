// SPDX-License-Identifier: Apache-2.0
// The marker channel (QPROF_MARK_FD, QPROF_MARK_PATH): markers that are not stderr lines,
// synchronous checkpoints, and the C header that writes them (tests/workloads/mark_channel.c).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Marker;
using trace::Trace;

namespace {

// qprof under an address-space bound and a hard timeout, as every test that runs it.
Result bounded_qprof(const std::vector<std::string>& args, int timeout_s = 120) {
  std::vector<std::string> argv{
      "timeout", "-s", "KILL", std::to_string(timeout_s), "prlimit", as_limit("4294967296"), "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", timeout_s + 10);
}

std::vector<std::string> labels(const Trace& t) {
  std::vector<std::string> out;
  for (const Marker& m : t.markers) out.push_back(m.label);
  return out;
}

TEST(RunChannel, MarkersThroughTheInheritedPipeBecomeCheckpoints) {
  const std::string out = temp_dir() + "/fd.dat";
  // Regular samples every 2 s: only the sample taken for each marker knows its memory.
  const Result r = bounded_qprof({"run", "-q", "-o", out, "--interval", "2", "--", workload("mark_channel"),
                                  "mark:Load Start", "sleep:30", "touch:40", "mark:Load End", "sleep:100"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(joined(r.err), "");  // nothing of the channel reaches stderr
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(labels(t), (std::vector<std::string>{"Load Start", "Load End"}));
  EXPECT_NEAR(mib(*t.markers[1].at.rss) - mib(*t.markers[0].at.rss), 40.0, 2.0);
  ASSERT_EQ(t.stages.size(), 1u);
  EXPECT_EQ(t.stages[0].name, "Load");
}

TEST(RunChannel, MarkersThroughTheFifoWhenTheDescriptorWasNotInherited) {
  const std::string out = temp_dir() + "/fifo.dat";
  const Result r = bounded_qprof({"run", "-q", "-o", out, "--interval", "2", "--", workload("mark_channel"), "nofd",
                                  "mark:Load Start", "sleep:30", "touch:40", "sync:Load End", "sleep:100"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "sync Load End = 0\n");  // acknowledged through the writer's reply FIFO
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(labels(t), (std::vector<std::string>{"Load Start", "Load End"}));
  EXPECT_NEAR(mib(*t.markers[1].at.rss) - mib(*t.markers[0].at.rss), 40.0, 2.0);
}

TEST(RunChannel, EnvironmentNamesAPrivateFifoThatIsRemovedAtTheEnd) {
  const std::string out = temp_dir() + "/env.dat";
  const Result r = bounded_qprof({"run", "-q", "-o", out, "--", "sh", "-c",
                                  "echo \"$QPROF_MARK_FD\"; echo \"$QPROF_MARK_PATH\"; "
                                  "stat -c %a \"$(dirname \"$QPROF_MARK_PATH\")\"; stat -c %F \"$QPROF_MARK_PATH\"; "
                                  "stat -L -c %F /proc/$$/fd/$QPROF_MARK_FD; "
                                  "echo \"$QPROF_MARK_FD_ID\"; stat -L -c %d:%i /proc/$$/fd/$QPROF_MARK_FD"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string fd, path, mode, kind, fd_kind;
  std::getline(lines, fd);
  std::getline(lines, path);
  std::getline(lines, mode);
  std::getline(lines, kind);
  std::getline(lines, fd_kind);
  std::string fd_id, fd_stat;
  std::getline(lines, fd_id);
  std::getline(lines, fd_stat);
  EXPECT_GT(std::stoi(fd), 2);
  EXPECT_EQ(fd_id, fd_stat);  // the identity names the descriptor's pipe
  EXPECT_EQ(mode, "700");
  EXPECT_EQ(kind, "fifo");
  EXPECT_EQ(fd_kind, "fifo");  // the pipe's write end, inherited
  struct stat st {};
  EXPECT_NE(::stat(path.c_str(), &st), 0) << path << " is left behind";
  EXPECT_NE(::stat(path.substr(0, path.rfind('/')).c_str(), &st), 0);
}

TEST(RunChannel, ADescendantHoldingTheWriteEndNeverHoldsQprof) {
  const std::string out = temp_dir() + "/daemon.dat";
  const auto t0 = std::chrono::steady_clock::now();
  // The background sleep keeps the channel's write end (and stderr's) for 30 s.
  const Result r = bounded_qprof({"run", "-q", "--no-wait-daemons", "-o", out, "--", "sh", "-c",
                                  "sleep 30 & " + workload("mark_channel") + " mark:Done"});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LT(took, 10.0);
  EXPECT_EQ(labels(trace::read_trace(out)), (std::vector<std::string>{"Done"}));
}

TEST(RunChannel, StderrAndChannelMarkersMergeInTimeOrder) {
  const std::string out = temp_dir() + "/merge.dat";
  const Result r = bounded_qprof({"run", "-q", "-o", out, "--", workload("mark_channel"), "err:A", "sleep:60", "mark:B",
                                  "sleep:60", "err:C", "sleep:60", "nofd", "mark:D", "sleep:60", "err:E"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(labels(t), (std::vector<std::string>{"A", "B", "C", "D", "E"}));
  for (std::size_t i = 1; i < t.markers.size(); ++i) EXPECT_GT(t.markers[i].t, t.markers[i - 1].t);
}

TEST(RunChannel, SynchronousMarkOutsideQprofIsANoOpAndAnUnansweredOneTimesOut) {
  // Outside qprof: nothing to write to, nothing waited for.
  Result r = run(
      {"env", "-u", "QPROF_MARK_FD", "-u", "QPROF_MARK_PATH", workload("mark_channel"), "present", "sync:X", "mark:Y"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "present = 0\nsync X = 1\n");
  // A reader that never answers (a qprof stopped, say): the writer gives up after 100 ms.
  const std::string dir = temp_dir();
  const std::string fifo = dir + "/marks";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  r = run({"sh", "-c",
           "exec 3<>" + fifo + "; env -u QPROF_MARK_FD QPROF_MARK_PATH=" + fifo + " " + workload("mark_channel") +
               " sync:X sync:Y"});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "sync X = -1\nsync Y = -1\n");
  EXPECT_GT(took, 0.19);
  EXPECT_LT(took, 5.0);
  EXPECT_EQ(::rmdir(dir.c_str()), -1);  // the writer's reply directories are gone: only the FIFO is left
}

// An unusable TMPDIR takes the FIFO away, not the pipe: said once, and the pipe's markers and a
// synchronous checkpoint (its reply FIFO falls back to /tmp) still arrive.
TEST(RunChannel, AnUnusableTmpdirCostsTheFifoOnlyAndSaysSo) {
  const std::string out = temp_dir() + "/no_tmpdir.dat";
  const Result r =
      run({"env", "TMPDIR=/nonexistent-qprof-tmp", "timeout", "-s", "KILL", "60", qprof_bin(), "run", "-o", out, "--",
           "sh", "-c", "test -z \"$QPROF_MARK_PATH\" && echo A >&$QPROF_MARK_FD && " + qprof_bin() + " mark --sync B"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      joined(r.err).find("no marker FIFO (cannot create a directory for the marker FIFO (/nonexistent-qprof-tmp/"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(labels(trace::read_trace(out)), (std::vector<std::string>{"A", "B"}));
}

TEST(RunChannel, AFloodingWriterIsDroppedWithOneNoteNotBuffered) {
  const std::string out = temp_dir() + "/flood.dat";
  const Result r = bounded_qprof({"run", "-q", "-o", out, "--", workload("mark_channel"), "flood:200000"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  EXPECT_LT(t.markers.size(), 200000u);
  EXPECT_GT(t.markers.size(), 0u);
  std::size_t flood_notes = 0;
  for (const std::string& n : t.notes) flood_notes += n.find("marker channel is flooded") != std::string::npos;
  EXPECT_EQ(flood_notes, 1u);
  const auto dropped = std::find_if(t.notes.begin(), t.notes.end(), [](const std::string& n) {
    return n.find("marker channel dropped") != std::string::npos;
  });
  ASSERT_NE(dropped, t.notes.end());
  // What was dropped and what was taken add up to what was written.
  const std::size_t n_dropped = std::stoul(dropped->substr(dropped->find("dropped ") + 8));
  EXPECT_EQ(n_dropped + t.markers.size(), 200000u);
}

TEST(RunChannel, ALongLineIsCutAndSaid) {
  const std::string out = temp_dir() + "/long.dat";
  const Result r = bounded_qprof(
      {"run", "-q", "-o", out, "--", "sh", "-c", "printf 'QPROF_MARK: %020000d\\nShort\\n' 0 >&$QPROF_MARK_FD"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.markers.size(), 2u);
  EXPECT_EQ(t.markers[0].label, std::string(4096 - std::string("QPROF_MARK: ").size(), '0'));
  EXPECT_EQ(t.markers[1].label, "Short");  // the bare label, without the prefix
  EXPECT_TRUE(std::any_of(t.notes.begin(), t.notes.end(), [](const std::string& n) {
    return n == "the marker channel: 1 marker line longer than 4096 bytes, cut there";
  }));
}

// One writer leaves a marker line without its newline; another writer's synchronous checkpoint,
// written next, keeps its own line: it is answered, and no label holds the protocol's text. The
// first writer's line split over two writes is still one marker.
TEST(RunChannel, AnUnterminatedLineDoesNotSwallowTheNextWritersCheckpoint) {
  const std::string out = temp_dir() + "/unterminated.dat";
  const std::string program =
      "import os, sys, time\n"
      "import qprof_mark as q\n"
      "fd = int(os.environ['QPROF_MARK_FD'])\n"
      "os.write(fd, b'QPROF_MARK: Sp'); time.sleep(0.05); os.write(fd, b'lit Start\\n')\n"
      "time.sleep(0.2)\n"
      "os.write(fd, b'Split End\\nQPROF_MARK: Two')\n"
      "time.sleep(0.1)\n"
      "if os.fork() == 0:\n"
      "    print('child mark', q.mark('From child'), flush=True)\n"
      "    os._exit(0)\n"
      "os.wait()\n"
      "time.sleep(0.1)\n";
  const Result r =
      bounded_qprof({"run", "-o", out, "--", "env", "PYTHONPATH=" + std::string(QPROF_TEST_SOURCE) + "/python",
                     debian_python(), "-c", program});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "child mark True\n");
  const Trace t = trace::read_trace(out);
  EXPECT_EQ(labels(t), (std::vector<std::string>{"Split Start", "Split End", "Two", "From child"}));
  const std::string said = "the marker channel: 1 line without a newline, ended where another marker's write began";
  EXPECT_NE(joined(r.err).find(said), std::string::npos) << r.err;
  EXPECT_TRUE(std::any_of(t.notes.begin(), t.notes.end(),
                          [&](const std::string& n) { return n.find(said) != std::string::npos; }));
}

}  // namespace
}  // namespace qprof::test
