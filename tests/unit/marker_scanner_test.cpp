// SPDX-License-Identifier: Apache-2.0
// The stderr scanner: marker lines found wherever they are, whatever the pieces the stream comes in.
#include "qprof/record/marker_scanner.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace qprof {
using record::kMarkerLabelLimit;
using record::kMarkerLineLimit;
using record::MarkerMatcher;
using record::MarkerScanner;

namespace {

using Labels = std::vector<std::string>;

// The labels `text` yields when it comes in pieces of `piece` bytes (0: one piece), then ends.
Labels scan(const std::string& text, std::size_t piece = 0, MarkerMatcher matcher = {}, std::uint64_t* cut = nullptr,
            std::uint64_t* too_long = nullptr) {
  Labels labels;
  MarkerScanner scanner(std::move(matcher), [&](const std::string& l) { labels.push_back(l); });
  const std::size_t step = piece == 0 ? text.size() : piece;
  for (std::size_t at = 0; at < text.size(); at += step) {
    scanner.feed(text.data() + at, std::min(step, text.size() - at));
  }
  scanner.finish();
  if (cut) *cut = scanner.labels_cut();
  if (too_long) *too_long = scanner.lines_too_long();
  return labels;
}

MarkerMatcher regex(const char* pattern) { return *MarkerMatcher::compile(pattern); }

// As a pipe hands them over: one byte, a few bytes, the page of a terminal, a pipe's capacity.
constexpr std::size_t kPieces[] = {0, 1, 7, 4096, 65536};

TEST(MarkerScanner, AMarkerAfterALongLineStartIsFoundWhereverItIs) {
  for (const std::size_t before : {4000, 4080, 4100, 100000}) {
    const std::string label = "L" + std::to_string(before);
    const std::string text = std::string(before, '0') + " QPROF_MARK: " + label + "\nafter\n";
    for (const std::size_t piece : kPieces) {
      std::uint64_t cut = 9;
      EXPECT_EQ(scan(text, piece, {}, &cut), Labels{label}) << before << " in pieces of " << piece;
      EXPECT_EQ(cut, 0u);
    }
  }
}

TEST(MarkerScanner, AStageStartAfter4080BytesPairsWithItsEnd) {
  const std::string text = std::string(4080, '0') + " QPROF_MARK: Load Start\nQPROF_MARK: Load End\n";
  for (const std::size_t piece : kPieces) EXPECT_EQ(scan(text, piece), (Labels{"Load Start", "Load End"})) << piece;
}

TEST(MarkerScanner, ACarriageReturnEndsALine) {
  std::string text = "QPROF_MARK: T Start\n";
  for (int i = 0; i < 300; ++i) text += "\rprogress " + std::to_string(i) + "/300 |" + std::string(i / 10, '#') + "|";
  text += "\rQPROF_MARK: T End\n";
  for (const std::size_t piece : kPieces) EXPECT_EQ(scan(text, piece), (Labels{"T Start", "T End"})) << piece;
  // What follows a '\r' is a line of its own: the label ends there.
  EXPECT_EQ(scan("QPROF_MARK: A Start\r 10%|#  |\r\n"), Labels{"A Start"});
  EXPECT_EQ(scan("QPROF_MARK: A\r\nQPROF_MARK: B\r\n"), (Labels{"A", "B"}));
}

TEST(MarkerScanner, AMarkerSplitAnywhereAcrossReadsIsFound) {
  const std::string text = "log line\nINFO:root:QPROF_MARK: Split Start\r\nQPROF_MARK: Split End";
  const Labels want{"Split Start", "Split End"};
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    Labels labels;
    MarkerScanner scanner({}, [&](const std::string& l) { labels.push_back(l); });
    scanner.feed(text.data(), cut);
    scanner.feed(text.data() + cut, text.size() - cut);
    scanner.finish();
    EXPECT_EQ(labels, want) << "cut at " << cut;
  }
  // The marker text in pieces of 3, 3 and 5 bytes, each in a read of its own.
  EXPECT_EQ(scan("QPROF_MARK: x\n", 3), Labels{"x"});
  // A partial marker text at a line's end is no beginning for the next line's.
  EXPECT_EQ(scan("QPROF_M\nARK: no\n", 8), Labels{});
}

