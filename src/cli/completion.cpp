// SPDX-License-Identifier: Apache-2.0
// bash: one function, _qprof. The first word completes to a subcommand; a word
// starting with '-' to that subcommand's options; the word after an option that takes a value to
// that option's choices (or to files); any other word to trace files (*.dat) for the readers and
// to a command for run; after "--", a command, then files.
// zsh: a completion function for compsys (#compdef qprof), the same lists through _arguments, with
// each option's description from --help.
#include "completion.hpp"
#include "app_tree.hpp"

#include <map>
#include <sstream>
#include <string_view>

namespace qprof::cli {
namespace {

// Options whose values are a fixed list (the checks in the subcommands' files say the same).
std::string listed_choices(const std::string& sub, const std::string& option) {
  static const std::map<std::string, std::string> common = {
      {"--metric", "rss pss uss gpu cgroup hwm_sum kernel_process anon file shmem swap"},
      {"--unit", "B KiB MiB GiB KB MB GB"},
      {"--gpu", "auto nvml amd smi none"},
      {"--panels",
       "memory gpu cpu io memory-kinds tasks vsz gpu-util disk memory,cpu memory,gpu memory,io memory,memory-kinds "
       "memory,disk"},
  };
  if (option == "--format") return sub == "export" ? "perfetto chrome csv json" : "text md csv json";
  if (option == "--metric" && sub == "run") return "rss pss uss all";
  if (option == "--metric" && sub == "plot") return "rss pss uss gpu cgroup";
  const auto it = common.find(option);
  return it == common.end() ? "" : it->second;
}

// An option's choices: the list above, or those of its CLI11 check ("TEXT:{wall,start}").
std::string choices(const std::string& sub, const std::string& option, const CLI::Option& o) {
  std::string listed = listed_choices(sub, option);
  if (!listed.empty()) return listed;
  const std::string type = o.get_type_name();
  const std::size_t open = type.find(":{"), close = type.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  std::string out = type.substr(open + 2, close - open - 2);
  for (char& c : out) {
    if (c == ',') c = ' ';
  }
  return out;
}

// Whether the word after the option is its value. A flag expects none (CLI11 gives its flags a
// type size of 1 and an expected count of 0).
bool takes_value(const CLI::Option& o) { return o.get_expected_max() != 0; }

std::string words(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& w : list) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Text inside single quotes in zsh: a quote closes, writes a quoted quote, opens again.
std::string zsh_quoted(std::string_view text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// An option's description for _arguments' brackets: its first line, brackets and backslashes
// escaped (a ']' would end the description), cut after about 70 bytes, never inside a UTF-8
// character (some have "…").
std::string zsh_description(std::string_view text) {
  text = text.substr(0, text.find('\n'));
  std::string out;
  for (const char c : text) {
    const bool continuation = (static_cast<unsigned char>(c) & 0xC0) == 0x80;
    if (out.size() >= 70 && !continuation) {
      out += "...";
      break;
    }
    if (c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// What follows an option's description: nothing for a flag; its choices, or files.
std::string zsh_value(const std::string& sub, const std::string& name, const CLI::Option& o) {
  if (!takes_value(o)) return "";
  const std::string c = choices(sub, name, o);
  std::string value = name.substr(name.find_first_not_of('-'));
  return ":" + value + ":" + (c.empty() ? std::string("_files") : "(" + c + ")");
}

// The words after a subcommand's options: a command for run, a PID for attach, traces for the
// readers, nothing for those that take none.
std::string zsh_arguments(const std::string& sub) {
  if (sub == "run" || sub == "fit" || sub == "sweep") return "'*::command:_normal'";
  if (sub == "attach") return "':process:_pids'";
  if (sub == "list" || sub == "clean") return "";
  if (sub == "mark") return "':label: '";
  return "'*:trace:_files -g \"*.dat(-.)\"'";
}

}  // namespace

std::string zsh_completion(const CLI::App& app) {
  std::ostringstream out;
  out << "#compdef qprof\n"
         "# zsh completion for qprof, written by `qprof --help-completion zsh` from its own options.\n"
         "# Installed as share/zsh/vendor-completions/_qprof; or put its folder on $fpath before compinit.\n"
         "_qprof() {\n"
         "  local -a subcommands\n"
         "  subcommands=(\n";
  for (const CLI::App* s : all_subcommands(app)) {
    std::string d = s->get_description();
    d = d.substr(0, d.find('\n'));
    out << "    " << zsh_quoted(s->get_name() + ":" + d) << "\n";
  }
  out << "  )\n"
         "  if (( CURRENT == 2 )); then\n"
         "    _arguments '(- *)'{-h,--help}'[print the help and exit]' '(- *)--version[print the version and exit]' "
         "\\\n"
         "      ':subcommand:{_describe -t commands \"qprof subcommand\" subcommands}'\n"
         "    return\n"
         "  fi\n"
         "  local sub=$words[2]\n"
         "  shift words\n"
         "  (( CURRENT-- ))\n"
         "  curcontext=\"${curcontext%:*:*}:qprof-$sub:\"\n"
         "  case $sub in\n";
  for (const CLI::App* s : all_subcommands(app)) {
    out << "    " << s->get_name() << ")\n      _arguments -s -S";
    for (const CLI::Option* o : s->get_options()) {
      if (o->get_group().empty() || !o->nonpositional()) continue;
      const std::vector<std::string> names = option_names(*o);
      const std::string description = "[" + zsh_description(o->get_description()) + "]";
      // Any option may be given again (CLI11 takes the last, or each of a list): '*'.
      for (const std::string& n : names) {
        out << " \\\n        " << zsh_quoted("*" + n + description + zsh_value(s->get_name(), n, *o));
      }
    }
    const std::string rest = zsh_arguments(s->get_name());
    if (!rest.empty()) out << " \\\n        " << rest;
    out << "\n      ;;\n";
  }
  out << "  esac\n"
         "}\n"
         "_qprof \"$@\"\n";
  return out.str();
}

std::string bash_completion(const CLI::App& app) {
  std::ostringstream out;
  std::vector<std::string> subs;
  for (const CLI::App* s : all_subcommands(app)) subs.push_back(s->get_name());
  out << "# bash completion for qprof, written by `qprof --help-completion` from its own options.\n"
         "# Installed as share/bash-completion/completions/qprof; or: source this file.\n"
         "_qprof() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} sub=${COMP_WORDS[1]}\n"
         "  local IFS=$'\\n' i dd=0\n"
         "  COMPREPLY=()\n"
         "  if [[ $COMP_CWORD -eq 1 ]]; then\n"
         "    COMPREPLY=($(IFS=' ' compgen -W '"
      << words(subs)
      << " --help --version' -- \"$cur\"))\n"
         "    return\n"
         "  fi\n"
         "  for ((i = 2; i < COMP_CWORD; i++)); do\n"
         "    [[ ${COMP_WORDS[i]} == -- ]] && { dd=$i; break; }\n"
         "  done\n"
         "  if [[ $dd -gt 0 ]]; then\n"
         "    if [[ $((dd + 1)) -eq $COMP_CWORD ]]; then COMPREPLY=($(compgen -c -- \"$cur\"));\n"
         "    else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
         "    return\n"
         "  fi\n"
         "  local opts= valued= choices=\n"
         "  case $sub in\n";
  for (const CLI::App* s : all_subcommands(app)) {
    std::vector<std::string> opts, valued;
    std::ostringstream cases;
    for (const CLI::Option* o : s->get_options()) {
      if (o->get_group().empty() || !o->nonpositional()) continue;
      const std::vector<std::string> names = option_names(*o);
      opts.insert(opts.end(), names.begin(), names.end());
      if (!takes_value(*o)) continue;
      valued.insert(valued.end(), names.begin(), names.end());
      for (const std::string& n : names) {
        const std::string c = choices(s->get_name(), n, *o);
        if (!c.empty()) cases << "        " << n << ") choices='" << c << "' ;;\n";
      }
    }
    out << "    " << s->get_name() << ")\n"
        << "      opts='" << words(opts) << "'\n"
        << "      valued=' " << words(valued) << " '\n";
    const std::string c = cases.str();
    if (!c.empty()) out << "      case $prev in\n" << c << "      esac\n";
    out << "      ;;\n";
  }
  out << "    *) return ;;\n"
         "  esac\n"
         "  if [[ $valued == *\" $prev \"* ]]; then\n"
         "    if [[ -n $choices ]]; then COMPREPLY=($(IFS=' ' compgen -W \"$choices\" -- \"$cur\"));\n"
         "    else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
         "    return\n"
         "  fi\n"
         "  if [[ $cur == -* ]]; then\n"
         "    COMPREPLY=($(IFS=' ' compgen -W \"$opts\" -- \"$cur\"))\n"
         "    return\n"
         "  fi\n"
         "  case $sub in\n"
         "    run) COMPREPLY=($(compgen -c -- \"$cur\")) ;;\n"
         "    list|clean) ;;\n"
         "    *) COMPREPLY=($(compgen -f -X '!*.dat' -- \"$cur\") $(compgen -d -- \"$cur\")) ;;\n"
         "  esac\n"
         "}\n"
         "complete -o filenames -F _qprof qprof\n";
  return out.str();
}

}  // namespace qprof::cli
