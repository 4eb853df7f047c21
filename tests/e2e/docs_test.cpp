// SPDX-License-Identifier: Apache-2.0
// The manual pages and the bash and zsh completions, all written at build time from qprof's own
// option lists: every page renders through man(1) without a warning and lists exactly the options
// of --help; the completions, sourced into bash or loaded by zsh's compinit at a terminal,
// complete subcommands, options, values and files. And the documents (README.md, docs/*.md): the
// README stays short, every relative link resolves, and every block marked ```sh qprof-test runs
// as written against the built qprof.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "doc_files.hpp"
#include "e2e_util.hpp"
#include "terminal_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kSubcommands = {
#define QPROF_SUBCOMMAND(name) #name,
#include QPROF_TEST_SUBCOMMANDS_DEF
#undef QPROF_SUBCOMMAND
};

std::string page(const std::string& name) { return std::string(QPROF_TEST_MAN_DIR) + "/" + name + ".1"; }

// Option names at the start of an options entry: "  -o,--output TEXT" in --help.
std::set<std::string> help_options(const std::string& help) {
  std::set<std::string> out;
  std::istringstream in(help);
  const std::regex name("(^|,)(--?[A-Za-z0-9][-A-Za-z0-9]*)");
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("  -")) continue;
    std::string names = line.substr(2, line.find(' ', 2) - 2);
    for (std::sregex_iterator it(names.begin(), names.end(), name), end; it != end; ++it) out.insert((*it)[2]);
  }
  return out;
}

Result render(const std::string& path) {
  return run({"env", "MANWIDTH=80", "man", "--warnings", "-E", "UTF-8", "-l", path});
}

TEST(ManPages, EveryPageRendersWithoutWarnings) {
  std::vector<std::string> pages = {"qprof"};
  for (const std::string& s : kSubcommands) pages.push_back("qprof-" + s);
  for (const std::string& p : pages) {
    ASSERT_TRUE(fs::exists(page(p))) << p;
    const Result r = render(page(p));
    EXPECT_EQ(r.status, 0) << p;
    EXPECT_EQ(r.err, "") << p << ": man's warnings";
    EXPECT_NE(r.out.find("SYNOPSIS"), std::string::npos) << p;
  }
}

TEST(ManPages, OptionsAreThoseOfHelp) {
  for (const std::string& s : kSubcommands) {
    const Result help = qprof({s, "--help"});
    ASSERT_EQ(help.status, 0) << s;
    const std::set<std::string> expected = help_options(help.out);
    ASSERT_GT(expected.size(), 1u) << s << "\n" << help.out;
    const Result r = render(page("qprof-" + s));
    std::set<std::string> got;
    std::istringstream in(r.out);
    bool options = false;
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != ' ') options = line == "OPTIONS";
      if (!options || !line.starts_with("       -")) continue;
      std::istringstream words(line.substr(7));
      for (std::string w; words >> w;) {
        const bool more = w.ends_with(",");
        if (more) w.pop_back();
        if (!w.starts_with("-")) break;
        got.insert(w);
        if (!more) break;
      }
    }
    EXPECT_EQ(got, expected) << "qprof-" << s << "(1) against qprof " << s << " --help";
  }
}

// Runs the completion function as bash would for the words of a command line.
std::vector<std::string> complete(const std::vector<std::string>& words, const std::string& cwd = ".") {
  std::string array;
  for (const std::string& w : words) array += " '" + w + "'";
  const std::string script = "cd '" + cwd + "' && source '" + std::string(QPROF_TEST_COMPLETION) + "' && COMP_WORDS=(" +
                             array + ") && COMP_CWORD=" + std::to_string(words.size() - 1) +
                             " && _qprof && printf '%s\\n' \"${COMPREPLY[@]}\"";
  const Result r = run({"bash", "--norc", "--noprofile", "-c", script});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(l);
  }
  std::sort(out.begin(), out.end());
  return out;
}

using Words = std::vector<std::string>;

