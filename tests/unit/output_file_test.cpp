// SPDX-License-Identifier: Apache-2.0
// OutputFile (common/output_file.hpp): the one way every writer writes an output. A regular file
// is replaced whole, a link is followed and stays a link, a FIFO, a character device and a
// descriptor are written in place, anything else is refused, and nothing is left behind.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "bounded_child.hpp"
#include "qprof/common/fd_ostream.hpp"
#include "qprof/common/output_file.hpp"
#include "temp_files.hpp"

namespace qprof {
namespace {

namespace fs = std::filesystem;
using test::whole_file;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        test::unit_temp_file("output-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return dir_ + "/" + name; }
  std::set<std::string> names() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.insert(e.path().filename().string());
    return out;
  }
  std::string dir_;
};

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// An OutputFile that must open; null (and the test failed) where it does not.
std::unique_ptr<OutputFile> open_ok(const std::string& path,
                                    OutputFile::Temporary temporary = OutputFile::Temporary::unnamed_if_possible) {
  Result<std::unique_ptr<OutputFile>> out = OutputFile::open(path, temporary);
  if (!out) {
    ADD_FAILURE() << out.failure().message;
    return nullptr;
  }
  return std::move(*out);
}

// The message of a step that must fail; empty (and the test failed) where it worked.
std::string failure_of(const Result<void>& r) {
  if (r) {
    ADD_FAILURE() << "it worked";
    return "";
  }
  EXPECT_EQ(r.failure().status, 2);
  return r.failure().message;
}

TEST_F(OutputFileTest, ARegularFileIsReplacedWholeKeepingItsPermissions) {
  const std::string path = at("out.yaml");
  write_text(path, "old, and longer than the new\n");
  ::chmod(path.c_str(), 0600);
  const int old_inode = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // replaced, never rewritten in place
  ASSERT_GE(old_inode, 0);
  {
    const auto out = open_ok(path);
    ASSERT_TRUE(out);
    EXPECT_TRUE(out->replaces());
    EXPECT_TRUE(out->write("new\n"));
    EXPECT_EQ(whole_file(path), "old, and longer than the new\n") << "nothing shows before commit()";
    EXPECT_TRUE(out->commit());
  }
  EXPECT_EQ(whole_file(path), "new\n");
  char old[64] = {};
  EXPECT_EQ(::pread(old_inode, old, sizeof old - 1, 0), 29);
  EXPECT_STREQ(old, "old, and longer than the new\n");
  ::close(old_inode);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(names(), (std::set<std::string>{"out.yaml"}));
  // Other names of the file would keep the old bytes under a new inode: refused, nothing changed.
  fs::create_hard_link(path, at("second"));
  const Result<std::unique_ptr<OutputFile>> linked = OutputFile::open(path);
  ASSERT_FALSE(linked);
  EXPECT_EQ(
      linked.failure().message,
      "cannot write " + path + ": it has 2 hard links, which a replacement would break; remove it or write elsewhere");
  EXPECT_EQ(whole_file(at("second")), "new\n");
  EXPECT_TRUE(write_output(at("fresh"), "x"));
  EXPECT_EQ(whole_file(at("fresh")), "x");
}

TEST_F(OutputFileTest, WithoutCommitNothingIsReplacedAndNothingLeft) {
  write_text(at("keep"), "kept");
  for (auto temporary : {OutputFile::Temporary::unnamed_if_possible, OutputFile::Temporary::named}) {
    EXPECT_TRUE(open_ok(at("keep"), temporary)->write("lost"));
    EXPECT_TRUE(open_ok(at("never"), temporary)->write("lost"));
    EXPECT_EQ(whole_file(at("keep")), "kept");
    EXPECT_EQ(names(), std::set<std::string>{"keep"});
  }
}

TEST_F(OutputFileTest, TheNamedTemporaryIsReplacedAndRemovedBySigterm) {
  // What a file system without O_TMPFILE gets: a named temporary.
  write_text(at("out"), "old");
  {
    const auto out = open_ok(at("out"), OutputFile::Temporary::named);
    ASSERT_TRUE(out);
    EXPECT_TRUE(out->write("new"));
    EXPECT_EQ(names().size(), 2u) << "the temporary beside it";
    EXPECT_TRUE(out->commit());
  }
  EXPECT_EQ(whole_file(at("out")), "new");
  EXPECT_EQ(names(), std::set<std::string>{"out"});
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    const int status = test::in_bounded_child([&] {
      const auto out = open_ok(at("out"), OutputFile::Temporary::named);
      if (!out || !out->write("half")) return false;
      ::raise(sig);
      return false;
    });
    ASSERT_TRUE(WIFSIGNALED(status)) << "the signal still kills: " << status;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_EQ(names(), std::set<std::string>{"out"}) << strsignal(sig);
    EXPECT_EQ(whole_file(at("out")), "new");
  }
}

