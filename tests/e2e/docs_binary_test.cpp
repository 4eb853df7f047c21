// SPDX-License-Identifier: Apache-2.0
// The documents give each sampling interval as `--OPTION` (VALUE): VALUE must be the default the
// binary's --help gives, so that docs and binary never drift apart (they did: PSS every 100 ms in
// three documents while the binary read it every second).
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>

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

}  // namespace
}  // namespace qprof::test
