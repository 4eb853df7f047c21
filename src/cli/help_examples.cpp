// SPDX-License-Identifier: Apache-2.0
// Worked examples at the end of each subcommand's --help (and so of its man page): the first
// thing a new user looks for.
#include "help_examples.hpp"
#include "app_tree.hpp"

#include <map>
#include <string>

namespace qprof::cli {
namespace {

const std::map<std::string, std::string>& examples() {
  static const std::map<std::string, std::string> table = {
      {"run",
       "  qprof run -o train.dat -- python3 train.py --epochs 3\n"
       "  qprof run train.py          # a .py runs with python3 from PATH, as in mprof\n"
       "  qprof run --metric all --max-peak 4GiB --yaml profile.yaml -- ./bench"},
      {"attach",
       "  qprof attach 4242 -o train.dat     # until process 4242 exits, or Ctrl-C\n"
       "  qprof attach --timeout 600 --metric all 4242\n"
       "  qprof attach --timeout 10m -o train.dat $(pgrep -f train.py)"},
      {"peak", "  qprof peak train.dat\n  qprof peak -- ./bench      # prints the peak alone"},
      {"report", "  qprof report train.dat\n  qprof report --format md train.dat > PROFILE.md"},
      {"compare",
       "  qprof compare before.dat after.dat\n"
       "  qprof compare --run 'python3 old.py' --run 'python3 new.py' --repeat 3"},
      {"plot", "  qprof plot train.dat -o train.png\n  qprof plot before.dat after.dat --facet -o both.svg"},
      {"export", "  qprof export train.dat --format perfetto -o train.json"},
      {"list", "  qprof list --dir runs/\n  qprof list runs/*.dat        # traces named with -o"},
      {"clean", "  qprof clean --older-than 7d --dry-run"},
      {"fit",
       "  qprof fit -- python3 calibrate.py --workers 4\n"
       "  qprof fit --max-slowdown 2 --json fit.json --plot fit.png -- ./bench"},
      {"mark",
       "  qprof mark --sync Load End        # in a script that qprof run started\n"
       "  qprof run -- sh -c 'qprof mark Load Start; ./load; qprof mark --sync Load End'"},
      {"sweep",
       "  qprof sweep -p workers=1,2,4,8 --limit 16G -- python3 train.py -w {workers}\n"
       "  qprof sweep -p n=64,128,256 --env NSAMPLES={n} --repeat 3 -- ./calibrate.sh"},
  };
  return table;
}

}  // namespace

void add_help_examples(CLI::App& app) {
  for (CLI::App* sub : all_subcommands(app)) {
    const auto it = examples().find(sub->get_name());
    if (it == examples().end()) continue;
    const std::string footer = sub->get_footer();
    // One heading for every command, whether it has one example or three.
    sub->footer(footer + (footer.empty() ? "" : "\n") + "Examples:\n" + it->second);
  }
}

}  // namespace qprof::cli
