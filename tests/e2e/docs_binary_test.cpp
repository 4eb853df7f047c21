// SPDX-License-Identifier: Apache-2.0
// The documents give each sampling interval as `--OPTION` (VALUE): VALUE must be the default the
// binary's --help gives, so that docs and binary never drift apart (they did: PSS every 100 ms in
// three documents while the binary read it every second). The man pages' own text names only
// options their command takes.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "doc_files.hpp"
#include "e2e_util.hpp"
#include "qprof/common/units.hpp"

namespace qprof::test {
namespace {

// "(default 0.01)" or "(default 1;" after `option` in run --help: the default in seconds.
std::optional<double> help_default(const std::string& help, const std::string& option) {
  // The option's own line (two spaces in), not another's description that names it.
  const std::size_t at = help.find("\n  " + option + " ");
  if (at == std::string::npos) return std::nullopt;
  std::smatch m;
  // The description as one line: --help wraps it to the terminal.
  const std::string rest = std::regex_replace(help.substr(at, 600), std::regex(R"(\s+)"), " ");
  if (!std::regex_search(rest, m, std::regex(R"(\(default ([0-9.]+))"))) return std::nullopt;
  return std::stod(m[1]);
}

TEST(DocsAgreeWithBinary, EverySamplingIntervalTheDocsGiveIsTheDefault) {
  const Result help = qprof({"run", "--help"});
  ASSERT_EQ(help.status, 0) << help.err;
  std::size_t checked = 0;
  for (const std::string option : {"--pss-interval", "--stats-interval", "--gpu-interval", "--watch-interval"}) {
    const auto seconds = help_default(help.out, option);
    ASSERT_TRUE(seconds) << option << " has no default in --help";
    const std::regex given("`" + option + "` \\(([^)]*)\\)");
    for (const auto& doc : documents()) {
      std::size_t n = 0;
      for (const std::string& line : lines_of(doc)) {
        ++n;
        for (auto it = std::sregex_iterator(line.begin(), line.end(), given); it != std::sregex_iterator(); ++it) {
          const auto doc_seconds = parse_duration((*it)[1].str());
          ASSERT_TRUE(doc_seconds) << doc << ":" << n << ": " << (*it)[0];
          EXPECT_NEAR(*doc_seconds, *seconds, 1e-9) << doc << ":" << n << ": " << line;
          ++checked;
        }
      }
    }
  }
  EXPECT_GE(checked, 4u) << "the documents give the intervals";
}

// The PSS reading interval in words ("PSS ... every 100 ms") is --help's default too.
TEST(DocsAgreeWithBinary, ThePssIntervalInWordsIsTheDefault) {
  const Result help = qprof({"run", "--help"});
  ASSERT_EQ(help.status, 0) << help.err;
  const auto seconds = help_default(help.out, "--pss-interval");
  ASSERT_TRUE(seconds);
  const std::regex said(R"(PSS[^.]*every (\d+(\.\d+)? ?(ms|s))\b)");
  std::size_t checked = 0;
  for (const auto& doc : documents()) {
    if (doc.filename() == "CHANGELOG.md") continue;  // history may
    for (const std::string& line : lines_of(doc)) {
      std::smatch m;
      if (!std::regex_search(line, m, said)) continue;
      const auto doc_seconds = parse_duration(m[1].str());
      ASSERT_TRUE(doc_seconds) << doc << ": " << line;
      EXPECT_NEAR(*doc_seconds, *seconds, 1e-9) << doc << ": " << line;
      ++checked;
    }
  }
  EXPECT_GE(checked, 1u) << "the documents say how often PSS is read";
}

const std::vector<std::string> kSubcommands = {
#define QPROF_SUBCOMMAND(name) #name,
#include QPROF_TEST_SUBCOMMANDS_DEF
#undef QPROF_SUBCOMMAND
};

// The options --help lists, each at the start of its entry ("  -o,--output TEXT").
std::set<std::string> listed_options(const std::string& help) {
  std::set<std::string> out;
  std::istringstream in(help);
  const std::regex name("(^|,)(--?[A-Za-z0-9][-A-Za-z0-9]*)");
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("  -")) continue;
    const std::string names = line.substr(2, line.find(' ', 2) - 2);
    for (std::sregex_iterator it(names.begin(), names.end(), name), end; it != end; ++it) out.insert((*it)[2]);
  }
  return out;
}

// A hand-written man page's text, its sentences on one line each: fonts, escapes and requests gone.
std::vector<std::string> man_sentences(const std::filesystem::path& page) {
  std::ifstream in(page);
  std::string text;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(".\\\"")) continue;  // a comment
    if (line.starts_with(".")) line = line.find(' ') == std::string::npos ? "" : line.substr(line.find(' ') + 1);
    text += line + " ";
  }
  text = std::regex_replace(text, std::regex(R"(\\f[BIRP])"), "");
  text = std::regex_replace(text, std::regex(R"(\\-)"), "-");
  std::vector<std::string> out;
  for (std::size_t from = 0; from < text.size();) {
    const std::size_t end = text.find(". ", from);
    out.push_back(text.substr(from, end == std::string::npos ? std::string::npos : end - from));
    from = end == std::string::npos ? text.size() : end + 2;
  }
  return out;
}

// Each page's own text (man/qprof-SUB.man) names an option of SUB's only where SUB takes it: --help
// lists it, or the sentence says it is refused. Options after another command's name (`qprof run
// --attach`, `systemd-run --user`) are that command's. (qprof-attach(1) described --no-wait-daemons
// while attach refused it.)
TEST(DocsAgreeWithBinary, ManPagesNameOnlyOptionsTheirCommandTakes) {
  const std::regex option(R"((^|[^-\w])(--[a-z][-a-z0-9]*))");
  const std::regex another_command(R"((qprof [a-z]+|systemd-run)( -{1,2}[-\w=]+)* $)");
  std::size_t checked = 0;
  for (const std::string& sub : kSubcommands) {
    const std::filesystem::path page = source_dir() / "man" / ("qprof-" + sub + ".man");
    if (!std::filesystem::exists(page)) continue;
    const Result help = qprof({sub, "--help"});
    ASSERT_EQ(help.status, 0) << sub;
    const std::set<std::string> listed = listed_options(help.out);
    for (const std::string& sentence : man_sentences(page)) {
      for (std::sregex_iterator it(sentence.begin(), sentence.end(), option), end; it != end; ++it) {
        const std::string name = (*it)[2];
        const std::string before = sentence.substr(0, static_cast<std::size_t>(it->position(2)));
        if (listed.count(name) || std::regex_search(before, another_command)) continue;
        ++checked;
        EXPECT_NE(sentence.find("refused"), std::string::npos)
            << "qprof-" << sub << "(1) names " << name << ", which qprof " << sub
            << " --help does not list: " << sentence;
      }
    }
  }
  EXPECT_GE(checked, 1u) << "qprof-attach(1) names the options attach refuses";
}

}  // namespace
}  // namespace qprof::test
