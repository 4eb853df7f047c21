// SPDX-License-Identifier: Apache-2.0
// A stage's figures at its End marker: the last reading of the marker's moment, read whole or
// reduced alike, and not an earlier one when the job ends right after the marker.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "qprof/analysis/bottleneck.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof {
namespace {
using analysis::Metric;
using analysis::StageStats;
using trace::Trace;

constexpr Bytes MiB = 1 << 20;

std::string header() {
  return "QPROF 1 version=0.1.0 interval=0.010000 host=vm root_pid=1 start=100.000000 metric=all "
         "cgroup=/sys/fs/cgroup/memory/qprof-1\n"
         "CMDLINE sh stages.sh\n";
}

// Stage S holds 64 MiB at its start and 104 MiB when it prints its End marker. The marker's
// checkpoint reads the charge twice at the marker's moment: its sample (104 MiB), then its stats
// pass, after the job had begun to free (64 MiB). `tail` is what follows the marker.
std::string stage_text(const std::string& end_readings, const std::string& tail) {
  return header() +
         "MEM 68.000000 100.1000\n"
         "CGROUP 100.100000 67108864 67108864\n"
         "MARK 100.100000 S Start\n"
         "MEM 108.000000 100.3000\n"
         "CGROUP 100.300000 109051904 109051904\n" +
         end_readings +
         "MARK 100.400000 S End\n"
         "FUNC S 68.0000 100.1000 " +
         (end_readings.find("MEM 108") != std::string::npos ? "108.0000" : "68.0000") + " 100.4000 0\n" + tail;
}

Trace stage_trace(const std::string& end_readings, const std::string& tail) {
  return trace::read_trace_text(stage_text(end_readings, tail), "stages.dat");
}

const std::string kJobGoesOn =
    "MEM 108.000000 100.9000\n"
    "CGROUP 100.900000 109051904 109051904\n"
    "EXIT 101.000000 status=0 signal=0 timed_out=0\n";
const std::string kJobExits =
    "MEM 10.000000 100.4050\n"
    "CGROUP 100.405000 4194304 109051904\n"
    "EXIT 100.408000 status=0 signal=0 timed_out=0\n";

// The marker's checkpoint reads the charge twice at its moment (its sample, then its stats pass):
// the stage's end is the last of them, read whole or reduced alike (the reduced reader keeps the
// latest record at or before each marker). A job that frees right after the marker can be read
// freeing there: a synchronous checkpoint is what makes the end exact (stage_end_exit_test).
TEST(StageEnd, OfTwoReadingsAtTheMarkerTheLastIsTheStagesEndReadWholeOrReduced) {
  const std::string text = stage_text(
      "MEM 108.000000 100.4000\n"
      "CGROUP 100.400000 109051904 109051904\n"
      "CGROUP 100.400000 67108864 109051904 67108864 0 0\n",
      kJobGoesOn);
  const test::RemovedTempFile file("stage_end.dat");
  std::ofstream(file.path()) << text;
  const std::optional<Trace> reduced = trace::read_trace_reduced(file.path(), analysis::kTimeSlack);
  ASSERT_TRUE(reduced.has_value());
  for (const Trace& t : {trace::read_trace_text(text, "stages.dat"), *reduced}) {
    const std::vector<StageStats> stats = analysis::stage_stats(t, Metric::footprint);
    ASSERT_EQ(stats.size(), 1u);
    ASSERT_TRUE(stats[0].at_start && stats[0].at_end);
    EXPECT_EQ(*stats[0].at_start, 64 * MiB);
    EXPECT_EQ(*stats[0].at_end, 64 * MiB) << "the last reading of the marker's moment";
  }
}

// A fall read at the End marker is the stage's own, whether the job goes on after it or exits
// right after: workers that held 40 MiB and left before their parent wrote the marker are gone at
// the end. The stage's end is the marker's reading, not the highest of those before it, and the
// bottleneck table's growth is the stage table's delta.
TEST(StageEnd, AFallBeforeTheEndMarkerIsTheStagesWhetherTheJobExitsOrGoesOn) {
  for (const std::string& tail : {kJobExits, kJobGoesOn}) {
    const Trace t = stage_trace(
        "MEM 68.000000 100.4000\n"
        "CGROUP 100.400000 67108864 109051904\n",
        tail);
    const std::vector<StageStats> footprint = analysis::stage_stats(t, Metric::footprint);
    ASSERT_TRUE(footprint[0].at_end);
    EXPECT_EQ(*footprint[0].at_end, 64 * MiB);
    const auto b = analysis::stage_bottlenecks(t);
    ASSERT_TRUE(b[0].memory_growth);
    EXPECT_EQ(*b[0].memory_growth, 0) << "as the stage table's delta";
  }
}

}  // namespace
}  // namespace qprof
