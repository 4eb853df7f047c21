// SPDX-License-Identifier: Apache-2.0
// Where the documents' figures come from. README.md and docs/*.md quote a figure only where a
// reader can check it: in an output block that scripts/doc-outputs made by running the command it
// shows (marked <!-- qprof-output: NAME -->), among the commands shown, in the source of an example
// its paragraph links (the sizes it is built with), or in a section that cites bench/RESULTS.md
// (whose figures it must then match); the rest are qprof's own settings, listed here with what
// they set. Every block of qprof's output is marked, and still has the lines its
// command prints today.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "doc_files.hpp"
#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

// qprof's settings that the documents state: each is set in the code, not measured.
const std::set<std::string> kSettings = {
    "10 ms",    // --interval's default
    "100 ms",   // the stats pass, the trace's flush, a synchronous marker's wait, the PSS rise spacing
    "0.1 s",    // --stats-interval's and --gpu-interval's defaults
    "1 s",      // a still tree's PSS passes; --watch-interval's default
    "200 MiB",  // examples/forked_workers.py's model: the parent's memory, by construction
    "2 %",      // GPU queries and directory walks stay under it (of a core)
    "5 %",      // the PSS passes' share of the time; the trend's cut ends
    "90 %",     // the limit in force: said once when the tree crosses it
    "10 %",     // fit's full-speed margin; MemTotal named as the limit within it
    "8 MiB",    // fit's default resolution
    "16 MiB",   // a trend's smallest growth
    "10 GiB",   // human tables switch from MiB to GiB
    "30 %",     // report's GPU-busy threshold
    "80 %",     // report's CPU-bound threshold
    "50 MB/s",  // report's storage-bound threshold
    "60 s",     // the fuzzers' smoke in the test suite
    "100 %",    // a busy GPU's reading
    "50 ms",    // the shortest interval a CPU or I/O rate is taken over (analysis::kMinRateInterval)
};

// A figure: a number and its unit, as prose writes it ("1.21 GiB", "280 µs", "14×").
const std::regex kFigure(R"((^|[^\w.])(\d+(?:\.\d+)?) ?(KiB|MiB|GiB|TiB|MB/s|GiB/s|KB|MB|GB|ms|µs|s|%|×)(?![\w]))");
const std::regex kNumber(R"(\d+(?:\.\d+)?)");

struct Number {
  double value;
  int decimals;
};

Number number_of(const std::string& text) {
  const std::size_t dot = text.find('.');
  return {std::stod(text), dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1)};
}

void add_numbers(const std::string& line, std::vector<double>& out) {
  for (std::sregex_iterator it(line.begin(), line.end(), kNumber), end; it != end; ++it)
    out.push_back(std::stod(it->str()));
}

// Whether `quoted`, at its own precision, is one of `numbers` ("251" reads 250.8).
bool among(const Number& quoted, const std::vector<double>& numbers) {
  const double half = 0.5 * std::pow(10.0, -quoted.decimals) + 1e-9;
  for (double n : numbers) {
    if (std::fabs(n - quoted.value) <= half) return true;
  }
  return false;
}

struct Block {
  std::size_t line = 0;  // of its opening fence, from 1
  std::string fence;
  std::string marker;  // NAME of <!-- qprof-output: NAME --> on the line before, or empty
  std::vector<std::string> lines;
};

struct Prose {
  std::size_t line = 0;
  std::string text;  // code spans removed
  bool cites_results = false;
  std::size_t paragraph = 0;
};

struct Document {
  std::vector<Block> blocks;
  std::vector<Prose> prose;
  // Per paragraph, the numbers of the examples and workloads it links.
  std::vector<std::vector<double>> linked;
};

// The numbers of every example or test workload the paragraph's links name.
std::vector<double> linked_sources(const std::string& paragraph) {
  static const std::regex link(R"(\]\((?:\.\./)?((?:examples|tests/workloads)/[^)#]+)\))");
  std::vector<double> out;
  for (std::sregex_iterator it(paragraph.begin(), paragraph.end(), link), end; it != end; ++it) {
    for (const std::string& l : lines_of(source_dir() / (*it)[1].str())) add_numbers(l, out);
  }
  return out;
}

