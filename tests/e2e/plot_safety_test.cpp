// SPDX-License-Identifier: Apache-2.0
// qprof plot cannot hang and leaves nothing behind: absurd times refused before gnuplot sees
// them, a gnuplot that never finishes killed after --render-timeout, gnuplot killed with qprof,
// no temporary file left on any path. Each qprof runs inside an address-space limit and a timeout.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kAsLimit = as_limit("536870912");  // 512 MiB

std::string test_dir() {
  const std::string dir = temp_dir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::create_directories(dir);
  return dir;
}

void write(const std::string& path, const std::string& text, bool executable = false) {
  {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  if (executable) ::chmod(path.c_str(), 0755);
}

std::vector<std::string> limited(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"prlimit", kAsLimit, "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// Everything in `dir` but the files named.
std::vector<std::string> leftovers(const std::string& dir, const std::vector<std::string>& expected) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (std::find(expected.begin(), expected.end(), name) == expected.end()) out.push_back(name);
  }
  return out;
}

// Alive: neither gone nor a zombie waiting for a reaper.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

TEST(PlotSafety, AnAbsurdTimeIsRefusedWithItsLineBeforeGnuplot) {
  const std::string dir = test_dir();
  // A time past any Unix time a trace holds is the reader's refusal (every command's); one within
  // it but centuries from the start is plot's own (a time axis gnuplot would loop over).
  write(dir + "/bomb.dat", "MEM 1.0 1.0\nMEM 2.0 2.0\nMEM 3 5e9\nMEM 1.0 4.0\n");
  const auto start = Clock::now();
  const Result r = run(limited({"plot", dir + "/bomb.dat", "-o", dir + "/bomb.png"}), "", 60);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(joined(r.err).find(dir + "/bomb.dat:3: time 5000000000 is 158 years after the start"), std::string::npos)
      << r.err;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(leftovers(dir, {"bomb.dat"}), std::vector<std::string>{});
  // The same in qprof's own form (the reader's MEM fast path), and in a file of 4 MiB or more
  // (read on a thread of its own while the chart is reduced): still the record's line.
  std::string fast = "MEM 1.000000 1700000000.0000\nMEM 2.000000 17000000000.0000\n";
  std::string big;
  for (int i = 0; i < 150000; ++i) big += "MEM 1.000000 1700000000.0000\n";
  big += "MEM 2.000000 17000000000.0000\n";
  for (int i = 0; i < 4; ++i) fast += "MEM 1.000000 1700000001.0000\n", big += "MEM 1.000000 1700000001.0000\n";
  ASSERT_GE(big.size(), 4u << 20);
  write(dir + "/fast.dat", fast);
  write(dir + "/big.dat", big);
  for (const auto& [name, line] : {std::pair<std::string, std::string>{"fast.dat", ":2: "}, {"big.dat", ":150001: "}}) {
    const Result f = run(limited({"plot", dir + "/" + name, "-o", dir + "/f.png"}), "", 60);
    EXPECT_EQ(f.status, 2) << f.err;
    EXPECT_NE(joined(f.err).find(dir + "/" + name + line + "MEM: time 1.7e+10 is after 2286"), std::string::npos)
        << f.err;
  }
  EXPECT_EQ(leftovers(dir, {"bomb.dat", "fast.dat", "big.dat"}), std::vector<std::string>{});
  // A window as absurd is a usage error too.
  write(dir + "/ok.dat", "MEM 1.0 1.0\nMEM 2.0 2.0\n");
  const Result w = run(limited({"plot", dir + "/ok.dat", "-o", dir + "/ok.png", "--window", "0,1e16"}), "", 60);
  EXPECT_EQ(w.status, 2) << w.err;
}

// A long trace is parsed on a thread of its own, which hands what it read over in batches: one
// of long lines (1024 NOTE lines of 128 KiB, 128 MiB) must not be held whole between the two
// threads. The largest resident size of qprof and its gnuplot (RUSAGE_CHILDREN of a Python
// parent) stays far below the file's size: 142 MB before batches were bounded by their text,
// 24 MB after.
TEST(PlotSafety, ALongTraceOfLongLinesIsNeverHeldWhole) {
  if (sanitized())
    GTEST_SKIP() << "an AddressSanitizer qprof's resident size is its shadow and quarantine, not its own";
  const std::string dir = test_dir();
  {
    std::ofstream out(dir + "/notes.dat", std::ios::binary);
    out << "MEM 1.000000 1700000000.0000\n";
    const std::string note = "NOTE " + std::string(128 << 10, 'x') + "\n";
    for (int i = 0; i < 1024; ++i) out << note;
    out << "MEM 2.000000 1700000001.0000\n";
  }
  std::vector<std::string> argv{"/usr/bin/python3", "-c",
                                "import resource, subprocess, sys\n"
                                "status = subprocess.run(sys.argv[1:]).returncode\n"
                                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
                                "sys.exit(status)\n"};
  const std::vector<std::string> plot = limited({"plot", dir + "/notes.dat", "-o", dir + "/notes.png"});
  argv.insert(argv.end(), plot.begin(), plot.end());
  const Result r = run(argv, "", 120);
  ASSERT_EQ(r.status, 0) << r.err;
  const long max_rss_kib = std::stol(r.out);
  EXPECT_LT(max_rss_kib, 64 << 10) << "KiB";
  fs::remove(dir + "/notes.dat");
}

