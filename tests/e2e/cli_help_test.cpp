// SPDX-License-Identifier: Apache-2.0
// A mistyped subcommand names the subcommands and the nearest; every subcommand's --help shows an example.
#include <gtest/gtest.h>

#include <map>
#include <regex>

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
  const std::vector<std::pair<std::string, std::string>> typos = {{"plott", "plot"},     {"rn", "run"},
                                                                  {"repotr", "report"},  {"exprot", "export"},
                                                                  {"compar", "compare"}, {"pek", "peak"}};
  for (const auto& [typo, meant] : typos) {
    const Result r = bounded_qprof({typo, "x.dat"});
    EXPECT_EQ(r.status, 2) << typo;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("unknown subcommand '" + typo + "'; did you mean '" + meant + "'?"), std::string::npos)
        << r.err;
    for (const std::string& s : kSubcommands)
      EXPECT_NE(r.err.find(s), std::string::npos) << s << " not named: " << r.err;
  }
  // Nothing near: the list alone, no guess.
  const Result far = bounded_qprof({"frobnicate"});
  EXPECT_EQ(far.status, 2);
  EXPECT_EQ(joined(far.err).find("did you mean"), std::string::npos) << far.err;
  EXPECT_NE(joined(far.err).find("The subcommands: run, attach, peak"), std::string::npos) << far.err;
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
    const std::size_t at = r.out.find("Examples:\n");
    ASSERT_NE(at, std::string::npos) << s << ":\n" << r.out;
    EXPECT_NE(r.out.find("  qprof " + s, at), std::string::npos) << s << ": the example does not use it:\n" << r.out;
  }
}