TEST(Completion, SubcommandsOptionsValuesAndFiles) {
  EXPECT_EQ(complete({"qprof", "ex"}), Words{"export"});
  EXPECT_EQ(complete({"qprof", "c"}), (Words{"clean", "compare"}));
  EXPECT_EQ(complete({"qprof", "export", "--fo"}), Words{"--format"});
  EXPECT_EQ(complete({"qprof", "export", "--format", ""}), (Words{"chrome", "csv", "json", "perfetto"}));
  EXPECT_EQ(complete({"qprof", "report", "--format", "m"}), Words{"md"});
  EXPECT_EQ(complete({"qprof", "run", "--gpu", "n"}), (Words{"none", "nvml"}));
  EXPECT_EQ(complete({"qprof", "run", "--multi"}), Words{"--multiprocess"});
  const std::string dir = temp_dir() + "/complete";
  fs::create_directories(dir + "/sub");
  std::ofstream(dir + "/a.dat") << "x";
  std::ofstream(dir + "/b.dat") << "x";
  std::ofstream(dir + "/notes.txt") << "x";
  EXPECT_EQ(complete({"qprof", "plot", ""}, dir), (Words{"a.dat", "b.dat", "sub"})) << "readers: traces and folders";
  EXPECT_EQ(complete({"qprof", "export", "a.dat", "-o", "no"}, dir), Words{"notes.txt"}) << "-o: any file";
  // After "--", the command, then its arguments as files.
  const Words commands = complete({"qprof", "run", "-o", "x.dat", "--", "bas"}, dir);
  EXPECT_NE(std::find(commands.begin(), commands.end(), "bash"), commands.end());
  EXPECT_EQ(complete({"qprof", "peak", "--", "cat", "no"}, dir), Words{"notes.txt"});
  // A flag takes no value: the next word is a trace again. A CLI11 check's list is the choices.
  EXPECT_EQ(complete({"qprof", "plot", "--children", ""}, dir), (Words{"a.dat", "b.dat", "sub"}));
  EXPECT_EQ(complete({"qprof", "plot", "--align", ""}), (Words{"start", "wall"}));
}

// zsh at a tmux terminal, with the completion function loaded from the build's folder by
// compinit: `typed`, then `key` (Tab: completes, or lists the choices); the screen once `expect`
// is on it (tmux gives rows without their trailing blanks). A fresh shell for each, so that no screen of an earlier
// case can answer.
std::string zsh_after(const std::string& typed, const std::string& key, const std::string& expect,
                      const std::string& cwd) {
  TmuxTerminal term("env -i TERM=xterm HOME=" + sh_quoted(cwd) + " PATH=/usr/bin:/bin zsh -f", 160, 40);
  term.send_keys("PS1='zsh> '; fpath=(" + sh_quoted(QPROF_TEST_ZSH_COMPLETION_DIR) +
                     " $fpath); autoload -Uz compinit; compinit -u -D; cd " + sh_quoted(cwd) + "; clear",
                 true);
  term.send_keys("Enter");
  EXPECT_TRUE(term.wait_for("zsh> ", 10)) << term.screen();
  term.send_keys(typed, true);
  term.send_keys(key);
  EXPECT_TRUE(term.wait_for(expect, 10)) << "typed: " << typed << "\n" << term.screen();
  return term.screen();
}

