// SPDX-License-Identifier: Apache-2.0
// qprof attach PID: a running workload of known size, one that forks after the attach, the
// process's exit status as /proc shows it, --timeout and SIGTERM that never reach the process,
// and the PIDs qprof refuses (none such, qprof itself, an ancestor, another user's).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::ChildSeries;
using trace::MemSample;
using trace::Trace;

namespace {

using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }
bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }
void touch(const std::string& path) { std::ofstream(path) << "go\n"; }

std::vector<std::string> bounded(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"prlimit", as_limit("1073741824"), qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// A directory of its own for each target: a trigger (and its ".ready") left by the test before
// would let the next target go at once, its high-water mark read before it allocated.
std::string own_dir() {
  static int targets = 0;
  return fresh_dir("attach-" + std::to_string(++targets));
}

void wait_for(const std::function<bool()>& ready) {
  for (int i = 0; i < 3000 && !ready(); ++i) std::this_thread::sleep_for(10ms);
}

// The kernel's high-water mark of a process, from /proc/PID/status.
Bytes vm_hwm(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

struct Attached {
  Result qprof;
  Result target;
  Trace trace;
  Bytes target_hwm = 0;
};

// Starts attach_target, attaches qprof (extra args before the PID), lets the target go once the
// trace has samples, and waits for both.
Attached attach_to_target(int mib, int child_mib, int hold_ms, const std::vector<std::string>& how = {"attach"}) {
  const std::string dir = own_dir();
  const std::string trigger = dir + "/go";
  const std::string out = dir + "/attach.dat";
  Process target(
      {workload("attach_target"), std::to_string(mib), std::to_string(child_mib), std::to_string(hold_ms), trigger});
  wait_for([&] { return exists(trigger + ".ready"); });
  Attached a;
  a.target_hwm = vm_hwm(target.pid());
  std::vector<std::string> args = how;
  // -v: the whole summary, whose figures and caveats these tests read.
  for (const std::string& s :
       {std::string("-v"), std::string("-M"), std::string("-o"), out, std::to_string(target.pid())})
    args.push_back(s);
  if (how.size() > 1 && how[1] == "--attach") args.insert(args.end() - 1, "--attach"), args.erase(args.begin() + 1);
  Process q(bounded(args));
  wait_for([&] { return contains(read_file(out), "\nMEM "); });
  touch(trigger);
  // The target's parent (this test) reaps it only after qprof is done: qprof sees it as a zombie.
  a.qprof = q.wait(60);
  a.target = target.wait(60);
  a.trace = trace::read_trace(out);
  return a;
}

TEST(Attach, RunningWorkloadOfKnownSize) {
  const Attached a = attach_to_target(200, 0, 300);
  ASSERT_EQ(a.qprof.status, 0) << a.qprof.err;
  EXPECT_EQ(a.target.status, 7);
  const double peak = mib(max_mem(a.trace));
  EXPECT_GE(peak, 200.0) << a.qprof.err;
  // The sampled peak lies within what the kernel says of the process: its own high-water mark
  // before the trigger (it never grows after), with a page-table-sized margin.
  EXPECT_LE(peak, mib(a.target_hwm) + 1.0) << a.qprof.err;
  ASSERT_TRUE(a.trace.exit.has_value());
  EXPECT_EQ(a.trace.exit->status, 7);
  EXPECT_TRUE(a.trace.exit->status_known);
  EXPECT_TRUE(contains(joined(a.qprof.err), "the process exited with status 7")) << a.qprof.err;
  EXPECT_TRUE(contains(joined(a.qprof.err), "its stderr is not qprof's")) << a.qprof.err;
  EXPECT_TRUE(contains(joined(a.qprof.err), "double-fork")) << a.qprof.err;
  EXPECT_EQ(a.trace.meta.other.count("attached"), 1u);
}

TEST(Attach, ChildForkedAfterTheAttachIsCounted) {
  const Attached a = attach_to_target(50, 150, 600);
  ASSERT_EQ(a.qprof.status, 0) << a.qprof.err;
  // Parent and child hold theirs at the same time: 200 MiB together.
  EXPECT_GE(mib(max_mem(a.trace)), 200.0) << a.qprof.err;
  // The child's RSS also counts the pages it shares with its parent (copy-on-write): at most the
  // parent's high-water mark twice, plus its own 150 MiB.
  EXPECT_LE(mib(max_mem(a.trace)), 2 * mib(a.target_hwm) + 150.0 + 8.0) << a.qprof.err;
  std::size_t child_pids = 0;
  for (const ChildSeries& c : a.trace.children) {
    Bytes top = 0;
    for (const MemSample& s : c.samples) top = std::max(top, s.bytes);
    if (mib(top) >= 150.0) ++child_pids;
  }
  EXPECT_EQ(child_pids, 1u) << a.qprof.err;
}

// The attached process did not inherit the marker channel: qprof names its FIFO (with -q too), and a
// synchronous `qprof mark` through it (from any process) is a checkpoint of the attached tree.
TEST(Attach, MarkersThroughTheFifoQprofNames) {
  const std::string dir = own_dir();
  const std::string trigger = dir + "/go";
  const std::string out = dir + "/attach_mark.dat";
  Process target({workload("attach_target"), "120", "0", "200", trigger});
  wait_for([&] { return exists(trigger + ".ready"); });
  std::string attach_line;
  for (const std::string& a : bounded({"attach", "-o", out, std::to_string(target.pid())}))
    attach_line += "'" + a + "' ";
  Process q({"sh", "-c", "exec " + attach_line + "2>'" + dir + "/err'"});
  const std::string key = "QPROF_MARK_PATH=";
  wait_for([&] { return contains(read_file(out), "\nMEM ") && contains(read_file(dir + "/err"), key); });
  const std::string err = read_file(dir + "/err");
  ASSERT_TRUE(contains(err, key)) << err;
  const std::size_t from = err.find(key) + key.size();
  const std::string fifo = err.substr(from, err.find(' ', from) - from);
  // --sync without --strict: the checkpoint is taken either way; an acknowledgement later than
  // the writer's 100 ms on a loaded machine is not what this tests.
  const Result mark = run(
      {"env", "-u", "QPROF_MARK_FD", "QPROF_MARK_PATH=" + fifo, qprof_bin(), "mark", "--sync", "Attached checkpoint"});
  EXPECT_EQ(mark.status, 0) << mark.err;
  touch(trigger);
  const Result r = q.wait(60);
  target.wait(60);
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.markers.size(), 1u) << err;
  EXPECT_EQ(t.markers[0].label, "Attached checkpoint");
  EXPECT_GE(mib(*t.markers[0].at.rss), 120.0);  // the attached process's memory at that moment
}

// -q prints nothing but errors; --mark-fifo gives the writers a path known beforehand.
TEST(Attach, QuietWithAChosenFifoPrintsNothingAndTakesMarkers) {
  const std::string dir = own_dir();
  const std::string trigger = dir + "/go";
  const std::string out = dir + "/quiet.dat";
  const std::string fifo = dir + "/train.marks";
  Process target({workload("attach_target"), "64", "0", "200", trigger});
  wait_for([&] { return exists(trigger + ".ready"); });
  Process q(bounded({"attach", "-q", "--mark-fifo", fifo, "-o", out, std::to_string(target.pid())}));
  wait_for([&] { return contains(read_file(out), "\nMEM ") && exists(fifo); });
  const Result mark =
      run({"env", "-u", "QPROF_MARK_FD", "QPROF_MARK_PATH=" + fifo, qprof_bin(), "mark", "--sync", "Eval"});
  EXPECT_EQ(mark.status, 0) << mark.err;
  touch(trigger);
  const Result r = q.wait(60);
  target.wait(60);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(joined(r.err), "") << "-q prints nothing but errors";
  EXPECT_FALSE(exists(fifo)) << "the FIFO is removed at the end";
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.markers.size(), 1u);
  EXPECT_EQ(t.markers[0].label, "Eval");
  // A path that exists is refused before anything starts, and left as it was.
  const std::string taken = dir + "/taken";
  touch(taken);
  const Result refused = run(bounded({"attach", "-q", "--mark-fifo", taken, std::to_string(::getpid())}));
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_TRUE(contains(joined(refused.err), "exists")) << refused.err;
  EXPECT_EQ(read_file(taken), "go\n");
}