TEST(MarkerScanner, TheLastLineWithoutItsEndIsScannedAtTheEnd) {
  Labels labels;
  MarkerScanner scanner({}, [&](const std::string& l) { labels.push_back(l); });
  const std::string text = "QPROF_MARK: A Start\nQPROF_MARK: A End";
  scanner.feed(text.data(), text.size());
  EXPECT_EQ(labels, Labels{"A Start"});  // the line may go on
  scanner.finish();
  EXPECT_EQ(labels, (Labels{"A Start", "A End"}));
  // --marker-regex too.
  EXPECT_EQ(scan("[s] A Start\n[s] A End", 0, regex("^\\[s\\] (.*)$")), (Labels{"A Start", "A End"}));
}

TEST(MarkerScanner, ALabelLongerThanItsBoundIsCutThereAndCounted) {
  std::uint64_t cut = 0;
  const std::string longest(kMarkerLabelLimit, 'a');
  EXPECT_EQ(scan("QPROF_MARK:   " + longest + "\n", 100, {}, &cut), Labels{longest});
  EXPECT_EQ(cut, 0u);  // its leading blanks are not part of it
  EXPECT_EQ(scan("QPROF_MARK: " + longest + "bcd\nQPROF_MARK: next\n", 100, {}, &cut), (Labels{longest, "next"}));
  EXPECT_EQ(cut, 1u);
  EXPECT_EQ(scan("QPROF_MARK: " + std::string(100000, 'b') + "\n", 4096, {}, &cut),
            Labels{std::string(kMarkerLabelLimit, 'b')});
  EXPECT_EQ(cut, 1u);
  EXPECT_EQ(scan("[s] " + std::string(5000, 'c') + "\n", 0, regex("^\\[s\\] (.*)$"), &cut),
            Labels{std::string(kMarkerLabelLimit, 'c')});
  EXPECT_EQ(cut, 1u);
}

TEST(MarkerScanner, ARegexSeesLinesEndedByCarriageReturnsAndCrLfAsOneEnd) {
  const MarkerMatcher any = regex("^(.*)$");
  for (const std::size_t piece : kPieces) {
    EXPECT_EQ(scan("a\r\nb\rc\n\nd", piece, any), (Labels{"a", "b", "c", "", "d"})) << piece;
  }
  const MarkerMatcher stage = regex("^\\[stage\\] (.*)$");
  std::string text = "[stage] W Start\n";
  for (int i = 0; i < 100; ++i) text += "\r" + std::to_string(i) + "%";
  text += "\r[stage] W End\n";
  for (const std::size_t piece : kPieces) EXPECT_EQ(scan(text, piece, stage), (Labels{"W Start", "W End"})) << piece;
}

TEST(MarkerScanner, ARegexLineTooLongToHoldIsCountedNotSearched) {
  const MarkerMatcher stage = regex("\\[stage\\] (.*)$");
  std::uint64_t too_long = 0;
  const std::string fits = std::string(kMarkerLineLimit - 20, 'x') + "[stage] In\n";
  EXPECT_EQ(scan(fits, 4096, stage, nullptr, &too_long), Labels{"In"});
  EXPECT_EQ(too_long, 0u);
  const std::string over = std::string(100000, 'x') + "[stage] Out\n[stage] Next\n";
  EXPECT_EQ(scan(over, 4096, stage, nullptr, &too_long), Labels{"Next"});
  EXPECT_EQ(too_long, 1u);
}

TEST(MarkerScanner, ShortLinesGiveWhatTheMatcherGivesForEachLine) {
  const MarkerMatcher by_prefix;
  const std::vector<std::string> lines = {"QPROF_MARK: a",   "INFO:root:QPROF_MARK: b  ",
                                          "QPROF_MARKER: c", "x QPROF_MARK: d QPROF_MARK: e",
                                          "QPROF_MARK:",     "no marker",
                                          "QQPROF_MARK: f",  "\tQPROF_MARK:\tg\t"};
  std::string text;
  Labels want;
  for (const std::string& line : lines) {
    text += line + "\n";
    if (const auto label = by_prefix.match(line)) want.push_back(*label);
  }
  for (const std::size_t piece : kPieces) EXPECT_EQ(scan(text, piece), want) << piece;
}

}  // namespace
}  // namespace qprof