// What each usage line must name besides [OPTIONS]: CLI11's own said "Usage: qprof run [OPTIONS]".
TEST(CliHelp, UsageLineNamesWhatTheCommandTakes) {
  const std::map<std::string, std::string> takes = {
      {"run", "CMD [ARGS...]"},  {"attach", "PID"}, {"peak", "[FILE...]"},    {"report", "TRACE"},
      {"compare", "FILE"},       {"plot", "FILE"},  {"export", "TRACE"},      {"list", "[FILE|DIR...]"},
      {"clean", "--older-than"}, {"mark", "LABEL"}, {"fit", "CMD [ARGS...]"}, {"sweep", "CMD [ARGS...]"}};
  for (const std::string& s : kSubcommands) {
    const Result r = bounded_qprof({s, "--help"});
    ASSERT_EQ(r.status, 0) << s;
    const std::size_t at = r.out.find("Usage: qprof " + s + " ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string usage = r.out.substr(at, r.out.find('\n', at) - at);
    ASSERT_TRUE(takes.count(s)) << s;
    EXPECT_NE(usage.find(takes.at(s)), std::string::npos) << usage;
    // One usage block, at the top.
    EXPECT_EQ(r.out.find("Usage:", at + 1), std::string::npos) << s << ":\n" << r.out;
  }
}

// CLI11's artefacts: what no user types, and types where a name says what goes there.
TEST(CliHelp, NoCli11Artefacts) {
  for (const std::string& s : kSubcommands) {
    const Result r = bounded_qprof({s, "--help"});
    for (const char* artefact :
         {"{false}", "Needs:", " x 2", "Excludes:", " TEXT", " INT", " FLOAT", " UINT", "Example:"}) {
      EXPECT_EQ(r.out.find(artefact), std::string::npos) << s << " --help has '" << artefact << "':\n" << r.out;
    }
    std::size_t blocks = 0;
    for (std::size_t at = 0; (at = r.out.find("Examples:", at)) != std::string::npos; ++at) ++blocks;
    EXPECT_EQ(blocks, 1u) << s;
  }
  const Result run = bounded_qprof({"run", "--help"});
  EXPECT_NE(run.out.find("--no-wait-daemons "), std::string::npos);
  EXPECT_NE(run.out.find("--attach PID"), std::string::npos);
  EXPECT_NE(run.out.find("-o,--output FILE"), std::string::npos);
  EXPECT_NE(bounded_qprof({"compare", "--help"}).out.find("--pivot ROWS,COLUMNS"), std::string::npos);
  // Positionals named as the usage line names them, not by the C++ variable ("files").
  EXPECT_NE(bounded_qprof({"peak", "--help"}).out.find("\n  FILE...  "), std::string::npos);
  EXPECT_EQ(bounded_qprof({"peak", "--help"}).out.find("\n  files  "), std::string::npos);
}

// attach writes no command's stdout anywhere: -o's text was run's.
TEST(CliHelp, AttachOutputSpeaksOfNoCommand) {
  const Result r = bounded_qprof({"attach", "--help"});
  EXPECT_EQ(r.out.find("CMD's stdout"), std::string::npos) << r.out;
  EXPECT_NE(bounded_qprof({"run", "--help"}).out.find("CMD's stdout"), std::string::npos);
}

// -o's %p is qprof's PID, not the PID attach follows (nor run's command's): both helps say whose.
TEST(CliHelp, OutputsPidPlaceholderIsQprofsOwn) {
  for (const char* sub : {"run", "attach"}) {
    const std::string help = std::regex_replace(bounded_qprof({sub, "--help"}).out, std::regex(R"(\s+)"), " ");
    EXPECT_NE(help.find("%p qprof's PID"), std::string::npos) << sub << ": " << help;
  }
}

// plot --metric took anon, file, shmem, swap and dir:NAME though --help named five.
TEST(CliHelp, PlotHelpListsEveryMetricAndPanelsErrorEveryPanel) {
  const Result help = bounded_qprof({"plot", "--help"});
  for (const char* m : {"rss", "footprint", "unreclaimable", "pss", "uss", "gpu", "cgroup", "anon", "file", "shmem",
                        "swap", "dir:NAME"}) {
    EXPECT_NE(help.out.find(m), std::string::npos) << m;
  }
  const Result r =
      bounded_qprof({"plot", "--panels", "memroy", data_file("report/minmax.dat"), "-o", temp_dir() + "/x.png"});
  EXPECT_EQ(r.status, 2);
  for (const char* p : {"memory", "gpu", "cpu", "io", "memory-kinds", "tasks", "vsz", "gpu-util", "disk"}) {
    EXPECT_NE(r.err.find(std::string(p) + (std::string(p) == "disk" ? " (" : ",")), std::string::npos)
        << p << ": " << r.err;
  }
}

TEST(CliHelp, ListHelpGivesTodaysDefaultName) {
  const Result r = bounded_qprof({"list", "--help"});
  EXPECT_NE(r.out.find("qprof_YYYYMMDDhhmmss.mmm_PID.dat"), std::string::npos) << r.out;
}

// Option typos get the nearest option, as subcommand typos do; run's prefix command included.
TEST(CliHelp, AMistypedOptionSuggestsTheNearest) {
  const std::string trace = data_file("report/minmax.dat");
  const Result plot = bounded_qprof({"plot", "--metrc", "rss", trace});
  EXPECT_EQ(plot.status, 2);
  EXPECT_NE(plot.err.find("Did you mean --metric"), std::string::npos) << plot.err;
  const Result peak = bounded_qprof({"peak", "--chidren", trace});
  EXPECT_NE(peak.err.find("Did you mean --children"), std::string::npos) << peak.err;
  const Result run = bounded_qprof({"run", "--metrc", "pss", "true"});
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("did you mean --metric?"), std::string::npos) << run.err;
  // Far from every option: no guess.
  EXPECT_EQ(bounded_qprof({"plot", "--zzzzzzzz", trace}).err.find("id you mean"), std::string::npos);
}

TEST(CliHelp, AttachToANonNumberIsAQprofSentence) {
  const Result r = bounded_qprof({"attach", "abc"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.find("Could not convert"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'abc' is not a process ID"), std::string::npos) << r.err;
  EXPECT_NE(bounded_qprof({"run", "--attach", "x1"}).err.find("'x1' is not a process ID"), std::string::npos);
}

}  // namespace
}  // namespace qprof::test