TEST(Attach, RunAttachIsTheSame) {
  const Attached a = attach_to_target(100, 0, 200, {"run", "--attach"});
  ASSERT_EQ(a.qprof.status, 0) << a.qprof.err;
  EXPECT_GE(mib(max_mem(a.trace)), 100.0);
  EXPECT_TRUE(contains(joined(a.qprof.err), "the process exited with status 7")) << a.qprof.err;
}

// --timeout and SIGTERM stop the attach; the process is never signalled and keeps running.
TEST(Attach, TimeoutAndSigtermNeverSignalTheProcess) {
  const std::string dir = own_dir();
  Process target({workload("count_signals"), "0"});
  std::this_thread::sleep_for(200ms);
  const Result timed =
      run(bounded({"attach", "--timeout", "0.5", "-o", dir + "/t.dat", std::to_string(target.pid())}), "", 60);
  EXPECT_EQ(timed.status, 0) << timed.err;
  EXPECT_TRUE(contains(joined(timed.err), "stopped by --timeout; the process runs on")) << timed.err;
  const Trace t = trace::read_trace(dir + "/t.dat");
  ASSERT_TRUE(t.exit.has_value());
  EXPECT_FALSE(t.exit->status_known);
  EXPECT_TRUE(t.exit->timed_out);
  // The report never makes the unknown status a 0 (success), for a reader or a script.
  const Result json = qprof({"report", "--format", "json", dir + "/t.dat"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_TRUE(doc["exit_status"].is_null()) << json.out.substr(0, 2000);
  EXPECT_EQ(doc["exit_status_known"], false) << json.out.substr(0, 2000);
  const Result text = qprof({"report", dir + "/t.dat"});
  EXPECT_TRUE(contains(text.out, "\nexit status known    no\n")) << text.out;

  Process q(bounded({"attach", "-o", dir + "/s.dat", std::to_string(target.pid())}));
  wait_for([&] { return contains(read_file(dir + "/s.dat"), "\nMEM "); });
  ASSERT_EQ(kill(q.pid(), SIGTERM), 0);
  const Result stopped = q.wait(60);
  EXPECT_EQ(stopped.status, 0) << stopped.err;
  EXPECT_TRUE(contains(joined(stopped.err), "stopping the attach")) << stopped.err;
  EXPECT_TRUE(contains(joined(stopped.err), "the attach was stopped; the process runs on")) << stopped.err;
  // The process got nothing: count_signals says what it got when it is finally stopped.
  EXPECT_EQ(kill(target.pid(), 0), 0);
  ASSERT_EQ(kill(target.pid(), SIGINT), 0);
  const Result r = target.wait(30);
  EXPECT_TRUE(contains(joined(r.err), "workload got 1 signal(s)")) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "from pid " + std::to_string(::getpid()))) << r.err;
}

