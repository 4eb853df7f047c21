// SPDX-License-Identifier: Apache-2.0
// CLI11 writes "Usage: qprof run [OPTIONS]" (no CMD), "--no-wait-daemons{false}", "--attach INT",
// "--pivot TEXT x 2", "--yaml-stream Needs: --yaml": its own machinery, not what a user types.
// This formatter writes what each command takes, in the words its descriptions use.
#include "help_format.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <string_view>

#include "qprof/common/text_wrap.hpp"

namespace qprof::cli {
namespace {

// Values named by the option (its first long name): what CLI11 only knows as TEXT or INT.
const std::map<std::string, std::string, std::less<>>& named_values() {
  static const std::map<std::string, std::string, std::less<>> table = {
      {"output", "FILE"},
      {"yaml", "FILE"},
      {"json", "FILE"},
      {"csv", "FILE"},
      {"plot", "FILE"},
      {"script", "FILE"},
      {"style", "FILE"},
      {"baseline", "FILE"},
      {"gnuplot", "PROGRAM"},
      {"title", "TITLE"},
      {"dir", "DIR"},
      {"output-dir", "DIR"},
      {"output-prefix", "PREFIX"},
      {"host-name", "NAME"},
      {"marker-regex", "REGEX"},
      {"mark-fifo", "PATH"},
      {"stage", "NAME"},
      {"table", "TABLE"},
      {"panels", "PANEL,..."},
      {"window", "T0,T1"},
      {"resolution", "SIZE|PCT"},
      {"unit", "UNIT"},
      {"metric", "METRIC"},
      {"attach", "PID"},
      {"repeat", "N"},
      {"runs-max", "N"},
      {"keep", "N"},
      {"max-slowdown", "FACTOR"},
      {"fit-runs-max", "N"},
      {"fit-max-slowdown", "FACTOR"},
      {"render-timeout", "DURATION"},
      {"older-than", "AGE"},
      {"pivot", "ROWS,COLUMNS"},
      {"sweep", "NAME"},
      {"at", "VALUE"},
      {"run", "CMD"},
      {"label", "LABEL"},
      {"env", "NAME=VALUE"},
      {"param", "NAME=V1,V2,..."},
      {"size", "WIDTHxHEIGHT"},
      {"watch-dir", "DIR"},
      {"format", "FORMAT"},
  };
  return table;
}

// CLI11's names of plain types, which say nothing a user needs.
bool generic(std::string_view type) {
  return type == "TEXT" || type == "INT" || type == "UINT" || type == "FLOAT" || type.empty();
}

// The usage lines at the head of a footer ("Usage: …" and the "       qprof …" that follow), and
// the footer's rest.
std::pair<std::string, std::string> split_usage(const std::string& footer) {
  if (!footer.starts_with("Usage: ")) return {"", footer};
  std::istringstream in(footer);
  std::string line, usage, rest;
  bool in_usage = true;
  while (std::getline(in, line)) {
    if (in_usage && (usage.empty() || line.starts_with("       qprof "))) {
      usage += line + "\n";
    } else {
      in_usage = false;
      rest += (rest.empty() ? "" : "\n") + line;
    }
  }
  return {usage, rest};
}

// The width help is wrapped to: the terminal's, 80 into a pipe, and never wider than 100
// columns (longer lines read badly).
std::size_t help_width() { return std::min<std::size_t>(output_columns(STDOUT_FILENO), 100); }

// `text`'s paragraphs (split at '\n') wrapped to `width`, every line indented by `indent`.
std::string wrap_paragraphs(const std::string& text, std::size_t width, std::size_t indent) {
  std::istringstream in(text);
  std::string paragraph, out;
  while (std::getline(in, paragraph)) out += paragraph.empty() ? "\n" : wrap_text(paragraph, width, indent, indent);
  return out;
}

// "  NAME   description…": the description in the column from `column` on, wrapped to `width`;
// under the name when the name reaches the column.
std::string help_entry(const std::string& name, const std::string& description, std::size_t column, std::size_t width) {
  std::string head = "  " + name;
  if (description.empty()) return head + "\n";
  std::string body = wrap_paragraphs(description, width, column);
  if (text_columns(head) >= column) return head + "\n" + body;
  return head + body.substr(text_columns(head));  // the name takes the first line's indent
}

// A footer's prose re-flowed to `width`: lines that start at the margin join into paragraphs
// (a blank line or a heading such as "Examples:" ends one); indented lines (examples, lists)
// stay as they are, and wrap under their own indent where they are too long.
std::string wrap_footer(const std::string& footer, std::size_t width) {
  std::istringstream in(footer);
  std::string line, paragraph, out;
  const auto flush = [&] {
    if (!paragraph.empty()) out += wrap_text(paragraph, width);
    paragraph.clear();
  };
  while (std::getline(in, line)) {
    const bool indented = !line.empty() && line.front() == ' ';
    if (line.empty() || indented || line.back() == ':') {
      flush();
      const std::size_t indent = std::min(line.find_first_not_of(' '), width / 2);
      out += text_columns(line) <= width ? line + "\n" : wrap_text(line, width, indent, indent + 2);
    } else {
      paragraph += (paragraph.empty() ? "" : " ") + line;
    }
  }
  flush();
  return out;
}

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_description(const CLI::App* app) const override {
    const std::string description = CLI::Formatter::make_description(app);
    return description.empty() ? description : wrap_paragraphs(description, help_width(), 0);
  }
  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return help_entry(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt),
                      get_column_width(), help_width());
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    return help_entry(sub->get_display_name(true), sub->get_description(), get_column_width(), help_width());
  }
  std::string make_usage(const CLI::App* app, std::string name) const override {
    const auto [usage, rest] = split_usage(app->get_footer());
    return fit_lines(usage.empty() ? CLI::Formatter::make_usage(app, std::move(name)) : usage, help_width());
  }
  std::string make_footer(const CLI::App* app) const override {
    const std::string rest = split_usage(app->get_footer()).second;
    return rest.empty() ? std::string() : wrap_footer(rest, help_width());
  }
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    if (is_positional) {
      // As the usage line names them: "files" is FILE..., "trace" TRACE.
      const bool several = opt->get_expected_max() > 1;
      if (several && name.size() > 1 && name.back() == 's') name.pop_back();
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return several ? name + "..." : name;
    }
    // "--no-wait-daemons{false}": CLI11's mark of a flag that stores false.
    for (std::size_t open; (open = name.find('{')) != std::string::npos;) {
      const std::size_t close = name.find('}', open);
      if (close == std::string::npos) break;
      name.erase(open, close - open + 1);
    }
    return name;
  }
  std::string make_option_opts(const CLI::Option* opt) const override {
    const std::string value = value_name(*opt);
    if (value.empty()) return "";
    return " " + value;  // repeatable options say so in their description
  }
};

}  // namespace

std::string value_name(const CLI::Option& opt) {
  if (opt.get_type_size() == 0 || opt.get_type_name().empty()) return "";  // a flag
  const std::vector<std::string>& lnames = opt.get_lnames();
  if (!lnames.empty()) {
    // Formats and units the validator lists ({perfetto,chrome,…}) say more than the word.
    const std::string type = opt.get_type_name();
    const std::size_t colon = type.find(':');
    const std::string checked = colon == std::string::npos ? "" : type.substr(colon + 1);
    if (checked.starts_with("{")) return checked.substr(0, checked.find('}') + 1);
    const auto it = named_values().find(lnames.front());
    if (it != named_values().end()) return it->second;
    if (!checked.empty()) return checked;
    return generic(type) ? "VALUE" : type;
  }
  return "";  // a positional: its name is all there is
}

std::shared_ptr<CLI::Formatter> help_formatter() { return std::make_shared<HelpFormatter>(); }

}  // namespace qprof::cli
