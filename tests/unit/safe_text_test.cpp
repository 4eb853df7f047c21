// SPDX-License-Identifier: Apache-2.0
// Untrusted text made safe for each reader: terminals, YAML (yaml-cpp reading back what qprof
// wrote), CSV for spreadsheets; and the bounded trace reader.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "qprof/common/safe_text.hpp"
#include "qprof/report/quark_yaml.hpp"
#include "qprof/trace/format.hpp"

namespace qprof {
using trace::Trace;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(SafeText, Utf8SequencesAsTheStandardDefinesThem) {
  EXPECT_EQ(utf8_sequence_length("a", 0), 1u);
  EXPECT_EQ(utf8_sequence_length("\xC3\xA9", 0), 2u);          // é
  EXPECT_EQ(utf8_sequence_length("\xE2\x82\xAC", 0), 3u);      // €
  EXPECT_EQ(utf8_sequence_length("\xF0\x9F\x98\x80", 0), 4u);  // 😀
  EXPECT_EQ(utf8_sequence_length("\xC0\xAF", 0), 0u);          // overlong '/'
  EXPECT_EQ(utf8_sequence_length("\xE0\x80\xAF", 0), 0u);      // overlong '/'
  EXPECT_EQ(utf8_sequence_length("\xED\xA0\x80", 0), 0u);      // a surrogate
  EXPECT_EQ(utf8_sequence_length("\xF4\x90\x80\x80", 0), 0u);  // beyond U+10FFFF
  EXPECT_EQ(utf8_sequence_length("\xE2\x82", 0), 0u);          // cut short
  EXPECT_EQ(utf8_sequence_length("\x80", 0), 0u);              // a stray continuation
}

TEST(SafeText, ValidUtf8ReplacesOnlyWhatIsInvalid) {
  EXPECT_EQ(valid_utf8("Calibração \x7F\x1b"), "Calibração \x7F\x1b");
  EXPECT_EQ(valid_utf8("a\xC0\xAF"
                       "b"),
            "a" + kFffd + kFffd + "b");  // never '/'
  EXPECT_EQ(valid_utf8("\xFF"), kFffd);
}

TEST(SafeText, TerminalLinesKeepTheirNewlinesOnly) {
  EXPECT_EQ(terminal_lines("gnuplot failed\n  line 0: \x1b[2Jinvalid\n"),
            "gnuplot failed\n  line 0: \\x1b[2Jinvalid\n");
  EXPECT_EQ(terminal_lines("a\rb"), "a\\rb");
  EXPECT_EQ(terminal_lines(""), "");
}

TEST(SafeText, TerminalTextShowsControlsInsteadOfActingOnThem) {
  EXPECT_EQ(terminal_text("\x1b]0;owned\x07title"), "\\x1b]0;owned\\x07title");
  EXPECT_EQ(terminal_text("a\nb\tc\rd\x7F"), "a\\nb\\tc\\rd\\x7f");
  EXPECT_EQ(terminal_text("\xC2\x9B"
                          "31m"),
            "\\u009b31m");  // the 8-bit CSI
  EXPECT_EQ(terminal_text("\xE2\x80\xAE"
                          "evil"),
            "\\u202eevil");  // right-to-left override
  EXPECT_EQ(terminal_text("bad \xC0\xAF byte"), "bad " + kFffd + kFffd + " byte");
  EXPECT_EQ(terminal_text("Calibração – 😀"), "Calibração – 😀");
  const std::string all_bytes = [] {
    std::string s;
    for (int c = 1; c < 256; ++c) s += static_cast<char>(c);
    return s;
  }();
  for (unsigned char c : terminal_text(all_bytes)) EXPECT_FALSE(c < 0x20 || c == 0x7F) << int(c);
}

TEST(SafeText, SpreadsheetCellsNeverStartAFormula) {
  EXPECT_EQ(spreadsheet_cell("=HYPERLINK(\"http://x\")"), "'=HYPERLINK(\"http://x\")");
  EXPECT_EQ(spreadsheet_cell("+cmd"), "'+cmd");
  EXPECT_EQ(spreadsheet_cell("-2+3"), "'-2+3");
  EXPECT_EQ(spreadsheet_cell("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(spreadsheet_cell("\tx"), "'\tx");
  EXPECT_EQ(spreadsheet_cell("\rx"), "'\rx");
  EXPECT_EQ(spreadsheet_cell("-36.2"), "-36.2");  // numbers stay numbers
  EXPECT_EQ(spreadsheet_cell("-1e-05"), "-1e-05");
  EXPECT_EQ(spreadsheet_cell("Calibration"), "Calibration");
  EXPECT_EQ(spreadsheet_cell(""), "");
  EXPECT_EQ(spreadsheet_cell("\xC0\xAF"), kFffd + kFffd);
}

// Every byte a label may hold, through the trace's escaping and back, then the YAML report, which
// yaml-cpp must read back with each label as it was (invalid UTF-8, DEL, U+FFFE/FFFF as U+FFFD).
TEST(SafeText, QuarkYamlReadsBackForAnyLabelBytes) {
  std::vector<std::string> labels = {"\x1b[31mred\x1b[0m",
                                     "\x7F"
                                     "del",
                                     "over\xC0\xAFlong",
                                     "quote \" and \\",
                                     "new\nline",
                                     "tab\there",
                                     "key: value",
                                     "- item",
                                     "&anchor *alias !tag",
                                     "#comment",
                                     "'single'",
                                     "\xEF\xBF\xBE\xEF\xBF\xBF",
                                     "\xC2\x85nel",
                                     "{flow: [1]}"};
  std::string all;
  for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
  labels.push_back(all);
  std::string dat = "QPROF 1 start=100\nMEM 1.0 100.0\n";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    dat += "MARK " + std::to_string(100.1 + 0.1 * i) + " " + trace::escape_text(labels[i]) + "\n";
  }
  dat += "MEM 2.0 102.0\nEXIT 102.0 status=0 signal=0 timed_out=0\n";  // whole: its End record made
  const Trace t = trace::read_trace_text(dat, "hostile.dat");
  const std::string yaml = report::quark_yaml(t, {});
  for (unsigned char c : yaml) EXPECT_NE(c, 0x7F);
  const YAML::Node doc = YAML::Load(yaml);
  const YAML::Node records = doc["memory_usage"];
  ASSERT_EQ(records.size(), labels.size() + 2);  // Start and End around the markers
  for (std::size_t i = 0; i < labels.size(); ++i) {
    EXPECT_EQ(records[i + 1]["step"].as<std::string>(), yaml_text(labels[i])) << i;
  }
  EXPECT_EQ(records[3]["step"].as<std::string>(), "over" + kFffd + kFffd + "long");
}

TEST(BoundedReader, ALineLongerThanTheLimitIsAnErrorWithItsLineNumber) {
  struct Count : trace::Visitor {
    int notes = 0;
    void note(std::string_view) override { ++notes; }
  } v;
  const std::string fits = "MEM 1 1\nNOTE " + std::string(trace::kMaxLineBytes - 5, 'a') + "\n";
  trace::parse_text(fits, "fits.dat", v);
  EXPECT_EQ(v.notes, 1);
  const std::string over = "MEM 1 1\nNOTE " + std::string(trace::kMaxLineBytes - 4, 'a') + "\nMEM 2 2\n";
  try {
    trace::parse_text(over, "over.dat", v);
    ADD_FAILURE() << "no error";
  } catch (const trace::ParseError& e) {
    EXPECT_STREQ(e.what(), "over.dat:2: line longer than 1 MiB");
  }
  try {
    trace::parse_text(std::string(trace::kMaxLineBytes + 1, 'x'), "tail.dat", v);  // no newline at all
    ADD_FAILURE() << "no error";
  } catch (const trace::ParseError& e) {
    EXPECT_STREQ(e.what(), "tail.dat:1: line longer than 1 MiB");
  }
}

TEST(BoundedReader, DevZeroEndsAtTheFirstMebibyte) {
  trace::Visitor v;
  try {
    trace::parse_file("/dev/zero", v);
    ADD_FAILURE() << "no error";
  } catch (const trace::ParseError& e) {
    EXPECT_STREQ(e.what(), "/dev/zero:1: line longer than 1 MiB");
  }
}

}  // namespace
}  // namespace qprof