TEST(Attach, RefusedPids) {
  // A PID that existed and is gone (reaped): no such process.
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  Result r = run(bounded({"attach", std::to_string(gone)}));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(joined(r.err), "no process " + std::to_string(gone))) << r.err;
  // qprof's own PID: the shell's $$ is qprof once exec'd.
  const std::string self = "exec prlimit " + as_limit("1073741824") + " " + qprof_bin() + " attach $$";
  r = run({"sh", "-c", self});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(joined(r.err), "is qprof itself")) << r.err;
  // An ancestor: qprof would be in its own tree.
  r = run({"sh", "-c", "prlimit " + as_limit("1073741824") + " " + qprof_bin() + " attach $$; exit $?"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(joined(r.err), "is an ancestor of qprof")) << r.err;
  r = run(bounded({"attach", "0"}));
  EXPECT_EQ(r.status, 2);
  // A kernel thread (kthreadd, where this PID namespace shows it): no memory of its own to follow.
  if (read_file("/proc/2/comm") == "kthreadd\n") {
    r = run(bounded({"attach", "2"}));
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(contains(joined(r.err), "is a kernel thread")) << r.err;
  }
  r = run(bounded({"attach", "--cgroup", "1"}));
  EXPECT_EQ(r.status, 2);
  r = run(bounded({"run", "--attach", "1", "--", "true"}));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(joined(r.err), "no command goes with it")) << r.err;
  r = run(bounded({"run", "--attach", "1", "--cgroup"}));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(joined(r.err), "not done to a running process")) << r.err;
}