TEST(Completion, ZshCompletesSubcommandsOptionsValuesAndFiles) {
  if (!TmuxTerminal::available() || run({"sh", "-c", "command -v zsh"}).status != 0) {
    GTEST_SKIP() << "needs zsh and tmux (scripts/install-deps --tests installs both)";
  }
  const std::string dir = temp_dir() + "/zsh-complete";
  fs::create_directories(dir + "/sub");
  std::ofstream(dir + "/a.dat") << "x";
  std::ofstream(dir + "/b.dat") << "x";
  std::ofstream(dir + "/notes.txt") << "x";
  EXPECT_NE(zsh_after("qprof ex", "Tab", "zsh> qprof export", dir).find("zsh> qprof export\n"), std::string::npos);
  EXPECT_NE(zsh_after("qprof export --fo", "Tab", "--format", dir).find("zsh> qprof export --format\n"),
            std::string::npos);
  std::string s = zsh_after("qprof export --format ", "Tab", "perfetto", dir);
  for (const char* w : {"chrome", "csv", "json"}) EXPECT_NE(s.find(w), std::string::npos) << w << "\n" << s;
  s = zsh_after("qprof run --gpu n", "Tab", "nvml", dir);
  EXPECT_NE(s.find("none"), std::string::npos) << s;
  EXPECT_EQ(s.find("smi"), std::string::npos) << s;
  // Readers: traces and folders, not other files; a flag takes no value; -o any file.
  for (const std::string typed : {"qprof plot ", "qprof plot --children "}) {
    s = zsh_after(typed, "Tab", "a.dat", dir);
    EXPECT_NE(s.find("b.dat"), std::string::npos) << s;
    EXPECT_NE(s.find("sub/"), std::string::npos) << s;
    EXPECT_EQ(s.find("notes.txt"), std::string::npos) << s;
  }
  EXPECT_NE(zsh_after("qprof export a.dat -o no", "Tab", "notes.txt", dir).find("-o notes.txt"), std::string::npos);
  s = zsh_after("qprof plot --align ", "Tab", "start", dir);
  EXPECT_NE(s.find("wall"), std::string::npos) << s;
  // Options listed with their descriptions from --help.
  s = zsh_after("qprof peak --", "Tab", "--max-peak", dir);
  EXPECT_NE(s.find("--by-host"), std::string::npos) << s;
  // After run's options, the command and its own completion.
  EXPECT_NE(zsh_after("qprof run -q -- ech", "Tab", "-- echo", dir).find("-- echo\n"), std::string::npos);
}

// ---- The documents: README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md.

const std::string kSource = QPROF_TEST_SOURCE_DIR;

// Characters, not bytes: Σ, × and … are one each.
std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  for (const unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// GitHub's anchor of a heading: lower case, punctuation dropped, each blank a hyphen.
std::string anchor_of(const std::string& heading) {
  std::string out;
  for (const unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80)
      out += static_cast<char>(std::tolower(c));
    else if (c == ' ')
      out += '-';
  }
  return out;
}

std::set<std::string> anchors_of(const fs::path& p) {
  std::set<std::string> out;
  bool code = false;
  for (const std::string& l : lines_of(p)) {
    if (l.starts_with("```")) code = !code;
    if (code || !l.starts_with("#")) continue;
    const std::size_t text = l.find_first_not_of('#');
    if (text == std::string::npos || l[text] != ' ') continue;
    out.insert(anchor_of(l.substr(text + 1)));
  }
  return out;
}

TEST(Docs, ReadmeIsShort) { EXPECT_LE(lines_of(fs::path(kSource) / "README.md").size(), 300u); }

// Prose lines (outside fenced code blocks) fit 120 characters.
TEST(Docs, LinesFit120Characters) {
  for (const fs::path& doc : documents()) {
    bool code = false;
    std::size_t n = 0;
    for (const std::string& l : lines_of(doc)) {
      ++n;
      if (l.starts_with("```")) code = !code;
      if (!code) {
        EXPECT_LE(utf8_length(l), 120u) << doc.filename().string() << ":" << n;
      }
    }
  }
}

