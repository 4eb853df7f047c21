// SPDX-License-Identifier: Apache-2.0
#include "habits.hpp"

#include <cctype>

#include "app_tree.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/units.hpp"

namespace qprof::cli {
namespace {

// An option whose value is a size ("SIZE", "SIZE|PCT", "PCT|SIZE" in its type name).
bool takes_size(const CLI::Option& opt) {
  return opt.get_type_size() > 0 && opt.get_type_name().find("SIZE") != std::string::npos;
}

// A word that is a unit alone: "GB", "GiB", "G", "%". A number or a command name is not.
bool unit_word(const std::string& word) {
  if (word == "%") return true;
  if (word.empty() || word.size() > 3 || std::isdigit(static_cast<unsigned char>(word[0]))) return false;
  return parse_size("1" + word).has_value();
}

bool number_word(const std::string& word) {
  return !word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) && parse_size(word).has_value() &&
         word.find_first_not_of("0123456789.") == std::string::npos;
}

}  // namespace

void rewrite_habits(std::vector<std::string>& args) {
  if (args.empty()) return;
  if (args.front() == "version" && args.size() == 1) {
    args = {"--version"};
  } else if (args.front() == "help") {
    args.erase(args.begin());
    args.push_back("--help");
  }
}

std::optional<Failure> split_size(const CLI::App& sub, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    std::string name = args[i], value;
    std::size_t unit_at = i + 2;
    if (const std::size_t eq = name.find('='); name.starts_with("--") && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.erase(eq);
      unit_at = i + 1;
    } else if (i + 2 < args.size()) {
      value = args[i + 1];
    }
    if (unit_at >= args.size() || !number_word(value) || !unit_word(args[unit_at])) continue;
    for (const CLI::Option* opt : sub.get_options()) {
      if (!takes_size(*opt)) continue;
      for (const std::string& typed : option_names(*opt)) {
        if (typed != name) continue;
        const std::string unit = terminal_text(args[unit_at]);
        return Failure{name + " " + terminal_text(value) + " " + unit + ": a size is one word: " + name + " " +
                       terminal_text(value) + unit + " (a bare number is MiB)"};
      }
    }
  }
  return std::nullopt;
}

}  // namespace qprof::cli
