// /proc parsers over files recorded from a real kernel (tests/data/proc).
#include "qprof/proc_parse.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace qprof::proc {
namespace {

std::string recorded(const std::string& name) {
  std::ifstream in(std::string(QPROF_TEST_DATA) + "/proc/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ProcParse, StatmResidentPages) {
  EXPECT_EQ(parse_statm_resident_pages(recorded("self.statm")), 3471u);
  EXPECT_EQ(parse_statm_resident_pages(recorded("zombie.statm")), 0u);
  EXPECT_EQ(parse_statm_resident_pages(""), std::nullopt);
  EXPECT_EQ(parse_statm_resident_pages("12"), std::nullopt);
}

TEST(ProcParse, StatWithSpacesAndParenthesesInTheName) {
  const auto st = parse_stat(recorded("weird_comm.stat"));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->state, 'R');
  EXPECT_EQ(st->ppid, 5676);
  EXPECT_EQ(st->utime_ticks, 2u);
  EXPECT_EQ(st->stime_ticks, 1u);
  EXPECT_EQ(st->start_ticks, 82257u);
}

TEST(ProcParse, StatOfAZombie) {
  const auto st = parse_stat(recorded("zombie.stat"));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->state, 'Z');
  EXPECT_EQ(st->ppid, 5620);
  EXPECT_EQ(st->start_ticks, 82045u);
}

TEST(ProcParse, MalformedStat) {
  EXPECT_FALSE(parse_stat("123 (x"));
  EXPECT_FALSE(parse_stat("123 (x) S 1 2"));
  EXPECT_FALSE(parse_stat(""));
}

TEST(ProcParse, LoadavgLastPid) {
  EXPECT_EQ(parse_loadavg_last_pid(recorded("loadavg")), 5613);
  EXPECT_EQ(parse_loadavg_last_pid("0.00 0.00 0.00 1/79 x\n"), std::nullopt);
}

}  // namespace
}  // namespace qprof::proc
