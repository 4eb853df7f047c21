// SPDX-License-Identifier: Apache-2.0
// QPROF_MARK_PATH outlives qprof in a daemon, and qprof may be root while a writer is not: the
// helpers write only into the caller's own FIFO in a directory no one else may change, and qprof
// answers a synchronous checkpoint only through a helper's own reply FIFO.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

const std::string kPythonDir = std::string(QPROF_TEST_SOURCE) + "/python";

std::string fresh_dir(const std::string& name, fs::perms mode = fs::perms::owner_all) {
  const std::string dir = temp_dir() + "/" + name;
  fs::create_directories(dir);
  fs::permissions(dir, mode);
  return dir;
}

Result mark_through(const std::string& path, const std::vector<std::string>& runuser = {}) {
  std::vector<std::string> argv = runuser;
  for (const std::string& a :
       {std::string("env"), std::string("-u"), std::string("QPROF_MARK_FD"), "QPROF_MARK_PATH=" + path})
    argv.push_back(a);
  argv.push_back(runuser.empty() ? qprof_bin() : copy_for_other_users(qprof_bin()));
  argv.push_back("mark");
  argv.push_back("hello");
  return run(argv, "", 30);
}

// What a reader holding `fifo` open has received (nothing: "").
std::string drain(int fd) {
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

TEST(MarkPathSafety, ARegularFileIsNeverWritten) {
  const std::string dir = fresh_dir("regular");
  const std::string file = dir + "/precious";
  std::ofstream(file) << "precious\n";
  const Result r = mark_through(file);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("QPROF_MARK_PATH is not your own FIFO"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(file), "precious\n");
  // The Python helper refuses it too, and says so by its result.
  const Result py =
      run({"env", "-u", "QPROF_MARK_FD", "QPROF_MARK_PATH=" + file, "PYTHONPATH=" + kPythonDir, debian_python(), "-c",
           "import qprof_mark as q\nassert not q.active()\nassert q.mark('X') is False\n"
           "assert q.mark('Y', sync=False) is False\n"});
  EXPECT_EQ(py.status, 0) << py.err;
  EXPECT_EQ(read_file(file), "precious\n");
}

TEST(MarkPathSafety, ALinkToTheCallersOwnFifoIsRefused) {
  const std::string dir = fresh_dir("link");
  const std::string fifo = dir + "/marks";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  fs::create_symlink(fifo, dir + "/link");
  const Result r = mark_through(dir + "/link");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(drain(reader), "");
  // The FIFO itself, by its own name: delivered (the control).
  const Result direct = mark_through(fifo);
  EXPECT_EQ(direct.status, 0) << direct.err;
  EXPECT_EQ(drain(reader), "QPROF_MARK: hello\n");
  ::close(reader);
}

TEST(MarkPathSafety, ADirectoryOthersMayChangeIsRefused) {
  const std::string dir = fresh_dir("open-dir", fs::perms::all);  // 0777, not sticky
  const std::string fifo = dir + "/marks";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  const Result r = mark_through(fifo);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(drain(reader), "");
  ::close(reader);
}

TEST(MarkPathSafety, AnotherUsersFifoIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the writer as nobody";
  // root's FIFO, writable by all, in a directory nobody may enter: nobody's mark must not reach it.
  const std::string dir = fresh_dir("root-fifo", fs::perms::owner_all | fs::perms::others_exec);
  fs::permissions(temp_dir(), fs::perms::others_exec, fs::perm_options::add);
  const std::string fifo = dir + "/marks";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  ASSERT_EQ(::chmod(fifo.c_str(), 0666), 0);
  const int reader = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  const Result r = mark_through(fifo, {"runuser", "-u", "nobody", "--"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(drain(reader), "");
  ::close(reader);
}

TEST(MarkPathSafety, ASyncReplyGoesOnlyToAHelpersOwnReplyFifo) {
  const std::string dir = fresh_dir("replies");
  // A FIFO of root's own (another program's), and one shaped as a helper's but in a directory
  // others may enter: a request naming either gets no answer; the checkpoint is still taken.
  const std::string secret = fresh_dir("replies/secret") + "/fifo";
  const std::string shaped =
      fresh_dir("replies/qprof-ack.AAAAAA", fs::perms::owner_all | fs::perms::group_all) + "/ack";
  const std::string helpers = fresh_dir("replies/qprof-ack.BBBBBB") + "/ack";
  int readers[3];
  const std::string paths[3] = {secret, shaped, helpers};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(::mkfifo(paths[i].c_str(), 0600), 0);
    readers[i] = ::open(paths[i].c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(readers[i], 0);
  }
  const std::string out = dir + "/sync.dat";
  std::string script;
  for (const std::string& p : paths) script += "echo 'QPROF_SYNC " + p + " at " + p + "' >&$QPROF_MARK_FD; sleep 0.3; ";
  const Result r = run({"timeout", "-s", "KILL", "60", qprof_bin(), "run", "-q", "-o", out, "--", "sh", "-c", script});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(drain(readers[0]), "") << "a root-only FIFO got qprof's reply";
  EXPECT_EQ(drain(readers[1]), "") << "a reply FIFO others may reach got qprof's reply";
  EXPECT_EQ(drain(readers[2]), "ok\n") << "the helper's own reply FIFO (the control)";
  for (int fd : readers) ::close(fd);
  EXPECT_EQ(trace::read_trace(out).markers.size(), 3u);
}

}  // namespace
}  // namespace qprof::test
