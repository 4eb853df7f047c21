// Shape of the script: one function, _qprof. The first word completes to a subcommand; a word
// starting with '-' to that subcommand's options; the word after an option that takes a value to
// that option's choices (or to files); any other word to trace files (*.dat) for the readers and
// to a command for run; after "--", a command, then files.
#include "completion.hpp"

#include <map>
#include <sstream>

namespace qprof::cli {
namespace {

// Options whose values are a fixed list (the checks in the subcommands' files say the same).
std::string choices(const std::string& sub, const std::string& option) {
  static const std::map<std::string, std::string> common = {
      {"--metric", "rss pss uss gpu cgroup hwm_sum kernel_process"},
      {"--unit", "B KiB MiB GiB KB MB GB"},
      {"--gpu", "auto nvml amd smi none"},
      {"--panels", "memory gpu cpu io memory-kinds tasks vsz gpu-util disk memory,cpu memory,gpu memory,io memory,memory-kinds memory,disk"},
  };
  if (option == "--format") return sub == "export" ? "perfetto chrome csv json" : "text md csv json";
  if (option == "--metric" && sub == "run") return "rss pss uss all";
  const auto it = common.find(option);
  return it == common.end() ? "" : it->second;
}

std::string words(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& w : list) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
  std::ostringstream out;
  std::vector<std::string> subs;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) subs.push_back(s->get_name());
  out << "# bash completion for qprof, written by `qprof --help-completion` from its own options.\n"
         "# Installed as share/bash-completion/completions/qprof; or: source this file.\n"
         "_qprof() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} sub=${COMP_WORDS[1]}\n"
         "  local IFS=$'\\n' i dd=0\n"
         "  COMPREPLY=()\n"
         "  if [[ $COMP_CWORD -eq 1 ]]; then\n"
         "    COMPREPLY=($(IFS=' ' compgen -W '"
      << words(subs) << " --help --version' -- \"$cur\"))\n"
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
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    std::vector<std::string> opts, valued;
    std::ostringstream cases;
    for (const CLI::Option* o : s->get_options()) {
      if (o->get_group().empty() || !o->nonpositional()) continue;
      std::vector<std::string> names;
      for (const std::string& n : o->get_snames()) names.push_back("-" + n);
      for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
      opts.insert(opts.end(), names.begin(), names.end());
      if (o->get_type_size() == 0) continue;
      valued.insert(valued.end(), names.begin(), names.end());
      for (const std::string& n : names) {
        const std::string c = choices(s->get_name(), n);
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
