// SPDX-License-Identifier: Apache-2.0
// --watch-dir end to end: a job that writes into a watched directory, a large tree within the
// walks' CPU budget, a directory that appears late and one that cannot be read.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <sstream>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "e2e_util.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using analysis::dir_growths;
using trace::Trace;

namespace {

namespace fs = std::filesystem;

// qprof bounded in time and address space, as every test runs it.
Result bounded_qprof(const std::vector<std::string>& args, int timeout_s = 120) {
  std::vector<std::string> argv{
      "timeout", "-s", "KILL", std::to_string(timeout_s), "prlimit", as_limit("1073741824"), "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", timeout_s + 10);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(RunWatch, FiftyMiBWrittenAndDeletedIsTheGrowthInTraceSummaryYamlAndPeak) {
  const std::string dir = temp_dir() + "/watch50/cache";
  fs::create_directories(dir);
  std::ofstream(dir + "/already") << std::string(4000, 'a');  // the start size, not growth
  const std::string out = temp_dir() + "/watch50.dat", yaml = temp_dir() + "/watch50.yaml";
  // 50 MiB held for 2.5 s: at least two walks (every 1 s) see it whole.
  const std::string job = "dd if=/dev/zero of=" + dir + "/blob bs=1048576 count=50 status=none && sleep 2.5 && rm " +
                          dir + "/blob && sleep 1.3";
  const Result r = bounded_qprof({"run", "-v", "--watch-dir", dir, "--yaml", yaml, "-o", out, "--", "sh", "-c", job});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.dirs.size(), 1u);
  EXPECT_EQ(t.dirs[0].path, dir);
  const auto g = dir_growths(t);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].start, 4000u);
  EXPECT_NEAR(mib(g[0].growth), 50.0, 2.5);
  EXPECT_EQ(g[0].last, 4000u) << "the blob was deleted before the end";
  EXPECT_GE(g[0].allocated_peak, Bytes{50} << 20);
  EXPECT_GT(g[0].fs_free_min, 0u);
  EXPECT_GE(g[0].samples, 4u);
  // The summary: the directory's growth, the walks and their cost.
  EXPECT_NE(joined(r.err).find("watched dir"), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("grew by 50.0 MiB"), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("dir walks"), std::string::npos) << r.err;
  // Quark's key, read back by PyYAML.
  const Result py = run({debian_python(), "-c",
                         "import sys, yaml\n"
                         "d = yaml.safe_load(open(sys.argv[1]))\n"
                         "print(repr(d['peak_cache_dir_disk_usage_mb']))\n"
                         "w = d['qprof']['watched_dirs'][0]\n"
                         "print(w['path'], w['growth_mb'], w['metric'])\n",
                         yaml});
  ASSERT_EQ(py.status, 0) << py.err;
  std::istringstream lines(py.out);
  double key = 0;
  lines >> key;
  EXPECT_NEAR(key, 50.0, 2.5) << py.out;
  EXPECT_NE(py.out.find(dir + " 50.0 dir:cache"), std::string::npos) << py.out;
  // --metric dir:NAME in peak: the largest size, start included.
  const Result peak = bounded_qprof({"peak", "--metric", "dir:cache", "--unit", "B", out});
  ASSERT_EQ(peak.status, 0) << peak.err;
  EXPECT_NE(peak.out.find(std::to_string((Bytes{50} << 20) + 4000)), std::string::npos) << peak.out;
  // report: the directory table; compare: its columns.
  const Result rep = bounded_qprof({"report", "--format", "json", out});
  ASSERT_EQ(rep.status, 0) << rep.err;
  EXPECT_NE(rep.out.find("\"watched_dirs\""), std::string::npos) << rep.out;
  EXPECT_NE(rep.out.find("\"fs_free_min_bytes\""), std::string::npos) << rep.out;
  // In text, into a pipe: 80 columns, in MiB as the directories are (the file system's free
  // space, in GiB, had put the whole table in GiB), the columns left out said.
  const Result text = bounded_qprof({"report", out});
  ASSERT_EQ(text.status, 0) << text.err;
  const std::string table = text.out.substr(text.out.find("Watched directories"));
  EXPECT_NE(table.find("peak MiB"), std::string::npos) << table;
  EXPECT_NE(table.find("left out to fit 80 columns: allocated peak, fs free min"), std::string::npos) << table;
  std::istringstream table_lines(table);
  for (std::string line; std::getline(table_lines, line);) EXPECT_LE(line.size(), 80u) << line;
  const Result cmp = bounded_qprof({"compare", "--format", "csv", out, out});
  ASSERT_EQ(cmp.status, 0) << cmp.err;
  EXPECT_NE(cmp.out.find("growth_dir:cache"), std::string::npos) << cmp.out;
}

