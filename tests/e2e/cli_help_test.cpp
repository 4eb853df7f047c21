// SPDX-License-Identifier: Apache-2.0
// A mistyped subcommand names the subcommands and the nearest; every subcommand's --help shows an example.
#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

Result bounded_qprof(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"timeout", "-s", "KILL", "60", "prlimit", as_limit("1073741824"), "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", 70);
}

const std::vector<std::string> kSubcommands = {
#define QPROF_SUBCOMMAND(name) #name,
#include QPROF_TEST_SUBCOMMANDS_DEF
#undef QPROF_SUBCOMMAND
};

TEST(CliHelp, AMistypedSubcommandSuggestsTheNearest) {
  const std::vector<std::pair<std::string, std::string>> typos = {
      {"plott", "plot"}, {"rn", "run"}, {"repotr", "report"}, {"exprot", "export"}, {"compar", "compare"}, {"pek", "peak"}};
  for (const auto& [typo, meant] : typos) {
    const Result r = bounded_qprof({typo, "x.dat"});
    EXPECT_EQ(r.status, 2) << typo;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("unknown subcommand '" + typo + "'; did you mean '" + meant + "'?"), std::string::npos) << r.err;
    for (const std::string& s : kSubcommands) EXPECT_NE(r.err.find(s), std::string::npos) << s << " not named: " << r.err;
  }
  // Nothing near: the list alone, no guess.
  const Result far = bounded_qprof({"frobnicate"});
  EXPECT_EQ(far.status, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
  EXPECT_NE(far.err.find("The subcommands: run, attach, peak"), std::string::npos) << far.err;
  // A control character typed (or pasted) never reaches the terminal.
  const Result hostile = bounded_qprof({"plo\x1b[2Jt"});
  EXPECT_EQ(hostile.status, 2);
  EXPECT_EQ(hostile.err.find('\x1b'), std::string::npos);
}

TEST(CliHelp, EverySubcommandsHelpShowsAnExample) {
  // The subcommands are those qprof --help lists: a new one without an example fails here.
  const Result top = bounded_qprof({"--help"});
  ASSERT_EQ(top.status, 0);
  for (const std::string& s : kSubcommands) EXPECT_NE(top.out.find("\n  " + s), std::string::npos) << s;
  for (const std::string& s : kSubcommands) {
    const Result r = bounded_qprof({s, "--help"});
    EXPECT_EQ(r.status, 0) << s;
    const std::size_t at = r.out.find("Example");
    ASSERT_NE(at, std::string::npos) << s << ":\n" << r.out;
    EXPECT_NE(r.out.find("  qprof " + s, at), std::string::npos) << s << ": the example does not use it:\n" << r.out;
  }
}

}  // namespace
}  // namespace qprof::test
