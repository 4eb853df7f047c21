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
  // Narrower: whole parts are left out from the end, never a figure cut in two; the stage's name
  // alone may be cut.
  EXPECT_EQ(format_live_status(f, 80), "qprof 12.3 s | footprint 100.0 MiB (peak 200.0 MiB)");
  EXPECT_EQ(format_live_status(s, 80),
            "qprof 12.3 s | RSS 300.0 MiB (peak 512.0 MiB) | GPU 2.00 GiB | CPU 98 % | Calib");
  EXPECT_EQ(format_live_status(s, 40), "qprof 12.3 s");
  EXPECT_EQ(format_live_status(s, 8), "qprof 1");
  for (int cols : {8, 20, 40, 60, 80, 100}) {
    const std::string t = format_live_status(s, cols);
    EXPECT_LE(t.size(), static_cast<std::size_t>(cols - 1));
    EXPECT_EQ(wide.substr(0, t.size()), t);
  }
}

}  // namespace
}  // namespace qprof
