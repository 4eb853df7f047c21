#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "qprof/common/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"qprof: memory over time of a whole process tree (RSS, stages, peaks), mprof-compatible"};
  app.name("qprof");
  app.set_version_flag("--version", std::string("qprof ") + std::string(qprof::kVersion));
  app.require_subcommand(1, 1);
  // One line for a bad option, and where to look: not the whole help screen.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    std::string where = "qprof";
    for (const CLI::App* sub : failed->get_subcommands()) {
      if (sub->parsed()) where += " " + sub->get_name();
    }
    return "qprof: " + std::string(e.what()) + "\nRun '" + where + " --help' for the options.\n";
  });

  qprof::cli::Invocation invocation;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (auto dd = std::find(args.begin(), args.end(), "--"); dd != args.end()) {
    invocation.had_dashdash = true;
    invocation.after_dashdash.assign(dd + 1, args.end());
    args.erase(dd, args.end());
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes its vector in reverse order

  std::vector<qprof::cli::Command> commands;
  commands.push_back(qprof::cli::add_run(app, invocation));
  commands.push_back(qprof::cli::add_peak(app, invocation));
  commands.push_back(qprof::cli::add_report(app, invocation));
  commands.push_back(qprof::cli::add_compare(app, invocation));
  commands.push_back(qprof::cli::add_plot(app, invocation));

  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : qprof::cli::kUsageError;
  }
  for (const auto& c : commands) {
    if (c.app->parsed()) return c.action();
  }
  return qprof::cli::kUsageError;
}

namespace qprof::cli {

std::vector<std::string> Invocation::command(const CLI::App& sub) const {
  std::vector<std::string> cmd = sub.remaining();
  if (had_dashdash) {
    if (!cmd.empty()) cmd.push_back("--");
    cmd.insert(cmd.end(), after_dashdash.begin(), after_dashdash.end());
  }
  return cmd;
}

}  // namespace qprof::cli