// What only a command qprof started has (signals after --timeout, a cgroup of its own, its
// stderr) is not offered by attach, and is an error with run --attach, saying why.
TEST(Attach, OptionsOfAStartedCommandAreNotOffered) {
  const std::string help = qprof({"attach", "--help"}).out;
  ASSERT_TRUE(contains(help, "--timeout")) << help;
  for (const char* name : {"--kill-after", "--cgroup", "--marker-regex", "--exit-code"}) {
    EXPECT_FALSE(contains(help, name)) << name << " in:\n" << help;
  }
  // Stopping at the process's exit needs neither a signal nor its stderr: offered.
  EXPECT_TRUE(contains(help, "--no-wait-daemons")) << help;
  EXPECT_TRUE(contains(qprof({"run", "--help"}).out, "--kill-after"));
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"--kill-after", "3"}, "an attached process is never signalled"},
      {{"--marker-regex", "M: (.*)"}, "an attached process's stderr is not qprof's"}};
  for (const auto& [extra, why] : refused) {
    std::vector<std::string> args{"run", "--attach", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = run(bounded(args));
    EXPECT_EQ(r.status, 2) << extra[0];
    EXPECT_TRUE(contains(joined(r.err), extra[0] + " does not go with attach")) << r.err;
    EXPECT_TRUE(contains(joined(r.err), why)) << r.err;
    // attach refuses them with the same reason, not by taking the option's value for the PID.
    std::vector<std::string> attach{"attach"};
    attach.insert(attach.end(), extra.begin(), extra.end());
    attach.push_back("1");
    const Result a = run(bounded(attach));
    EXPECT_EQ(a.status, 2) << extra[0];
    EXPECT_TRUE(contains(joined(a.err), extra[0] + " does not go with attach")) << a.err;
  }
  for (const std::vector<std::string>& own : {std::vector<std::string>{"attach", "--cgroup", "on", "1"},
                                              {"attach", "--mem", "1G", "1"},
                                              {"run", "--attach", "1", "--mem", "1G"}}) {
    const Result r = run(bounded(own));
    EXPECT_EQ(r.status, 2) << own[1];
    EXPECT_TRUE(contains(joined(r.err), "not done to a running process")) << own[1] << ": " << r.err;
  }
}

// Another user's process: the target runs as nobody, qprof as daemon (uid 1).
TEST(Attach, AnotherUsersProcessIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the target and qprof as two other users";
  if (run({"setpriv", "--version"}).status != 0) GTEST_SKIP() << "no setpriv";
  Process target({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "30"});
  pid_t sleeper = 0;
  wait_for([&] {
    const Result p = run({"pgrep", "-P", std::to_string(target.pid())});
    sleeper = p.out.empty() ? 0 : std::stoi(p.out);
    if (sleeper == 0) {  // setpriv execs: the target is the same process once it runs sleep
      std::string comm = read_file("/proc/" + std::to_string(target.pid()) + "/comm");
      if (comm.rfind("sleep", 0) == 0) sleeper = target.pid();
    }
    return sleeper != 0;
  });
  ASSERT_NE(sleeper, 0);
  const Result r =
      run({"setpriv", "--reuid=1", "--regid=1", "--clear-groups", "prlimit", as_limit("1073741824"),
           copy_for_other_users(qprof_bin()), "attach", "-o", "/tmp/never_written.dat", std::to_string(sleeper)});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "belongs to another user")) << r.err;
  EXPECT_FALSE(exists("/tmp/never_written.dat"));
  kill(sleeper, SIGKILL);
  target.wait(30);
}

}  // namespace
}  // namespace qprof::test
