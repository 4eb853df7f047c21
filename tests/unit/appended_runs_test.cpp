// SPDX-License-Identifier: Apache-2.0
// `mprof run -o FILE` appends: a file of several runs, each under its own CMDLINE, is read as one
// trace under the last command, and where the second run starts is said.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "qprof/trace/completeness.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::trace {
namespace {

TEST(Reader, ASecondCmdlineIsARunAppendedReadUnderTheLastCommand) {
  const Trace one = read_trace_text("CMDLINE a\nMEM 1.0 2.0\n", "one.dat");
  EXPECT_EQ(one.second_run_line, 0u);
  const Trace two = read_trace_text("CMDLINE a\nMEM 1.0 2.0\nCMDLINE b\nMEM 2.0 9.0\nCMDLINE c\n", "two.dat");
  EXPECT_EQ(two.second_run_line, 3u) << "the first line the second run wrote";
  EXPECT_EQ(two.cmdline, "c");
  const std::vector<std::string> said = reading_notices(two);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].rfind("two.dat:3: a second run starts here", 0), 0u) << said[0];
}

}  // namespace
}  // namespace qprof::trace
