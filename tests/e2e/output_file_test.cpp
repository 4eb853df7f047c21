// SPDX-License-Identifier: Apache-2.0
// Every output goes through common/output_file.hpp: what is at the path decides how it is
// written, nothing but a regular file is ever replaced, a killed export leaves nothing behind,
// and an export checks its inputs before its first byte. Devices are private ones made with
// mknod in a temporary folder (as root; skipped otherwise), never the system's. Each qprof runs
// under an address-space limit and a deadline.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> bounded(std::vector<std::string> args) {
  std::vector<std::string> argv = {"prlimit", as_limit("1073741824"), "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}
Result bounded_qprof(std::vector<std::string> args) { return run(bounded(std::move(args)), "", 60); }

std::string trace() { return data_file("plot/full.dat"); }

std::set<std::string> names(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST(OutputFile, ExportChecksEveryInputBeforeItsFirstByte) {
  // It wrote 25 KB of the first trace's JSON to stdout, then failed on the second.
  const std::string dir = fresh_dir("inputs");
  const Result r = bounded_qprof({"export", trace(), dir + "/missing.dat"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(joined(r.err), "qprof export: " + dir + "/missing.dat: No such file or directory\n");
  write_file(dir + "/out.json", "old");
  EXPECT_EQ(bounded_qprof({"export", trace(), dir, "-o", dir + "/out.json"}).status, 2) << "a folder as a trace";
  EXPECT_EQ(read_file(dir + "/out.json"), "old");
  EXPECT_EQ(names(dir), std::set<std::string>{"out.json"});
  // A trace bad at its end: every format read it through before the first byte to stdout.
  std::ofstream(dir + "/bad.dat") << read_file(trace()) << "MEM not-a-number 1\n";
  for (const char* format : {"perfetto", "csv", "json"}) {
    const Result bad = bounded_qprof({"export", trace(), dir + "/bad.dat", "--format", format});
    EXPECT_EQ(bad.status, 2) << format;
    EXPECT_EQ(bad.out, "") << format;
    EXPECT_NE(joined(bad.err).find(dir + "/bad.dat:"), std::string::npos) << bad.err;
  }
}

TEST(OutputFile, ARegularFileIsReplacedWholeNotRewritten) {
  const std::string dir = fresh_dir("regular");
  const std::string out = dir + "/out.csv";
  write_file(out, "old");
  // A reader that opened the old file keeps reading the old bytes: a new inode took the name.
  std::ifstream reader(out);
  const Result r = bounded_qprof({"export", trace(), "--format", "csv", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(out), bounded_qprof({"export", trace(), "--format", "csv"}).out);
  std::string old;
  EXPECT_TRUE(static_cast<bool>(std::getline(reader, old)));
  EXPECT_EQ(old, "old");
  EXPECT_EQ(names(dir), (std::set<std::string>{"out.csv"}));
  // A file with other names: a new inode would leave them with the old bytes, so it is refused.
  fs::create_hard_link(out, dir + "/second");
  const Result linked = bounded_qprof({"export", trace(), "--format", "json", "-o", out});
  EXPECT_EQ(linked.status, 2) << linked.err;
  EXPECT_NE(joined(linked.err).find("hard links"), std::string::npos) << linked.err;
  EXPECT_EQ(read_file(dir + "/second"), read_file(out));
}

TEST(OutputFile, ALinkIsFollowedAndStaysALink) {
  // The rule: a link to a regular file gets the file replaced; the link is never replaced.
  const std::string dir = fresh_dir("links");
  write_file(dir + "/real.yaml", "old");
  fs::create_symlink("real.yaml", dir + "/link.yaml");
  ASSERT_EQ(bounded_qprof({"report", "--yaml", dir + "/link.yaml", trace()}).status, 0);
  EXPECT_TRUE(fs::is_symlink(dir + "/link.yaml"));
  EXPECT_NE(read_file(dir + "/real.yaml").find("memory_usage:"), std::string::npos);
  // What /dev/stdout is, in a private copy: export wrote a regular file over the link.
  fs::create_symlink("/proc/self/fd/1", dir + "/stdout");
  const Result r = bounded_qprof({"export", trace(), "--format", "csv", "-o", dir + "/stdout"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 7), "time_s,");
  EXPECT_TRUE(fs::is_symlink(dir + "/stdout"));
  EXPECT_EQ(fs::read_symlink(dir + "/stdout"), "/proc/self/fd/1");
}

TEST(OutputFile, AFifoIsWrittenInPlace) {
  const std::string dir = fresh_dir("fifo");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read_file(fifo); });
  const Result r = bounded_qprof({"export", trace(), "--format", "json", "-o", fifo});
  reader.join();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(got, bounded_qprof({"export", trace(), "--format", "json"}).out);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(names(dir), std::set<std::string>{"fifo"});
}

TEST(OutputFile, ADeviceIsWrittenNeverReplaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod of a private device needs root";
  // As root, `report --yaml /dev/full` replaced /dev/full with a regular file.
  const std::string dir = fresh_dir("devices");
  const std::string full = dir + "/full", null = dir + "/null", block = dir + "/block";
  ASSERT_EQ(::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
  ASSERT_EQ(::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(::mknod(block.c_str(), S_IFBLK | 0600, makedev(7, 200)), 0);
  const Result yaml_full = bounded_qprof({"report", "--yaml", full, trace()});
  EXPECT_EQ(yaml_full.status, 2);
  EXPECT_EQ(joined(yaml_full.err), "qprof report: --yaml: cannot write " + full + ": No space left on device\n");
  const Result export_full = bounded_qprof({"export", trace(), "-o", full});
  EXPECT_EQ(export_full.status, 2);
  EXPECT_NE(joined(export_full.err).find(full), std::string::npos) << export_full.err;
  EXPECT_EQ(bounded_qprof({"export", trace(), "-o", null}).status, 0);
  EXPECT_EQ(bounded_qprof({"report", "--yaml", null, trace()}).status, 0);
  const Result export_block = bounded_qprof({"export", trace(), "-o", block});
  EXPECT_EQ(export_block.status, 2);
  EXPECT_EQ(joined(export_block.err),
            "qprof export: " + block +
                " is a block device: qprof writes only a regular file (replaced whole), a FIFO or "
                "a character device\n");
  struct stat st {};
  ASSERT_EQ(::stat(full.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(1, 7));
  ASSERT_EQ(::stat(null.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  ASSERT_EQ(::stat(block.c_str(), &st), 0);
  EXPECT_TRUE(S_ISBLK(st.st_mode));
  EXPECT_EQ(names(dir), (std::set<std::string>{"full", "null", "block"}));
}

TEST(OutputFile, AFolderIsRefusedByEveryWriter) {
  const std::string dir = fresh_dir("folder");
  const std::string folder = dir + "/chart.svg";
  fs::create_directories(folder);
  const std::string refusal = folder + " is a directory: qprof writes only a regular file";
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"export", trace(), "-o", folder},
                                             {"report", "--yaml", folder, trace()},
                                             {"plot", trace(), "-o", folder},
                                             {"plot", trace(), "-o", dir + "/c.svg", "--script", folder},
                                             {"run", "--yaml", folder, "--", "true"}}) {
    const Result r = bounded_qprof(args);
    EXPECT_EQ(r.status, 2) << args[0];
    EXPECT_NE(joined(r.err).find(refusal), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::is_directory(folder));
  EXPECT_EQ(names(dir), std::set<std::string>{"chart.svg"});
}

// A trace big enough that exporting it takes a while: 1.5 M samples, about 40 MB.
std::string big_trace(const std::string& dir) {
  const std::string path = dir + "/big.dat";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("CMDLINE big\n", f);
  for (int i = 0; i < 1'500'000; ++i) std::fprintf(f, "MEM %d.%03d %.4f\n", 100 + i % 900, i % 1000, 1.7e9 + i * 0.01);
  std::fclose(f);
  return path;
}

// True once `pid` holds a file it has not linked in yet (O_TMPFILE: "/dir/#123 (deleted)").
bool writing_unnamed(pid_t pid, const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const std::string target = fs::read_symlink(e.path(), ec).string();
    if (target.starts_with(dir + "/") && target.ends_with("(deleted)")) return true;
  }
  return false;
}

TEST(OutputFile, AKilledExportLeavesNothingBehind) {
  // export -o F left F.partial-PID (38 MB) after SIGTERM or SIGKILL.
  const std::string dir = fresh_dir("killed");
  const std::string big = big_trace(dir);
  for (int sig : {SIGTERM, SIGINT, SIGKILL}) {
    write_file(dir + "/out.json", "old");
    Process p(bounded({"export", big, "-o", dir + "/out.json"}));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!writing_unnamed(p.pid(), dir) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(writing_unnamed(p.pid(), dir)) << "the export was caught while it wrote";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(p.pid(), sig);
    const Result r = p.wait(60);
    EXPECT_EQ(r.status, 128 + sig) << strsignal(sig) << ": " << r.err;
    EXPECT_EQ(names(dir), (std::set<std::string>{"big.dat", "out.json"})) << strsignal(sig);
    EXPECT_EQ(read_file(dir + "/out.json"), "old") << strsignal(sig);
  }
}

}  // namespace
}  // namespace qprof::test
