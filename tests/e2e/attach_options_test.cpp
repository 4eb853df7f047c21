// SPDX-License-Identifier: Apache-2.0
// qprof attach's options that run's help also gives: --no-wait-daemons stops at the process's
// own exit while a worker it forked lingers (neither is ever signalled), and --mark-fifo in a
// directory the marker writers would refuse is refused at once, as root and as nobody.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }
bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::vector<std::string> bounded(const std::vector<std::string>& args, const std::string& bin = qprof_bin()) {
  std::vector<std::string> argv{"prlimit", as_limit("1073741824"), bin};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

void wait_for(const std::function<bool()>& ready) {
  for (int i = 0; i < 3000 && !ready(); ++i) std::this_thread::sleep_for(10ms);
}

// A root that forks a worker (30 MiB) and exits 0.2 s after DIR/go, the worker sleeping on for
// 30 s; every signal either receives is logged to DIR/signals.
constexpr const char* kLeakingRoot = R"(import os, signal, sys, time
d = sys.argv[1]
def logged(sig, _):
    with open(d + '/signals', 'a') as f:
        f.write('%d got %d\n' % (os.getpid(), sig))
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    signal.signal(s, logged)
if os.fork() == 0:
    b = bytearray(30 << 20)
    for i in range(0, len(b), 4096):
        b[i] = 1
    with open(d + '/worker.tmp', 'w') as f:
        f.write(str(os.getpid()))
    os.rename(d + '/worker.tmp', d + '/worker')
    end = time.monotonic() + 30
    while time.monotonic() < end:
        time.sleep(0.1)
    os._exit(0)
while not os.path.exists(d + '/worker'):
    time.sleep(0.01)
open(d + '/ready', 'w').close()
while not os.path.exists(d + '/go'):
    time.sleep(0.01)
time.sleep(0.2)
os._exit(5)
)";

// The process's exit is learnt through its pidfd: qprof stops there, although the worker lives on.
TEST(AttachOptions, NoWaitDaemonsStopsAtTheProcesssExitAndSignalsNoOne) {
  const std::string dir = fresh_dir("attach-no-wait");
  const std::string out = dir + "/no_wait.dat";
  write_file(dir + "/root.py", kLeakingRoot);
  Process target({debian_python(), dir + "/root.py", dir});
  wait_for([&] { return exists(dir + "/ready"); });
  ASSERT_TRUE(exists(dir + "/ready"));
  const pid_t worker = std::stoi(read_file(dir + "/worker"));
  Process q(bounded({"attach", "--no-wait-daemons", "-o", out, std::to_string(target.pid())}));
  wait_for([&] { return contains(read_file(out), "\nMEM "); });
  write_file(dir + "/go", "");
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = q.wait(60);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  target.wait(30);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LT(took, 10.0) << "qprof waited for the worker";
  EXPECT_EQ(::kill(worker, 0), 0) << "the worker keeps running";
  EXPECT_FALSE(exists(dir + "/signals")) << read_file(dir + "/signals");
  const Trace t = trace::read_trace(out);
  EXPECT_GE(mib(max_mem(t)), 30.0) << "the worker was followed while the process ran";
  ASSERT_TRUE(t.exit.has_value());
  EXPECT_FALSE(t.exit->timed_out);
  ::kill(worker, SIGKILL);
  // run --attach takes it too; attach --help offers it.
  EXPECT_TRUE(contains(qprof({"attach", "--help"}).out, "--no-wait-daemons")) << qprof({"attach", "--help"}).out;
}

struct MarkFifoDirs {
  std::string base;    // root's, 0755: nobody may not create in it
  std::string open;    // 0777, not sticky: anyone could swap the FIFO
  std::string sticky;  // 01777, as /tmp
};

MarkFifoDirs mark_fifo_dirs(const std::string& name) {
  MarkFifoDirs d{fresh_dir(name), "", ""};
  fs::permissions(d.base, fs::perms(0755));
  fs::permissions(temp_dir(), fs::perms::others_exec, fs::perm_options::add);  // nobody reaches it
  d.open = d.base + "/open";
  d.sticky = d.base + "/sticky";
  for (const std::string& dir : {d.open, d.sticky}) fs::create_directory(dir);
  ::chmod(d.open.c_str(), 0777);
  ::chmod(d.sticky.c_str(), 01777);
  return d;
}