TEST_F(OutputFileTest, ALinkIsFollowedAndStaysALink) {
  write_text(at("target"), "old");
  fs::create_symlink("target", at("link"));
  fs::create_symlink("link", at("link2"));
  EXPECT_TRUE(write_output(at("link2"), "new"));
  EXPECT_TRUE(fs::is_symlink(at("link2")));
  EXPECT_TRUE(fs::is_symlink(at("link")));
  EXPECT_EQ(whole_file(at("target")), "new");
  // A dangling link: the file it names is created, as a shell's `>` does.
  fs::create_symlink("made", at("dangling"));
  EXPECT_TRUE(write_output(at("dangling"), "made"));
  EXPECT_TRUE(fs::is_symlink(at("dangling")));
  EXPECT_EQ(whole_file(at("made")), "made");
  fs::create_symlink("loop", at("loop"));
  EXPECT_EQ(failure_of(write_output(at("loop"), "x")), "cannot write " + at("loop") + ": " + std::strerror(ELOOP));
}

TEST_F(OutputFileTest, AFifoIsWrittenInPlace) {
  const std::string fifo = at("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(check_output(fifo)) << "checked without waiting for a reader";
  std::string got;
  std::thread reader([&] { got = whole_file(fifo); });
  {
    const auto out = open_ok(fifo);
    ASSERT_TRUE(out);
    EXPECT_FALSE(out->replaces());
    EXPECT_TRUE(out->write("through the pipe"));
    EXPECT_TRUE(out->commit());
  }
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(names(), std::set<std::string>{"fifo"});
}

TEST_F(OutputFileTest, ACharacterDeviceIsWrittenNeverReplaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod of a private device needs root";
  const std::string null = at("null"), full = at("full");
  ASSERT_EQ(::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
  EXPECT_TRUE(write_output(null, "gone"));
  EXPECT_TRUE(fs::is_character_file(null));
  const std::string why = failure_of(write_output(full, "no room"));
  EXPECT_NE(why.find(full), std::string::npos) << why;
  EXPECT_TRUE(fs::is_character_file(full)) << "the device is still a device";
}

TEST_F(OutputFileTest, ADescriptorIsWrittenWhereItStands) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  fs::create_symlink("/proc/self/fd/" + std::to_string(pipe_fds[1]), at("to-pipe"));
  EXPECT_TRUE(write_output("/dev/fd/" + std::to_string(pipe_fds[1]), "one "));
  EXPECT_TRUE(write_output(at("to-pipe"), "two"));
  ::close(pipe_fds[1]);
  char buf[32] = {};
  EXPECT_EQ(::read(pipe_fds[0], buf, sizeof buf), 7);
  ::close(pipe_fds[0]);
  EXPECT_STREQ(buf, "one two");
  EXPECT_TRUE(fs::is_symlink(at("to-pipe")));
  EXPECT_FALSE(write_output("/dev/fd/987", "x")) << "a descriptor that is not open";
}

TEST_F(OutputFileTest, AnythingElseIsRefusedInOneSentence) {
  const std::string sock = at("sock");
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  std::vector<std::pair<std::string, std::string>> refused{{dir_, "a directory"}, {sock, "a socket"}};
  if (::geteuid() == 0) {
    ASSERT_EQ(::mknod(at("block").c_str(), S_IFBLK | 0600, makedev(7, 200)), 0);
    refused.emplace_back(at("block"), "a block device");
  }
  for (const auto& [path, what] : refused) {
    for (auto attempt : {0, 1}) {
      const std::string why = failure_of(attempt == 0 ? write_output(path, "x") : check_output(path));
      EXPECT_EQ(why.find(path + " is " + what + ":"), 0u) << why;
    }
  }
  ::close(s);
  EXPECT_TRUE(fs::is_socket(sock));
  EXPECT_FALSE(check_output(at("no/such/dir/x")));
  EXPECT_TRUE(check_output(at("new")));
  EXPECT_FALSE(fs::exists(at("new"))) << "checking writes nothing";
}

TEST_F(OutputFileTest, FdOstreamWritesEverythingAndSaysWhyNot) {
  {
    const auto out = open_ok(at("streamed"));
    ASSERT_TRUE(out);
    FdOstream stream(out->fd());
    for (int i = 0; i < 100000; ++i) stream << i << '\n';  // past its 64 KiB buffer
    ASSERT_TRUE(stream.flush());
    EXPECT_EQ(stream.error(), 0);
    EXPECT_TRUE(out->commit());
  }
  const std::string text = whole_file(at("streamed"));
  EXPECT_EQ(text.substr(0, 4), "0\n1\n");
  EXPECT_EQ(text.substr(text.size() - 6), "99999\n");
  const int read_only = ::open(at("streamed").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(read_only, 0);
  FdOstream bad(read_only);
  bad << "x";
  EXPECT_FALSE(bad.flush());
  EXPECT_EQ(bad.error(), EBADF);
  ::close(read_only);
}

}  // namespace
}  // namespace qprof