Document parse(const fs::path& path) {
  const std::vector<std::string> lines = lines_of(path);
  const std::string marker = "<!-- qprof-output: ";
  Document d;
  std::vector<std::size_t> section_start;  // index into d.prose where each section starts
  std::vector<bool> cites;
  section_start.push_back(0);
  cites.push_back(false);
  std::vector<std::string> paragraphs;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with("```")) {
      Block b;
      b.line = i + 1;
      b.fence = lines[i];
      if (i > 0 && lines[i - 1].starts_with(marker))
        b.marker = lines[i - 1].substr(marker.size(), lines[i - 1].find(" -->") - marker.size());
      for (++i; i < lines.size() && lines[i] != "```"; ++i) b.lines.push_back(lines[i]);
      d.blocks.push_back(b);
      continue;
    }
    if (lines[i].starts_with("#")) {
      section_start.push_back(d.prose.size());
      cites.push_back(false);
    }
    if (lines[i].find("RESULTS.md") != std::string::npos) cites.back() = true;
    if (lines[i].empty() || d.prose.empty()) d.linked.emplace_back();
    d.prose.push_back({i + 1, std::regex_replace(lines[i], std::regex("`[^`]*`"), ""), false, d.linked.size() - 1});
    paragraphs.resize(d.linked.size());
    paragraphs.back() += lines[i] + "\n";
  }
  for (std::size_t p = 0; p < paragraphs.size(); ++p) d.linked[p] = linked_sources(paragraphs[p]);
  section_start.push_back(d.prose.size());
  for (std::size_t s = 0; s + 1 < section_start.size(); ++s) {
    for (std::size_t p = section_start[s]; p < section_start[s + 1]; ++p) d.prose[p].cites_results = cites[s];
  }
  return d;
}

std::vector<fs::path> user_documents() {
  std::vector<fs::path> out;
  for (const fs::path& p : documents()) {
    if (p.filename() != "CHANGELOG.md" && p.filename() != "CONTRIBUTING.md") out.push_back(p);
  }
  return out;
}

// qprof's own output: a summary, a command's lines, a prompt.
bool is_qprof_output(const Block& b) {
  if (b.fence.find("qprof-test") != std::string::npos || b.lines.empty()) return false;
  return b.lines[0].starts_with("$ qprof") || b.lines[0].starts_with("qprof:");
}

TEST(DocFigures, EveryQuotedFigureHasASource) {
  std::vector<double> readme_code;
  for (const Block& b : parse(source_dir() / "README.md").blocks) {
    for (const std::string& l : b.lines) add_numbers(l, readme_code);
  }
  std::vector<double> results;
  for (const std::string& l : lines_of(source_dir() / "bench" / "RESULTS.md")) add_numbers(l, results);
  std::size_t figures = 0;
  for (const fs::path& path : user_documents()) {
    const Document d = parse(path);
    std::vector<double> code = readme_code;
    for (const Block& b : d.blocks) {
      for (const std::string& l : b.lines) add_numbers(l, code);
    }
    for (const Prose& p : d.prose) {
      for (std::sregex_iterator it(p.text.begin(), p.text.end(), kFigure), end; it != end; ++it) {
        ++figures;
        const std::string figure = (*it)[2].str() + " " + (*it)[3].str();
        const Number n = number_of((*it)[2].str());
        const std::string where = path.filename().string() + ":" + std::to_string(p.line) + ": " + figure;
        if (p.cites_results) {
          EXPECT_TRUE(among(n, results) || kSettings.contains(figure))
              << where << " is in a section that cites bench/RESULTS.md, which has no such figure";
          continue;
        }
        EXPECT_TRUE(among(n, code) || among(n, d.linked[p.paragraph]) || kSettings.contains(figure))
            << where << ": from no output block, command or setting; cite bench/RESULTS.md where it was measured";
      }
    }
  }
  EXPECT_GT(figures, 20u);
}

// The first "N MiB" after `words` in `text`, or nothing.
std::optional<Number> mib_after(const std::string& text, const std::string& words) {
  const std::size_t at = text.find(words);
  if (at == std::string::npos) return std::nullopt;
  static const std::regex mib(R"((\d+(?:\.\d+)?) MiB)");
  std::smatch m;
  const std::string rest = text.substr(at + words.size());
  if (!std::regex_search(rest, m, mib)) return std::nullopt;
  return number_of(m[1].str());
}