TEST(RunWatch, ADirectoryThatAppearsLaterIsWatchedFromThen) {
  const std::string dir = temp_dir() + "/later/made_by_the_job";
  fs::create_directories(temp_dir() + "/later");
  const std::string out = temp_dir() + "/later.dat";
  const std::string job =
      "sleep 1.2 && mkdir " + dir + " && dd if=/dev/zero of=" + dir + "/f bs=1048576 count=8 status=none && sleep 2.2";
  const Result r = bounded_qprof({"run", "-q", "--watch-dir", dir, "-o", out, "--", "sh", "-c", job});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(joined(r.err).find("cannot read"), std::string::npos) << "absent is not unreadable: " << r.err;
  const Trace t = trace::read_trace(out);
  const auto g = dir_growths(t);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].start, 0u) << "absent at the start: empty, as Quark counts it";
  EXPECT_EQ(g[0].growth, Bytes{8} << 20);
}

TEST(RunWatch, AnUnreadableDirectoryIsAWarningOnceAndTheRunSucceeds) {
  const bool root = ::geteuid() == 0;
  const std::string base = temp_dir() + "/unreadable";
  fs::create_directories(base + "/watched/secret");
  std::ofstream(base + "/watched/secret/f") << "hidden";
  std::ofstream(base + "/watched/open") << std::string(300, 'o');
  const std::string out = base + "/unreadable.dat";
  Result r;
  if (root) {
    // root reads everything: qprof runs as nobody, the secret is root's alone.
    fs::permissions(base, fs::perms::all);
    fs::permissions(base + "/watched", fs::perms::all);
    fs::permissions(base + "/watched/open", fs::perms::all);
    fs::permissions(base + "/watched/secret", fs::perms::owner_all);
    fs::permissions(temp_dir(), fs::perms::others_exec, fs::perm_options::add);
    const std::string qprof_copy = base + "/qprof";
    fs::copy_file(qprof_bin(), qprof_copy, fs::copy_options::overwrite_existing);
    r = run({"timeout",
             "-s",
             "KILL",
             "60",
             "setpriv",
             "--reuid=65534",
             "--regid=65534",
             "--clear-groups",
             "prlimit",
             as_limit("1073741824"),
             "--",
             qprof_copy,
             "run",
             "--watch-dir",
             base + "/watched",
             "--watch-interval",
             "0.1",
             "-o",
             out,
             "--",
             "sleep",
             "0.6"});
  } else {
    fs::permissions(base + "/watched/secret", fs::perms::none);
    r = bounded_qprof(
        {"run", "--watch-dir", base + "/watched", "--watch-interval", "0.1", "-o", out, "--", "sleep", "0.6"});
    fs::permissions(base + "/watched/secret", fs::perms::owner_all);
  }
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count_of(joined(r.err), "cannot read " + base + "/watched/secret"), 1u) << "said once: " << r.err;
  const Trace t = trace::read_trace(out);
  std::size_t notes = 0;
  for (const std::string& n : t.notes) notes += n.find("/watched/secret") != std::string::npos ? 1 : 0;
  EXPECT_EQ(notes, 1u);
  const auto g = dir_growths(t);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].start, 300u) << "what can be read is counted";
}

}  // namespace
}  // namespace qprof::test