// Every relative link of a document names a file of the repository, and its #anchor a heading there.
TEST(Docs, RelativeLinksResolve) {
  const std::regex link(R"(\]\(([^)\s]+)\))");
  std::size_t checked = 0;
  for (const fs::path& doc : documents()) {
    const std::string text = read_file(doc.string());
    for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it) {
      const std::string target = (*it)[1];
      if (target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:")) continue;
      const std::size_t hash = target.find('#');
      const std::string file = target.substr(0, hash);
      const fs::path resolved = file.empty() ? doc : (doc.parent_path() / file).lexically_normal();
      ++checked;
      if (!fs::exists(resolved)) {
        ADD_FAILURE() << doc.filename().string() << ": " << target << " does not exist";
        continue;
      }
      EXPECT_TRUE(resolved.string().starts_with(kSource)) << doc.filename().string() << ": " << target;
      if (hash != std::string::npos && resolved.extension() == ".md") {
        const std::set<std::string> anchors = anchors_of(resolved);
        EXPECT_TRUE(anchors.count(target.substr(hash + 1)))
            << doc.filename().string() << ": " << target << ": no such heading in " << resolved.filename().string();
      }
    }
  }
  EXPECT_GT(checked, 20u);
}

// Every fenced block marked ```sh qprof-test runs as written, with the built qprof first on PATH,
// in a fresh directory and under a time limit, and succeeds.
TEST(Docs, MarkedBlocksRunAsWritten) {
  const std::string bin = temp_dir() + "/docs-bin";
  fs::create_directories(bin);
  fs::create_symlink(qprof_bin(), bin + "/qprof");
  std::size_t blocks = 0;
  for (const fs::path& doc : documents()) {
    const std::vector<std::string> lines = lines_of(doc);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i] != "```sh qprof-test") continue;
      std::string script;
      std::size_t j = i + 1;
      for (; j < lines.size() && lines[j] != "```"; ++j) script += lines[j] + "\n";
      ASSERT_LT(j, lines.size()) << doc.filename().string() << ":" << i + 1 << ": the block never ends";
      const std::string dir = temp_dir() + "/docs-block-" + std::to_string(++blocks);
      fs::create_directories(dir);
      const Result r =
          run({"env", "PATH=" + bin + ":/usr/bin:/bin", "sh", "-euc", "cd \"$1\"\n" + script, "block", dir}, "", 60);
      EXPECT_EQ(r.status, 0) << doc.filename().string() << ":" << i + 1 << "\n"
                             << script << "stdout:\n"
                             << r.out << "stderr:\n"
                             << r.err;
      i = j;
    }
  }
  EXPECT_GE(blocks, 3u);
}

// ---- The licence: LICENSE is Apache-2.0, and every source file says so in its first lines
// (an SPDX line), so that a file copied out of the tree keeps its terms.

TEST(Licence, EverySourceFileCarriesAnSpdxLine) {
  const std::set<std::string> extensions{".cpp", ".hpp", ".c",     ".h",  ".cu", ".def",
                                         ".py",  ".sh",  ".cmake", ".gp", ".man"};
  std::size_t checked = 0;
  for (const char* dir :
       {"src", "include", "tests", "bench", "examples", "scripts", "python", "cmake", "plot", "man"}) {
    const fs::path root = fs::path(kSource) / dir;
    if (!fs::exists(root)) continue;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
      const fs::path& p = it->path();
      if (it->is_directory() && (p.filename() == "data" || p.filename() == "corpus" || p.filename() == "__pycache__")) {
        it.disable_recursion_pending();  // recorded inputs, not sources
        continue;
      }
      // examples/ci: templates a user copies into their own project, shown verbatim in docs/ci.md.
      if (it->is_directory() && p.filename() == "ci" && p.parent_path().filename() == "examples") {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file()) continue;
      if (!extensions.count(p.extension().string()) && p.filename() != "CMakeLists.txt") continue;
      std::vector<std::string> head = lines_of(p);
      head.resize(std::min<std::size_t>(head.size(), 3));
      const bool has = std::any_of(head.begin(), head.end(), [](const std::string& l) {
        return l.find("SPDX-License-Identifier: Apache-2.0") != std::string::npos;
      });
      EXPECT_TRUE(has) << p.string() << ": no SPDX line in its first 3 lines";
      ++checked;
    }
  }
  EXPECT_GT(checked, 400u);
  EXPECT_NE(read_file(kSource + "/LICENSE").find("Apache License"), std::string::npos);
}

}  // namespace
}  // namespace qprof::test
