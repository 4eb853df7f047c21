// SPDX-License-Identifier: Apache-2.0
// The first bytes of a trace: an editor's UTF-8 byte-order mark is no reason to refuse it, and a
// compressed trace is named as such instead of being quoted as binary.
#include <gtest/gtest.h>

#include "qprof/trace/format.hpp"

namespace qprof::trace {
namespace {

std::string parse_error(const std::string& text) {
  try {
    read_trace_text(text, "bad.dat");
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ReaderStart, AByteOrderMarkIsSkipped) {
  const Trace t = read_trace_text("\xEF\xBB\xBFQPROF 1 start=100\nMEM 1.0 2.0\n", "bom.dat");
  EXPECT_EQ(t.mem.size(), 1u);
  EXPECT_EQ(read_trace_text("\xEF\xBB\xBFMEM 1.0 2.0\n", "bom.dat").mem.size(), 1u);
}

TEST(ReaderStart, ACompressedTraceIsNamedNotQuoted) {
  EXPECT_EQ(parse_error(std::string("\x1F\x8B\x08\x00\x00\x00", 6)),
            "bad.dat:1: a compressed file, gzip (gunzip it first), not a trace");
  EXPECT_EQ(parse_error("\x28\xB5\x2F\xFDxyz"), "bad.dat:1: a compressed file, zstd (unzstd it first), not a trace");
  EXPECT_EQ(parse_error("\xFD"
                        "7zXZ\n"),
            "bad.dat:1: a compressed file, xz (unxz it first), not a trace");
}

}  // namespace
}  // namespace qprof::trace
