// SPDX-License-Identifier: Apache-2.0
// /proc parsers over files recorded from a real kernel (tests/data/proc).
#include "qprof/common/proc_parse.hpp"

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

TEST(ProcParse, StatChildrenTimes) {
  const auto st = parse_stat("1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 150 60 700 80 20 0 1 0 5 0 0\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->utime_ticks, 150u);
  EXPECT_EQ(st->stime_ticks, 60u);
  EXPECT_EQ(st->cutime_ticks, 700u);
  EXPECT_EQ(st->cstime_ticks, 80u);
  EXPECT_EQ(st->start_ticks, 5u);
  // minflt cminflt majflt cmajflt are 1 2 3 4; num_threads 1
  EXPECT_EQ(st->minflt, 1u);
  EXPECT_EQ(st->majflt, 3u);
  EXPECT_EQ(st->num_threads, 1u);
}

TEST(ProcParse, Schedstat) {
  const auto st = parse_schedstat("152203 105798 2\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->run_ns, 152203u);
  EXPECT_EQ(st->wait_ns, 105798u);
  EXPECT_EQ(st->runs, 2u);
  EXPECT_EQ(parse_schedstat("152203 105798\n"), std::nullopt);
  EXPECT_EQ(parse_schedstat(""), std::nullopt);
}

TEST(ProcParse, Io) {
  const auto io = parse_io(recorded("self.io"));
  ASSERT_TRUE(io);
  EXPECT_EQ(io->rchar, 1685852u);
  EXPECT_EQ(io->wchar, 1711u);
  EXPECT_EQ(io->read_bytes, 24576u);
  EXPECT_EQ(io->write_bytes, 8192u);
  // A zombie's counters still read: what it wrote before it exited.
  const auto zombie = parse_io(recorded("zombie.io"));
  ASSERT_TRUE(zombie);
  EXPECT_EQ(zombie->write_bytes, 4194304u);
  EXPECT_FALSE(parse_io("rchar: 1\nwchar: 2\n"));
}

TEST(ProcParse, VmHwm) {
  EXPECT_EQ(parse_status_vmhwm(recorded("self.status")), 44348u * 1024);
  EXPECT_EQ(parse_status_vmhwm(recorded("zombie.status")), std::nullopt);
}

TEST(ProcParse, SmapsRollup) {
  const auto r = parse_smaps_rollup(recorded("self.smaps_rollup"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rss, 44348u * 1024);
  EXPECT_EQ(r->pss, 42461u * 1024);
  EXPECT_EQ(r->uss, (4556u + 37612u) * 1024);
  EXPECT_TRUE(r->has_split);
  EXPECT_EQ(r->pss_unreclaimable, (37612u + 0u) * 1024) << "Pss_Anon + Pss_Shmem";
  EXPECT_EQ(r->anon, 37612u * 1024);
  EXPECT_EQ(r->pss_anon, 37612u * 1024);
  EXPECT_EQ(r->pss_shmem, 0u);
  const auto shm = parse_smaps_rollup("Rss: 80 kB\nPss: 60 kB\nPss_Anon: 10 kB\nPss_Shmem: 40 kB\n");
  ASSERT_TRUE(shm);
  EXPECT_EQ(shm->pss_shmem, 40u * 1024);
  EXPECT_EQ(shm->pss_unreclaimable, 50u * 1024);
  const auto merged = parse_smaps_rollup("Rss: 80 kB\nPss: 60 kB\nPss_Anon: 30 kB\nAnonymous: 64 kB\nKSM: 16 kB\n");
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged->anon, 48u * 1024) << "KSM's pages may be shared outside the tree";
  EXPECT_FALSE(parse_smaps_rollup(""));
  // Kernels before 5.9 do not split PSS: no unreclaimable part rather than a false 0.
  const auto old = parse_smaps_rollup("Rss: 8 kB\nPss: 6 kB\nPrivate_Dirty: 4 kB\n");
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->has_split);
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
