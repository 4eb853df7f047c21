#include <iostream>
#include <memory>
#include <stdexcept>

#include "commands.hpp"
#include "qprof/markers.hpp"
#include "qprof/run_session.hpp"

namespace qprof::cli {

Command add_run(CLI::App& app, const Invocation& invocation) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "Run a command and record the memory of its whole process tree");
  run->footer("Usage: qprof run [OPTIONS] [--] CMD [ARGS...]\nqprof exits with CMD's status (128+N if a signal killed it; 127: not found; 126: not executable).");
  run->prefix_command();  // everything from CMD on belongs to CMD, options included
  run->allow_extras();
  run->add_option("-o,--output", opts->output, "Trace file (default: qprof_YYYYMMDDhhmmss.dat)");
  run->add_option("-i,--interval,-T", opts->interval, "Seconds between samples (default 0.01)")
      ->check(CLI::Range(0.0001, 3600.0));
  run->add_option("--timeout", opts->timeout, "After this many seconds, SIGTERM the tree (then SIGKILL)")
      ->check(CLI::PositiveNumber);
  run->add_option("--kill-after", opts->kill_grace, "Grace period between SIGTERM and SIGKILL after --timeout (default 5)")
      ->check(CLI::NonNegativeNumber);
  run->add_flag("--no-wait-daemons{false}", opts->wait_daemons,
                "Stop when CMD exits, even if processes it started keep running");
  run->add_flag("-M,--multiprocess", opts->multiprocess, "Also record each process of the tree (CHLD lines, as mprof -M)");
  run->add_flag("--cgroup", opts->cgroup,
                "Put the tree in a cgroup of its own: exact membership and exact tree peak (needs root)");
  run->add_option("--marker-regex", opts->marker_regex,
                  "Regular expression with one capture group (the label) for marker lines on stderr "
                  "(default: lines starting with QPROF_MARK:)");
  run->add_option("--metric", opts->metric,
                  "rss (default, as mprof), or pss, uss, all: also record PSS and USS of the tree")
      ->check(CLI::IsMember({"rss", "pss", "uss", "all"}));
  run->add_option("--pss-interval", opts->pss_interval,
                  "Seconds between PSS/USS passes (default 0.1; a slow pass stretches it so that passes "
                  "take at most 5 % of the time)")
      ->check(CLI::Range(0.001, 3600.0));
  run->add_option("--stats-interval", opts->stats_interval,
                  "Seconds between CPU, disk I/O and high-water-mark readings (default 0.1, never below --interval)")
      ->check(CLI::Range(0.001, 3600.0));
  run->add_option("--gpu", opts->gpu,
                  "GPU memory source: auto (default: the first that works), nvml, amd, smi (nvidia-smi/rocm-smi) or none")
      ->check(CLI::IsMember({"auto", "nvml", "amd", "smi", "none"}));
  run->add_option("--gpu-interval", opts->gpu_interval,
                  "Seconds between per-process GPU queries (default 0.1; stretched so that GPU queries stay under 2 % of a core)")
      ->check(CLI::Range(0.001, 3600.0));
  run->add_flag("-q,--quiet", opts->quiet, "No summary at the end");
  // mprof's own spellings, accepted so that scripts can switch: qprof always follows children
  // and always passes the exit code on.
  run->add_flag("-C,--include-children")->description("Accepted for mprof compatibility (qprof always includes children)");
  run->add_flag("-E,--exit-code")->description("Accepted for mprof compatibility (qprof always returns CMD's status)");

  CLI::App* self = run;
  return {run, [opts, self, &invocation]() -> int {
            opts->command = invocation.command(*self);
            if (opts->command.empty()) {
              std::cerr << "qprof run: no command given\nUsage: qprof run [OPTIONS] [--] CMD [ARGS...]\n";
              return kUsageError;
            }
            // prefix_command() stops at the first word it does not know, an unknown option too.
            const std::vector<std::string> before_dashdash = self->remaining();
            if (!before_dashdash.empty() && before_dashdash.front().size() > 1 && before_dashdash.front()[0] == '-') {
              std::cerr << "qprof run: unknown option " << before_dashdash.front()
                        << " (see qprof run --help; a command starting with '-' goes after --)\n";
              return kUsageError;
            }
            if (opts->marker_regex) {
              try {
                MarkerMatcher check(*opts->marker_regex);
              } catch (const std::invalid_argument& e) {
                std::cerr << "qprof run: --marker-regex: " << e.what() << '\n';
                return kUsageError;
              }
            }
            return run_profiled(*opts);
          }};
}

}  // namespace qprof::cli
