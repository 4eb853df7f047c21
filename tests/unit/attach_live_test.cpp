// SPDX-License-Identifier: Apache-2.0
// The pieces of qprof attach and of the live line that need no process: a zombie's wait status
// in /proc/PID/stat, the EXIT line's unknown status through the trace format, and the live
// line's text fitted to the terminal's width.
#include <gtest/gtest.h>

#include "qprof/record/attach.hpp"
#include "qprof/record/live_line.hpp"
#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof {
using record::format_live_status;
using record::LiveStatus;
using record::zombie_wait_status;
using trace::ExitInfo;
using trace::Trace;
using trace::TraceMeta;

namespace {

// A zombie's stat line (Linux 6.x layout, 52 fields), exit_code last.
std::string stat_line(char state, int exit_code) {
  std::string s = "4242 (a (weird) name) ";
  s += state;
  for (int field = 4; field <= 51; ++field) s += " " + std::to_string(field);
  return s + " " + std::to_string(exit_code) + "\n";
}

TEST(AttachStat, ZombieWaitStatusIsField52) {
  EXPECT_EQ(zombie_wait_status(stat_line('Z', 7 << 8)), 7 << 8);
  EXPECT_EQ(zombie_wait_status(stat_line('Z', 9)), 9);               // killed by SIGKILL
  EXPECT_FALSE(zombie_wait_status(stat_line('S', 0)).has_value());   // not exited: no status
  EXPECT_FALSE(zombie_wait_status("4242 (x) Z 1 2 3").has_value());  // an old kernel's short line
  EXPECT_FALSE(zombie_wait_status("garbage").has_value());
}

TEST(AttachTrace, UnknownStatusSurvivesTheTraceFormat) {
  const test::RemovedTempFile file("attach_exit.dat");
  const std::string& path = file.path();
  {
    trace::Writer w(path);
    TraceMeta meta;
    meta.start = 1000;
    w.header(meta);
    w.mem(1000.5, 1 << 20);
    w.exit(ExitInfo{1001, 0, 0, true, false});
    ASSERT_TRUE(w.flush());
  }
  const Trace t = trace::read_trace(path);
  ASSERT_TRUE(t.exit.has_value());
  EXPECT_FALSE(t.exit->status_known);
  EXPECT_TRUE(t.exit->timed_out);
}

TEST(LiveLine, TextFitsTheWidthAndIsPrintable) {
  LiveStatus s;
  s.elapsed = 12.34;
  s.rss = Bytes{300} << 20;
  s.peak_rss = Bytes{512} << 20;
  s.gpu = Bytes{2} << 30;
  s.cpu_percent = 97.6;
  const std::string stage = "Calibration \x1b[31mStart\xe2\x9c\x93";
  s.stage = stage;
  const std::string wide = format_live_status(s, 200);
  EXPECT_EQ(wide,
            "qprof 12.3 s | RSS 300.0 MiB (peak 512.0 MiB) | GPU 2.00 GiB | CPU 98 % | Calibration ?[31mStart???");
  // With a footprint reading, it comes first and Σ RSS is named for what it is.
  LiveStatus f = s;
  f.footprint = Bytes{100} << 20;
  f.peak_footprint = Bytes{200} << 20;
  EXPECT_EQ(format_live_status(f, 200).substr(0, 80),
            "qprof 12.3 s | footprint 100.0 MiB (peak 200.0 MiB) | RSS sum 300.0 MiB (peak 51");
  // Narrower: parts are taken by rank (elapsed, memory, the stage, GPU, CPU, Σ RSS beside a
  // footprint); one that does not fit is left out whole, never a figure cut in two, and later
  // ones that fit are still shown. The stage's name alone may be cut.
  EXPECT_EQ(format_live_status(f, 80),
            "qprof 12.3 s | footprint 100.0 MiB (peak 200.0 MiB) | Calibration ?[31mStart???");
  EXPECT_EQ(format_live_status(f, 60), "qprof 12.3 s | footprint 100.0 MiB (peak 200.0 MiB) | Calib");
  EXPECT_EQ(format_live_status(s, 80),
            "qprof 12.3 s | RSS 300.0 MiB (peak 512.0 MiB) | CPU 98 % | Calibration ?[31mSta");
  EXPECT_EQ(format_live_status(s, 40), "qprof 12.3 s | Calibration ?[31mStart??");
  EXPECT_EQ(format_live_status(s, 8), "qprof 1");
  for (int cols = 8; cols <= 200; ++cols) {
    const std::string t = format_live_status(f, cols);
    EXPECT_LE(t.size(), static_cast<std::size_t>(cols - 1)) << cols;
    EXPECT_TRUE(t.starts_with("qprof 1")) << t;
    // Every part shown is one of the wide line's, whole; the stage (last) may be cut.
    std::size_t from = 0;
    for (std::size_t bar = t.find(" | "); from < t.size(); bar = t.find(" | ", from)) {
      const std::string part = t.substr(from, bar == std::string::npos ? std::string::npos : bar - from);
      const bool last = bar == std::string::npos;
      EXPECT_TRUE(format_live_status(f, 200).find(part) != std::string::npos && (last || part.size() > 3)) << t;
      from = last ? t.size() : bar + 3;
    }
  }
}

TEST(LiveLine, APartThatDoesNotFitLeavesTheLaterOnesThatDo) {
  // At 80 columns the Σ RSS part does not fit: CPU and the stage after it do.
  LiveStatus s;
  s.elapsed = 3.1;
  s.rss = s.peak_rss = Bytes{67} << 20;
  s.footprint = Bytes{64} << 20;
  s.peak_footprint = Bytes{64} << 20;
  s.cpu_percent = 10;
  s.stage = "Grow Start";
  EXPECT_EQ(format_live_status(s, 80), "qprof 3.1 s | footprint 64.0 MiB (peak 64.0 MiB) | CPU 10 % | Grow Start");
  EXPECT_EQ(
      format_live_status(s, 120),
      "qprof 3.1 s | footprint 64.0 MiB (peak 64.0 MiB) | RSS sum 67.0 MiB (peak 67.0 MiB) | CPU 10 % | Grow Start");
  // Without the stage and with no room for the footprint: GPU and CPU still shown.
  s.stage = {};
  s.gpu = Bytes{2} << 30;
  EXPECT_EQ(format_live_status(s, 40), "qprof 3.1 s | GPU 2.00 GiB | CPU 10 %");
  // The stage ranks before GPU and CPU (it is shown last): it takes the room of GPU, and CPU,
  // which still fits, is shown.
  s.stage = "Calibration";
  EXPECT_EQ(format_live_status(s, 40), "qprof 3.1 s | CPU 10 % | Calibration");
}

}  // namespace
}  // namespace qprof