// The prose beside fit's output names the limits its findings name: "within 4×" the limit of
// "smallest limit it completes in within 4x", "full speed only" the full-speed one (a figure of
// the table beside it is not enough: the table has every limit tried).
TEST(DocFigures, FitProseNamesTheFindingsLimits) {
  std::size_t checked = 0;
  for (const fs::path& path : user_documents()) {
    const Document d = parse(path);
    std::string block;
    for (const Block& b : d.blocks) {
      if (b.marker != "fit") continue;
      for (const std::string& l : b.lines) block += (l.starts_with("    ") ? " " + l.substr(4) : "\n" + l);
    }
    if (block.empty()) continue;
    const auto within = mib_after(block, "smallest limit it completes in within 4x: ");
    const auto full = mib_after(block, "smallest limit at full speed");
    ASSERT_TRUE(within && full) << path;
    std::map<std::size_t, std::string> paragraphs;
    for (const Prose& p : d.prose) paragraphs[p.paragraph] += p.text + " ";
    for (const auto& [n, text] : paragraphs) {
      for (const auto& [words, finding] :
           {std::pair{"within 4× of that time in", *within}, {"full speed only", *full}}) {
        const auto quoted = mib_after(text, words);
        if (!quoted) continue;
        ++checked;
        EXPECT_TRUE(among(*quoted, {finding.value}))
            << path.filename().string() << ": \"" << words << "\" quotes " << quoted->value << " MiB; the finding is "
            << finding.value << " MiB";
      }
    }
  }
  EXPECT_GE(checked, 2u) << "README's sentence under its fit example";
}

// The names scripts/doc-outputs makes.
std::set<std::string> output_names() {
  const Result r = run({"sh", (source_dir() / "scripts" / "doc-outputs").string(), "--list"});
  std::set<std::string> out;
  std::istringstream in(r.out);
  for (std::string name; in >> name;) out.insert(name);
  return out;
}

TEST(DocFigures, EveryOutputBlockNamesTheCommandThatMadeIt) {
  const std::set<std::string> names = output_names();
  ASSERT_FALSE(names.empty());
  std::set<std::string> used;
  for (const fs::path& path : user_documents()) {
    for (const Block& b : parse(path).blocks) {
      if (!b.marker.empty()) {
        EXPECT_TRUE(names.contains(b.marker)) << path.filename().string() << ":" << b.line << ": " << b.marker;
        used.insert(b.marker);
      }
      if (is_qprof_output(b)) {
        EXPECT_FALSE(b.marker.empty()) << path.filename().string() << ":" << b.line
                                       << ": qprof's output, not marked <!-- qprof-output: NAME -->";
      }
    }
  }
  EXPECT_EQ(used, names) << "every output scripts/doc-outputs makes is quoted somewhere";
}

// A line's words before its first figure: "qprof:   footprint", "qprof: Load". A warning that
// samples came late is the machine's load (a sanitizer's, a busy CI), not the output's shape.
std::set<std::string> line_keys(const std::vector<std::string>& lines) {
  std::set<std::string> out;
  for (const std::string& l : lines) {
    if (!l.starts_with("qprof")) continue;
    if (l.starts_with("qprof:   warning") && l.find("came late") != std::string::npos) continue;
    std::string key = l.substr(0, l.find_first_of("0123456789"));
    while (!key.empty() && key.back() == ' ') key.pop_back();
    out.insert(key);
  }
  return out;
}

// The quick outputs made again: their lines are the ones the documents show (the figures differ
// from run to run; the lines do not). fit, compare and sweep take minutes and are left to
// scripts/doc-outputs --write.
TEST(DocFigures, QuickOutputBlocksHaveTheLinesTheirCommandPrintsNow) {
  if (::geteuid() != 0) GTEST_SKIP() << "the documents show a root run (the tree's own cgroup); not root here";
  std::map<std::string, std::vector<std::string>> shown;
  for (const fs::path& path : user_documents()) {
    for (const Block& b : parse(path).blocks) {
      if (b.marker == "first-run" || b.marker == "budget") shown[b.marker] = b.lines;
    }
  }
  ASSERT_EQ(shown.size(), 2u);
  for (const auto& [name, lines] : shown) {
    const Result r = run({"env", "QPROF_BUILD_DIR=" + fs::path(qprof_bin()).parent_path().string(), "sh",
                          (source_dir() / "scripts" / "doc-outputs").string(), name},
                         "", 120);
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    std::vector<std::string> now;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) now.push_back(l);
    EXPECT_EQ(line_keys(lines), line_keys(now)) << name << " now prints:\n" << r.out;
  }
}

}  // namespace
}  // namespace qprof::test
