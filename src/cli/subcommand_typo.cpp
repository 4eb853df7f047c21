// SPDX-License-Identifier: Apache-2.0
// `qprof plott x.dat`: says what the subcommands are and which one was probably meant; and
// `qprof plot --metrc`: which option was.
#include <algorithm>
#include <vector>

#include "help_examples.hpp"
#include "app_tree.hpp"

namespace qprof::cli {
namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and the swap of two
// neighbours (the typo "pelak") each cost 1.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// Only printable ASCII of what was typed reaches the terminal.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s.substr(0, 64)) out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  return out;
}

}  // namespace

std::optional<Failure> unknown_subcommand(const CLI::App& app, const std::string& word) {
  if (word.empty() || word[0] == '-') return std::nullopt;
  std::string names, best;
  std::size_t best_distance = SIZE_MAX;
  for (const CLI::App* sub : all_subcommands(app)) {
    const std::string& name = sub->get_name();
    if (name == word) return std::nullopt;
    names += (names.empty() ? "" : ", ") + name;
    const std::size_t d = edit_distance(word, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  std::string message = "unknown subcommand '" + printable(word) + "'";
  // A suggestion only when it is close: at most 2 edits, and fewer than the word's length.
  if (best_distance <= 2 && best_distance < word.size()) message += "; did you mean '" + best + "'?";
  return Failure{message + "\nThe subcommands: " + names + ". Run 'qprof SUBCOMMAND --help' for one of them."};
}

std::string option_suggestion(const CLI::App& sub, const std::string& typed) {
  if (typed.size() < 2 || typed[0] != '-') return "";
  const std::string word = typed.substr(0, typed.find('='));  // --metrc=pss
  std::string best;
  std::size_t best_distance = SIZE_MAX;
  for (const CLI::Option* opt : sub.get_options()) {
    for (const std::string& name : option_names(*opt)) {
      if (name == word) return "";             // a known option: not a typo
      if (opt->get_group().empty()) continue;  // hidden (attach's refused ones): never suggested
      const std::size_t d = edit_distance(word, name);
      if (d < best_distance) {
        best_distance = d;
        best = name;
      }
    }
  }
  // As for subcommands: at most 2 edits, and fewer than the word's letters after its dashes.
  const std::size_t letters = word.size() - word.find_first_not_of('-');
  return best_distance <= 2 && best_distance < letters ? best : "";
}

}  // namespace qprof::cli
