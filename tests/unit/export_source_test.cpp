// SPDX-License-Identifier: Apache-2.0
// The CSV and JSON exports read a trace twice, its columns then its rows: both passes read the same
// bytes. A trace still being written grew between them, and a line kind the first pass never saw
// (a first PSS or CPU line) had no column: its value was written before the row's values (a vector
// at index SIZE_MAX, the heap corrupted).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "table.hpp"
#include "temp_files.hpp"
#include "trace_source.hpp"

namespace qprof::exports {
namespace {

TEST(ExportSource, BothPassesReadTheBytesTheTraceHadWhenOpened) {
  const test::RemovedTempFile file("live.dat");
  const std::string& path = file.path();
  std::ofstream(path) << "QPROF 1 version=0.1.0 interval=0.010000 host=h root_pid=1 start=100.000000 metric=rss\n"
                         "MEM 10.000000 100.0000\nMEM 20.000000 100.0100\n";
  Result<TraceSource> source = TraceSource::open(path);
  ASSERT_TRUE(source) << source.failure().message;
  ColumnSet set;
  ASSERT_TRUE(set.scan(*source));
  // The run goes on: its first PSS and CPU lines, and more samples, come after the column scan.
  std::ofstream(path, std::ios::app) << "PSS 100.015000 15728640 14680064\nCPU 100.020000 0.5\n"
                                        "MEM 30.000000 100.0200\n";
  std::vector<Row> rows;
  ASSERT_TRUE(stream_rows(*source, set, Unit::MiB, [&](const Row& r) { rows.push_back(r); }));
  ASSERT_EQ(rows.size(), 2u) << "the samples the column scan saw";
  EXPECT_EQ(rows[1].values.size(), 1u) << "RSS alone: the columns the scan found";
  EXPECT_EQ(rows[1].values[0], 20.0);
}

// Lines of one series written out of their time order (a checkpoint's sample and the schedule's):
// a row holds the latest by time at or before it, of one time the last written.
TEST(ExportRows, TheLatestLineByTimeWinsAtEachRow) {
  const test::RemovedTempFile file("order.dat");
  std::ofstream(file.path())
      << "QPROF 1 version=0.1.0 interval=0.010000 host=h root_pid=1 start=100.000000 metric=rss\n"
         "MEM 10.000000 100.0000\nCGROUP 100.000030 3145728 3145728\n"
         "CGROUP 100.000010 1048576 1048576\nMEM 20.000000 100.0100\n"
         "CGROUP 100.005000 2097152 2097152\nMEM 30.000000 100.0200\n";
  Result<TraceSource> source = TraceSource::open(file.path());
  ASSERT_TRUE(source);
  ColumnSet set;
  ASSERT_TRUE(set.scan(*source));
  std::vector<double> charge;
  ASSERT_TRUE(
      stream_rows(*source, set, Unit::MiB, [&](const Row& r) { charge.push_back(r.values.back().value_or(-1)); }));
  EXPECT_EQ(charge, (std::vector<double>{3, 2, 2})) << "the 1 MiB line, of an earlier time, came last";
}

}  // namespace
}  // namespace qprof::exports
