// SPDX-License-Identifier: Apache-2.0
// The page's parts: NAME from the description, SYNOPSIS from the footer's "Usage:" line,
// DESCRIPTION from the rest of the footer, OPTIONS from the option list (what --help shows, hidden
// options left out as --help leaves them out). The build appends hand-written sections (man/*.man).
#include "man_page.hpp"
#include "app_tree.hpp"
#include "help_format.hpp"

#include <fstream>
#include <sstream>

#include "qprof/common/version.hpp"

namespace qprof::cli {
namespace {

// Text as troff reads it: backslashes escaped, '-' as a minus (copy-pasteable options), no line
// starting with a control character.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// "Usage: qprof plot FILE [FILE...]\nrest…" → ("qprof plot FILE [FILE...]", "rest…"); further usage
// lines ("       qprof peak -- CMD") join the first, one per line.
std::pair<std::string, std::string> split_footer(const std::string& footer) {
  const std::string usage = "Usage: ";
  if (!footer.starts_with(usage)) return {"", footer};
  std::istringstream in(footer.substr(usage.size()));
  std::string line, synopsis, rest;
  bool in_usage = true;
  while (std::getline(in, line)) {
    if (in_usage && (synopsis.empty() || line.starts_with("       qprof "))) {
      const std::size_t first = line.find_first_not_of(' ');
      synopsis += (synopsis.empty() ? "" : "\n.br\n") + line.substr(first == std::string::npos ? 0 : first);
    } else {
      in_usage = false;
      rest += line + "\n";
    }
  }
  return {synopsis, rest};
}

// Usage lines, "\n.br\n" between them kept as the request it is.
std::string synopsis_roff(const std::string& synopsis) {
  std::string out;
  std::size_t start = 0;
  const std::string br = "\n.br\n";
  while (true) {
    const std::size_t at = synopsis.find(br, start);
    out += roff(synopsis.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    out += br;
    start = at + br.size();
  }
}

// Lines of the footer joined into paragraphs: the footer is wrapped for a terminal, man wraps again.
std::string paragraphs(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out += roff(line) + "\n";
  return out;
}

void options_section(std::ostringstream& out, const CLI::App& app) {
  bool any_positional = false;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;
    if (opt->get_positional() && opt->nonpositional() == false) {
      if (!any_positional) out << ".SH ARGUMENTS\n";
      any_positional = true;
      out << ".TP\n\\fI" << roff(opt->get_name(true, false)) << "\\fR\n" << roff(opt->get_description()) << "\n";
    }
  }
  out << ".SH OPTIONS\n";
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty() || !opt->nonpositional()) continue;
    out << ".TP\n";
    std::string line;
    for (const std::string& n : opt->get_snames()) line += (line.empty() ? "\\fB\\-" : ", \\fB\\-") + roff(n) + "\\fR";
    for (const std::string& n : opt->get_lnames())
      line += (line.empty() ? "\\fB\\-\\-" : ", \\fB\\-\\-") + roff(n) + "\\fR";
    if (const std::string value = value_name(*opt); !value.empty()) line += " \\fI" + roff(value) + "\\fR";
    out << line << "\n" << roff(opt->get_description()) << "\n";
  }
}

void extras_and_see_also(std::ostringstream& out, const CLI::App& app, const std::string& page,
                         const std::string& extras_dir) {
  if (!extras_dir.empty()) {
    std::ifstream extra(extras_dir + "/" + page + ".man");
    if (extra) out << extra.rdbuf();
  }
  out << ".SH SEE ALSO\n";
  std::string refs;
  if (page != "qprof") refs = "\\fBqprof\\fR(1)";
  for (const CLI::App* s : all_subcommands(app)) {
    if ("qprof-" + s->get_name() == page) continue;
    refs += (refs.empty() ? "" : ",\n") + std::string("\\fBqprof\\-") + roff(s->get_name()) + "\\fR(1)";
  }
  out << refs << ",\n\\fBmprof\\fR(1), \\fBgnuplot\\fR(1)\n";
}

}  // namespace

std::string man_page(const CLI::App& app, const CLI::App* sub, const std::string& extras_dir) {
  std::ostringstream out;
  const std::string version = "qprof " + std::string(kVersion);
  if (sub == nullptr) {
    out << ".TH QPROF 1 \"\" \"" << version << "\" \"User Commands\"\n"
        << ".SH NAME\nqprof \\- " << roff(app.get_description().substr(app.get_description().find(": ") + 2)) << "\n"
        << ".SH SYNOPSIS\n";
    for (const CLI::App* s : all_subcommands(app)) {
      out << ".br\n" << synopsis_roff(split_footer(s->get_footer()).first) << "\n";
    }
    out << ".SH COMMANDS\n";
    for (const CLI::App* s : all_subcommands(app)) {
      out << ".TP\n\\fBqprof " << roff(s->get_name()) << "\\fR\n"
          << roff(s->get_description()) << "; see \\fBqprof\\-" << roff(s->get_name()) << "\\fR(1).\n";
    }
    options_section(out, app);
    extras_and_see_also(out, app, "qprof", extras_dir);
    return out.str();
  }
  const std::string name = "qprof-" + sub->get_name();
  const auto [usage, rest] = split_footer(sub->get_footer());
  out << ".TH " << roff(upper(name)) << " 1 \"\" \"" << version << "\" \"User Commands\"\n"
      << ".SH NAME\n"
      << roff(name) << " \\- " << roff(sub->get_description()) << "\n"
      << ".SH SYNOPSIS\n"
      << synopsis_roff(usage) << "\n"
      << ".SH DESCRIPTION\n"
      << paragraphs(rest);
  options_section(out, *sub);
  extras_and_see_also(out, app, name, extras_dir);
  return out.str();
}

}  // namespace qprof::cli
