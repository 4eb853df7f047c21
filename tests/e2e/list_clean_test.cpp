// SPDX-License-Identifier: Apache-2.0
// qprof list and qprof clean on a directory of fixtures: default names only, oldest first, and
// nothing but those files ever removed.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <thread>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// list as wide as a wide terminal: every column, the commands whole (at 80 columns the
// default names leave out START and cut the commands: tests/e2e/width_test.cpp).
Result wide_list(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"env", "COLUMNS=200", qprof_bin(), "list"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// mprof's from 2025, two of qprof's from 2026, and files that are not traces of a default name.
std::string fixture_dir() {
  const std::string dir = fresh_dir("traces");  // empty for each test, in one process or many
  fs::copy_file(data_file("mprof/func.dat"), dir + "/mprofile_20250101120000.dat");
  fs::copy_file(data_file("plot/full.dat"), dir + "/qprof_20260102120000.dat");
  fs::copy_file(data_file("report/minmax.dat"), dir + "/qprof_20260101120000.dat");
  fs::copy_file(data_file("report/minmax.dat"), dir + "/keep-me.dat");
  fs::copy_file(data_file("report/minmax.dat"), dir + "/mprofile_2025.dat");
  return dir;
}

TEST(List, DefaultNamedTracesOldestFirstWithTheirFacts) {
  const std::string dir = fixture_dir();
  const Result r = wide_list({"--metric", "rss", "--dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  auto l = lines(r.out);
  ASSERT_EQ(l.size(), 4u) << r.out;  // the header first
  EXPECT_TRUE(l[1].starts_with("0  mprofile_20250101120000.dat")) << l[1];
  EXPECT_TRUE(l[2].starts_with("1  qprof_20260101120000.dat")) << l[2];
  EXPECT_TRUE(l[3].starts_with("2  qprof_20260102120000.dat")) << l[3];
  l.erase(l.begin());
  // full.dat: 12.01 s (its EXIT), peak 5.40 GiB, its command last.
  EXPECT_NE(l[2].find(" 12 s "), std::string::npos) << l[2];
  EXPECT_NE(l[2].find("5.40 GiB"), std::string::npos) << l[2];
  EXPECT_TRUE(l[2].ends_with("python3 quantize.py --calib-method minmax --model llama-7b")) << l[2];
}

TEST(List, UnreadableTraceIsReportedAndTheOthersListed) {
  const std::string dir = fixture_dir();
  fs::copy_file(data_file("plot/malformed.dat"), dir + "/qprof_20260103120000.dat");
  const Result r = wide_list({"--metric", "rss", "--dir", dir});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.out).size(), 4u);  // the header and three traces
  EXPECT_NE(joined(r.err).find("qprof_20260103120000.dat:5:"), std::string::npos) << r.err;
}

// A trace cut short is listed, and said to be incomplete as every command that reads it says so.
TEST(List, ATraceCutShortIsSaidIncomplete) {
  const std::string dir = fixture_dir();
  std::string text = read_file(data_file("report/quark.dat"));
  text.resize(text.rfind("\nEXIT ") + 1);  // as a trace whose qprof was killed
  write_file(dir + "/qprof_20260104120000.dat", text);
  const Result r = wide_list({"--dir", dir});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\n3  qprof_20260104120000.dat"), std::string::npos) << r.out;  // listed, last
  EXPECT_NE(joined(r.err).find("qprof_20260104120000.dat: incomplete trace: no end record (EXIT)"), std::string::npos)
      << r.err;
  EXPECT_EQ(joined(r.err).find("qprof_20260101"), std::string::npos) << "whole traces are not said: " << r.err;
}

// The header names the columns, and every column starts at the same place on every line though
// qprof_ names (date, milliseconds, PID) are longer than mprofile_ ones.
TEST(List, HeaderAndAlignedColumnsWhenNamesMix) {
  const std::string dir = fixture_dir();
  fs::copy_file(data_file("report/minmax.dat"), dir + "/qprof_20260105120000.123_4242.dat");
  const Result r = wide_list({"--metric", "rss", "--dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto l = lines(r.out);
  ASSERT_EQ(l.size(), 5u) << r.out;
  EXPECT_TRUE(l[0].starts_with("#  NAME ")) << l[0];
  for (const char* column : {"START", "DURATION", "PEAK RSS", "COMMAND"})
    EXPECT_NE(l[0].find(column), std::string::npos) << column;
  // The date column: at the header's START on every line.
  const std::size_t start = l[0].find("START");
  for (std::size_t i = 1; i < l.size(); ++i) {
    ASSERT_GT(l[i].size(), start + 4) << l[i];
    EXPECT_TRUE(l[i].substr(start, 2) == "20" || l[i][start] == '-') << "misaligned:\n" << r.out;
    EXPECT_EQ(l[i][start - 1], ' ') << "misaligned:\n" << r.out;
  }
}

// Traces named with -o are listed when given as files, as they were given.
TEST(List, TakesFilesAsWellAsADirectory) {
  const std::string dir = fixture_dir();
  const Result r = wide_list({"--metric", "rss", dir + "/keep-me.dat", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto l = lines(r.out);
  ASSERT_EQ(l.size(), 5u) << r.out;
  EXPECT_TRUE(l[1].starts_with("0  " + dir + "/keep-me.dat ")) << l[1];
  EXPECT_NE(l[2].find("mprofile_20250101120000.dat"), std::string::npos) << l[2];
  EXPECT_EQ(qprof({"list", "--dir", dir, dir}).status, 2);
}

// A directory of traces named by the user printed nothing, without a word.
TEST(List, NothingFoundSaysWhichNamesItLooksFor) {
  const std::string dir = temp_dir() + "/user_named";
  fs::create_directories(dir);
  fs::copy_file(data_file("report/minmax.dat"), dir + "/baseline.dat");
  const Result r = qprof({"list", "--metric", "rss", "--dir", dir});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(joined(r.err).find("no traces in " + dir), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("qprof_*.dat"), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("mprofile_*.dat"), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("qprof list DIR/*.dat"), std::string::npos) << r.err;
}

TEST(Clean, DryRunKeepAndAge) {
  const std::string dir = fixture_dir();
  Result r = qprof({"clean", "--dir", dir, "--dry-run"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(lines(r.out).size(), 3u) << r.out;
  EXPECT_TRUE(fs::exists(dir + "/mprofile_20250101120000.dat"));

  r = qprof({"clean", "--dir", dir, "--keep", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/mprofile_20250101120000.dat"));
  EXPECT_TRUE(fs::exists(dir + "/qprof_20260102120000.dat")) << "the newest is kept";
  r = qprof({"clean", "--dir", dir});
  EXPECT_FALSE(fs::exists(dir + "/qprof_20260102120000.dat"));
  EXPECT_TRUE(fs::exists(dir + "/keep-me.dat")) << "not a default name: never touched";
  EXPECT_TRUE(fs::exists(dir + "/mprofile_2025.dat"));
  EXPECT_EQ(qprof({"clean", "--dir", dir, "--older-than", "soon"}).status, 2);
  // A bare number removes nothing by a guess at its unit: refused, with the forms to write instead.
  r = qprof({"clean", "--dir", dir, "--older-than", "5"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(joined(r.err).find("--older-than 5: give the age with its unit (5s, 5min, 5d)"), std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(dir + "/mprofile_2025.dat"));
  // `m` is a minute for an interval; for an age it could be months.
  r = qprof({"clean", "--dir", dir, "--older-than", "6m"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(joined(r.err).find("--older-than 6m: m could be minutes or months: write 6min for minutes"),
            std::string::npos)
      << r.err;
  // Decided on the parse: blanks around change nothing (they had let "5 " and "6m " through).
  for (const char* blank : {"5 ", " 6m "}) {
    r = qprof({"clean", "--dir", dir, "--older-than", blank});
    EXPECT_EQ(r.status, 2) << blank << ": " << r.out;
  }
  r = qprof({"clean", "--dir", dir, "--older-than", "1mo"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(joined(r.err).find("expected an age with its unit: 90s, 30min, 12h, 7d, 2w"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("seconds (0.5)"), std::string::npos) << "a bare number is not offered\n" << r.err;
  EXPECT_TRUE(fs::exists(dir + "/mprofile_2025.dat"));
  // Nothing left to remove: said, not silence that reads as done.
  r = qprof({"clean", "--dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "nothing to remove in " + dir + ": no trace of a default name\n");
}

// The default name of a run started `hours` ago, as qprof run writes it (local time).
std::string started_hours_ago(int hours) {
  const std::time_t t = std::time(nullptr) - hours * 3600;
  std::tm local{};
  ::localtime_r(&t, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &local);
  return std::string("qprof_") + stamp + ".123_4567.dat";
}

// --older-than and --keep go by one time, the run's start that the name holds (qprof list's order):
// a copy written just now of a run from three days ago is three days old, and a recent run's trace
// last written long ago is recent. A default name whose time is no date is kept, and said so.
TEST(Clean, AgeAndKeepBothGoByTheStartInTheName) {
  const std::string dir = fresh_dir("ages");
  const std::string old_copy = dir + "/" + started_hours_ago(72), recent = dir + "/" + started_hours_ago(1),
                    newest = dir + "/" + started_hours_ago(0), no_date = dir + "/mprofile_19991399999999.dat";
  for (const std::string& p : {old_copy, recent, newest, no_date}) fs::copy_file(data_file("report/minmax.dat"), p);
  // Written just now (a copy) and long ago (touched back): neither changes what the names say.
  const auto long_ago = fs::file_time_type::clock::now() - std::chrono::hours(24 * 365);
  fs::last_write_time(recent, long_ago);
  fs::last_write_time(newest, long_ago);

  Result r = qprof({"clean", "--dir", dir, "--older-than", "2d", "--dry-run"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "kept " + no_date + ": its name holds no date to tell its age\nwould remove " + old_copy + "\n");
  r = qprof({"clean", "--dir", dir, "--keep", "2", "--dry-run"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(lines(r.out).size(), 2u) << r.out;
  EXPECT_NE(r.out.find("would remove " + old_copy + "\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(recent), std::string::npos) << "the two newest by name are kept: " << r.out;
  EXPECT_EQ(r.out.find(newest), std::string::npos) << r.out;

  fs::rename(no_date, no_date + ".away");
  r = qprof({"clean", "--dir", dir, "--older-than", "2000d", "--dry-run"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "nothing to remove in " + dir + ": 3 traces, none older than 2000d\n");
  fs::rename(no_date + ".away", no_date);
  r = qprof({"clean", "--dir", dir, "--older-than", "30min", "--keep", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(old_copy));
  EXPECT_FALSE(fs::exists(recent)) << "an hour old by its name, whatever its time of last write";
  EXPECT_TRUE(fs::exists(newest));
  EXPECT_TRUE(fs::exists(no_date));
}

// --keep is a count: digits within 64 bits, whatever the spelling of the out-of-range number.
TEST(Clean, KeepIsAWholeNumberWithinItsRange) {
  fs::remove_all(temp_dir() + "/traces");  // the fixture of a test before, in this process
  const std::string dir = fixture_dir();
  for (const char* bad : {"-1", "99999999999999999999", "1e20", "1.5", "+3"}) {
    const Result r = qprof({"clean", "--dir", dir, "--keep", bad, "--dry-run"});
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
    EXPECT_NE(joined(r.err).find("a whole number of traces"), std::string::npos) << bad << ": " << r.err;
  }
  for (const char* good : {"0", "3", "18446744073709551615"}) {
    const Result r = qprof({"clean", "--dir", dir, "--keep", good, "--dry-run"});
    EXPECT_EQ(r.status, 0) << good << ": " << r.err;
  }
  EXPECT_TRUE(fs::exists(dir + "/mprofile_20250101120000.dat")) << "--dry-run removes nothing";
}

// A live run's trace holds its lock: clean keeps it and says so, and removes it once the run ended.
TEST(Clean, KeepsTheTraceOfALiveRun) {
  const std::string dir = temp_dir() + "/live";
  fs::create_directories(dir);
  Process run_in_dir({"sh", "-c", "cd '" + dir + "' && exec '" + qprof_bin() + "' run -q -- sleep 4"});
  std::string trace;
  for (int i = 0; i < 200 && trace.empty(); ++i) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().filename().string().rfind("qprof_", 0) == 0 && fs::file_size(e.path()) > 0) trace = e.path();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(trace.empty()) << "the run wrote no default-named trace";
  Result r = qprof({"clean", "--dir", dir});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "kept " + trace + ": a qprof run is still writing it\n");
  EXPECT_TRUE(fs::exists(trace));
  r = qprof({"clean", "--dir", dir, "--dry-run"});
  EXPECT_EQ(r.out, "kept " + trace + ": a qprof run is still writing it\n");
  const Result ran = run_in_dir.wait(60);
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_TRUE(fs::exists(trace)) << "the run's trace is whole at its end";
  r = qprof({"clean", "--dir", dir});
  EXPECT_EQ(r.out, "removed " + trace + "\n");
  EXPECT_FALSE(fs::exists(trace));
}

}  // namespace
}  // namespace qprof::test
