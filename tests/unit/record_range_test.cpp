// SPDX-License-Identifier: Apache-2.0
// What no writer produces is refused by every reader, with FILE:LINE: times outside Unix time as
// a trace holds it (1970 to 2286), memory above 1 EiB, markers out of time order, a FUNC bracket
// that ends before it starts. Through the whole reader, the peak reader and both MEM fast paths.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof::trace {
namespace {

struct Hostile {
  std::string line;    // the second line of a trace whose other lines are sound
  std::string reason;  // what the refusal says after FILE:LINE
};

const std::string kHead = "QPROF 1 start=1700000000.000000\n";
const std::string kTail = "MEM 2.000000 1700000002.0000\nEXIT 1700000003.000000 status=0 signal=0 timed_out=0\n";

std::vector<Hostile> hostile_lines() {
  return {
      {"EXIT 9e99 status=0 signal=0 timed_out=0", "EXIT: time 9e+99 is after 2286"},
      {"MARK 9e99 Load Start", "MARK: time 9e+99 is after 2286"},
      {"MEM 1.000000 99999999999.0000", "MEM: time 1e+11 is after 2286"},  // the fast path's form
      {"MEM 1.0 1e12", "MEM: time 1e+12 is after 2286"},                   // the general path
      {"MEM 1.0 -5", "MEM: time -5 is before 1970"},
      {"CGROUP 9e99 1 1", "CGROUP: time 9e+99 is after 2286"},
      {"OOM 9e99 pid=7", "OOM: time 9e+99 is after 2286"},
      {"MEM 1e300 1700000001.0", "MEM: memory (MiB) is more than 1 EiB"},
      {"MEM 1099511627777.000000 1700000001.0000", "MEM: memory (MiB) is more than 1 EiB"},
      {"PEAK cgroup 18446744073709551615", "PEAK: bytes is more than 1 EiB"},
      {"PSS 1700000001.0 18446744073709551615 1", "PSS: PSS bytes is more than 1 EiB"},
      {"FUNC f 1.0 1700000001.5 1.0 1700000001.0 0", "FUNC: the end time is before the start time"},
  };
}

std::string text_with(const std::string& line) { return kHead + line + "\n" + kTail; }

void expect_refused(const std::string& text, std::size_t line, const std::string& reason, const std::string& what) {
  for (int reader = 0; reader < 2; ++reader) {
    test::RemovedTempFile file("record_range.dat");
    { std::ofstream(file.path()) << text; }
    try {
      if (reader == 0) {
        read_trace(file.path());
      } else {
        read_trace_peaks(file.path());
      }
      ADD_FAILURE() << what << ": read by reader " << reader;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), line) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << what << ": " << e.what();
    }
  }
}

TEST(RecordRange, WhatNoWriterProducesIsRefusedAtItsLine) {
  for (const Hostile& h : hostile_lines()) expect_refused(text_with(h.line), 2, h.reason, h.line);
}

TEST(RecordRange, TheHeadersStartTooIsATime) {
  expect_refused("QPROF 1 start=9e99\n" + kTail, 1, "QPROF: start 9e+99 is after 2286", "start=9e99");
  try {  // the kind named once, as a field's refusal names it
    trace::read_trace_text("QPROF 1 start=9e99\n" + kTail, "h.dat");
    ADD_FAILURE() << "read";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()).find("QPROF: QPROF:"), std::string::npos) << e.what();
  }
}

TEST(RecordRange, AMarkerTimedBeforeTheOneAboveItIsRefused) {
  // A stage whose End was written with a time before its Start's: export would give it a
  // negative duration, report an end before its start.
  const std::string text = kHead + "MEM 1.000000 1700000000.5000\nMARK 1700000001.800000 Load Start\n" +
                           "MARK 1700000001.000000 Load End\n" + kTail;
  expect_refused(text, 4, "MARK: time 1700000001.000000 is 0.8 s before the marker above it", "End before Start");
}

TEST(RecordRange, TheEdgesOfTheRangeAreRead) {
  // 1 EiB exactly, the first second of 1970, the last whole one before 1e10 s; markers of one
  // moment, and a FUNC bracket of no length.
  const Trace t = read_trace_text(
      "QPROF 1 start=0\nMEM 1099511627776 0\nMARK 0 A Start\nMARK 0 A End\nMEM 0.5 9999999999.0\n"
      "PEAK cgroup 1152921504606846976\nFUNC f 1.0 5.0 1.0 5.0 0\n",
      "edges.dat");
  ASSERT_EQ(t.mem.size(), 2u);
  EXPECT_EQ(t.mem[0].bytes, Bytes{1} << 60);
  EXPECT_EQ(t.mem[1].t, 9999999999.0);
  EXPECT_EQ(t.peaks.at("cgroup"), Bytes{1} << 60);
  EXPECT_EQ(t.stages.size(), 1u);
}

// The fast path looks at a 64-byte window from the start of a record: runs of digits that fill
// it (found by the fuzzer: under UBSan, a count of trailing zeros taken of zero) go to the
// general path and read as it reads them.
TEST(Reader, RunsOfDigitsToTheEndOfTheFastPathsWindow) {
  const std::string ones(80, '1');
  const std::string text =
      "MEM 1." + ones + " 2\nMEM 2.5 4." + ones + "\nMEM 1.0 5.0\n" + "NOTE " + std::string(70, 'x') + "\n";
  const Trace t = read_trace_text(text, "f.dat");
  ASSERT_EQ(t.mem.size(), 3u);
  EXPECT_EQ(t.mem[0].bytes, from_mib(std::strtod(("1." + ones).c_str(), nullptr)));
  EXPECT_EQ(t.mem[1].t, std::strtod(("4." + ones).c_str(), nullptr));
  EXPECT_EQ(t.mem[2].bytes, Bytes{1} << 20);
  // 80 digits of MiB, and of seconds: past what a trace holds, refused in either window.
  for (const std::string& line : {"MEM " + ones + " 3\n", "MEM 1.0 " + ones + "\n"}) {
    try {
      read_trace_text("MEM 1.0 2.0\n" + line + std::string(70, '\n'), "f.dat");
      ADD_FAILURE() << line << " was read";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), 2u) << e.what();
    }
  }
}

}  // namespace
}  // namespace qprof::trace