// A "gnuplot" that reads its script and then never finishes, as gnuplot looping on an axis does.
std::string hanging_gnuplot(const std::string& dir) {
  const std::string path = dir + "/gnuplot-hangs";
  write(path, "#!/bin/sh\necho $$ > '" + dir + "/gnuplot.pid'\ncat > /dev/null\nexec sleep 1000\n", true);
  return path;
}

pid_t read_pid(const std::string& path) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(path);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

TEST(PlotSafety, AGnuplotThatNeverFinishesIsKilledAfterTheRenderTimeout) {
  const std::string dir = test_dir();
  write(dir + "/ok.dat", "MEM 1.0 1.0\nMEM 2.0 2.0\n");
  const auto start = Clock::now();
  const Result r = run(limited({"plot", dir + "/ok.dat", "-o", dir + "/ok.png", "--gnuplot", hanging_gnuplot(dir),
                                "--render-timeout", "1"}),
                       "", 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(joined(r.err).find("gnuplot did not finish the chart within 1 s and was stopped"), std::string::npos)
      << r.err;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(30));
  const pid_t gp = read_pid(dir + "/gnuplot.pid");
  ASSERT_GT(gp, 0);
  EXPECT_FALSE(alive(gp));
  EXPECT_EQ(leftovers(dir, {"ok.dat", "gnuplot-hangs", "gnuplot.pid"}), std::vector<std::string>{});
}

TEST(PlotSafety, GnuplotDiesWithQprofAndNoTemporaryFileIsLeft) {
  const std::string dir = test_dir();
  write(dir + "/ok.dat", "MEM 1.0 1.0\nMEM 2.0 2.0\n");
  Process p(limited({"plot", dir + "/ok.dat", "-o", dir + "/ok.png", "--gnuplot", hanging_gnuplot(dir)}));
  const pid_t gp = read_pid(dir + "/gnuplot.pid");
  ASSERT_GT(gp, 0);
  EXPECT_TRUE(alive(gp));
  ::kill(p.pid(), SIGKILL);  // prlimit execs qprof: the same process
  EXPECT_EQ(p.wait(30).status, 128 + SIGKILL);
  bool gone = false;
  for (int i = 0; i < 250 && !gone; ++i) {
    gone = !alive(gp);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "gnuplot " << gp << " outlived qprof";
  if (!gone) ::kill(gp, SIGKILL);
  EXPECT_EQ(leftovers(dir, {"ok.dat", "gnuplot-hangs", "gnuplot.pid"}), std::vector<std::string>{});
}

TEST(PlotSafety, SigtermWhileGnuplotDrawsLeavesNothingBehind) {
  const std::string dir = test_dir();
  write(dir + "/ok.dat", "MEM 1.0 1.0\nMEM 2.0 2.0\n");
  Process p(limited({"plot", dir + "/ok.dat", "-o", dir + "/ok.png", "--gnuplot", hanging_gnuplot(dir)}));
  const pid_t gp = read_pid(dir + "/gnuplot.pid");
  ASSERT_GT(gp, 0);
  ::kill(p.pid(), SIGTERM);
  EXPECT_EQ(p.wait(30).status, 128 + SIGTERM);
  for (int i = 0; i < 250 && alive(gp); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(gp));
  EXPECT_EQ(leftovers(dir, {"ok.dat", "gnuplot-hangs", "gnuplot.pid"}), std::vector<std::string>{});
}

// --sum's temporary trace of the job is gone from $TMPDIR as soon as it is made: a SIGINT while
// gnuplot draws leaves nothing there.
TEST(PlotSafety, SigintDuringASumLeavesNoTemporaryTrace) {
  const std::string dir = test_dir();
  fs::create_directories(dir + "/tmp");
  write(dir + "/a.dat", "QPROF 1 start=100\nMEM 100.0 1.0\nMEM 101.0 2.0\n");
  write(dir + "/b.dat", "QPROF 1 start=100\nMEM 100.0 3.0\nMEM 101.0 4.0\n");
  std::vector<std::string> argv{"env", "TMPDIR=" + dir + "/tmp"};
  for (const std::string& a : limited({"plot", "--sum", dir + "/a.dat", dir + "/b.dat", "-o", dir + "/sum.png",
                                       "--gnuplot", hanging_gnuplot(dir)}))
    argv.push_back(a);
  Process p(argv);
  ASSERT_GT(read_pid(dir + "/gnuplot.pid"), 0);
  ::kill(p.pid(), SIGINT);
  EXPECT_EQ(p.wait(30).status, 128 + SIGINT);
  EXPECT_EQ(leftovers(dir + "/tmp", {}), std::vector<std::string>{});
}

// gnuplot never runs the user's ~/.gnuplot before qprof's script: every chart starts the same,
// and nothing planted there runs.
TEST(PlotSafety, TheUsersGnuplotStartupFileIsNotRun) {
  const std::string dir = test_dir();
  fs::create_directories(dir + "/home");
  write(dir + "/home/.gnuplot", "system \"touch " + dir + "/ran\"\n");
  write(dir + "/ok.dat", "MEM 1.0 1.0\nMEM 2.0 2.0\n");
  std::vector<std::string> argv{"env", "HOME=" + dir + "/home"};
  for (const std::string& a : limited({"plot", dir + "/ok.dat", "-o", dir + "/ok.svg"})) argv.push_back(a);
  const Result r = run(argv, "", 60);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/ran")) << "~/.gnuplot was run";
}

}  // namespace
}  // namespace qprof::test