// Attaches (as `user`, a runuser prefix, or qprof's own) with --mark-fifo DIR/m.fifo to a sleeping
// process of that user, marks through the FIFO, and returns the trace's labels.
std::vector<std::string> labels_through(const std::string& dir, const std::vector<std::string>& user) {
  const bool other = !user.empty();
  const std::string bin = other ? copy_for_other_users(qprof_bin()) : qprof_bin();
  std::vector<std::string> sleeper = {"sleep", "30"};
  if (other) sleeper.insert(sleeper.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  Process target(sleeper);
  wait_for([&] { return read_file("/proc/" + std::to_string(target.pid()) + "/comm") == "sleep\n"; });
  const std::string fifo = dir + "/m.fifo";
  const std::string out = dir + "/marks.dat";
  std::vector<std::string> attach = user;
  for (const std::string& a :
       bounded({"attach", "-q", "--mark-fifo", fifo, "-o", out, std::to_string(target.pid())}, bin))
    attach.push_back(a);
  Process q(attach);
  wait_for([&] { return contains(read_file(out), "\nMEM ") && exists(fifo); });
  std::vector<std::string> mark = user;
  for (const std::string& a :
       {std::string("env"), std::string("-u"), std::string("QPROF_MARK_FD"), "QPROF_MARK_PATH=" + fifo, bin,
        std::string("mark"), std::string("--sync"), std::string("--strict"), std::string("Eval")})
    mark.push_back(a);
  const Result marked = run(mark);
  // Not asserted: an acknowledgement later than 100 ms on a loaded machine is not what this tests.
  (void)marked;
  ::kill(target.pid(), SIGKILL);
  target.wait(30);
  const Result r = q.wait(60);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> labels;
  for (const trace::Marker& m : trace::read_trace(out).markers) labels.push_back(m.label);
  return labels;
}

Result refused_mark_fifo(const std::string& fifo, const std::vector<std::string>& user = {}) {
  std::vector<std::string> argv = user;
  const std::string bin = user.empty() ? qprof_bin() : copy_for_other_users(qprof_bin());
  for (const std::string& a : bounded({"attach", "-q", "--mark-fifo", fifo, "1"}, bin)) argv.push_back(a);
  const Result r = run(argv);
  EXPECT_FALSE(exists(fifo)) << fifo;
  return r;
}

const std::string kMayChange = "may be changed by its group or others and is not sticky";
const std::string kWhatToDo = "use a directory only you may change (mkdir -m 700 DIR) or a sticky one such as /tmp";

TEST(AttachOptions, AMarkFifoWhereTheWritersRefuseItIsRefusedAtOnce) {
  const MarkFifoDirs d = mark_fifo_dirs("mark-fifo-root");
  Result r = refused_mark_fifo(d.open + "/m.fifo");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), d.open + " " + kMayChange)) << r.err;
  EXPECT_TRUE(contains(joined(r.err), kWhatToDo)) << r.err;
  // run's --mark-fifo is the same promise to the same writers.
  r = run(bounded({"run", "-q", "--mark-fifo", d.open + "/m.fifo", "--", "true"}));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), kMayChange)) << r.err;
  // A directory that is not there, and a link in the directory's place (the writers follow none).
  r = refused_mark_fifo(d.base + "/missing/m.fifo");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), d.base + "/missing: No such file or directory")) << r.err;
  fs::create_directory_symlink(d.sticky, d.base + "/link");
  r = refused_mark_fifo(d.base + "/link/m.fifo");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "is a symbolic link")) << r.err;
  if (::geteuid() == 0) {
    // Another user's directory: a writer running as qprof's user (root) refuses it.
    const std::string theirs = d.base + "/theirs";
    fs::create_directory(theirs);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    r = refused_mark_fifo(theirs + "/m.fifo");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(joined(r.err), theirs + " belongs to uid 65534, neither qprof's (0) nor root's")) << r.err;
  }
  // A sticky directory, as /tmp, is accepted, and the markers arrive.
  EXPECT_EQ(labels_through(d.sticky, {}), std::vector<std::string>{"Eval"});
}

TEST(AttachOptions, AMarkFifoWhereTheWritersRefuseItIsRefusedAtOnceAsNobody) {
  if (::geteuid() != 0) GTEST_SKIP() << "runuser needs root";
  if (run({"setpriv", "--version"}).status != 0) GTEST_SKIP() << "no setpriv";
  const std::vector<std::string> nobody = {"runuser", "-u", "nobody", "--"};
  const MarkFifoDirs d = mark_fifo_dirs("mark-fifo-nobody");
  Result r = refused_mark_fifo(d.open + "/m.fifo", nobody);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), d.open + " " + kMayChange)) << r.err;
  // Root's directory that nobody may not write: the FIFO could not even be made.
  r = refused_mark_fifo(d.base + "/m.fifo", nobody);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "cannot create the FIFO in " + d.base + ": Permission denied")) << r.err;
  // nobody's own directory, and a sticky one: accepted, and the markers arrive.
  const std::string own = d.base + "/own";
  fs::create_directory(own);
  ASSERT_EQ(::chown(own.c_str(), 65534, 65534), 0);
  ::chmod(own.c_str(), 0700);
  EXPECT_EQ(labels_through(own, nobody), std::vector<std::string>{"Eval"});
  EXPECT_EQ(labels_through(d.sticky, nobody), std::vector<std::string>{"Eval"});
}

// A relative --mark-fifo is made absolute: the writers take only an absolute QPROF_MARK_PATH.
TEST(AttachOptions, ARelativeMarkFifoIsNamedByItsAbsolutePath) {
  const std::string dir = fresh_dir("mark-fifo-relative");
  Process target({"sleep", "30"});
  Process q({"env", "-C", dir, qprof_bin(), "attach", "--mark-fifo", "m.fifo", "-o", "rel.dat",
             std::to_string(target.pid())});
  wait_for([&] { return exists(dir + "/m.fifo"); });
  ::kill(target.pid(), SIGKILL);
  target.wait(30);
  const Result r = q.wait(60);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "QPROF_MARK_PATH=" + dir + "/m.fifo ")) << r.err;
}

}  // namespace
}  // namespace qprof::test
