// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <new>
#include <optional>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qprof/common/safe_text.hpp"
#include "qprof/common/sigpipe.hpp"
#include "qprof/common/text_wrap.hpp"
#include "commands.hpp"
#include "completion.hpp"
#include "help_examples.hpp"
#include "habits.hpp"
#include "help_format.hpp"
#include "man_page.hpp"
#include "stderr_speaker.hpp"
#include "qprof/common/version.hpp"

namespace {

// Descriptors 0, 1 and 2 that the caller closed are opened on /dev/null before qprof opens
// anything: else the trace could become descriptor 2, and the command's stderr would write
// into it.
void open_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1) continue;
    const int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (opened < 0) _exit(2);  // no /dev/null: nothing safe can be done
    if (opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

// The one place where a failure is printed and becomes qprof's exit status: "qprof SUB: why"
// for a subcommand's, "qprof: why" before one is chosen.
int exit_status(const qprof::Result<int>& result, std::string_view subcommand = {}) {
  if (result) return *result;
  qprof::cli::stderr_speaker(std::string(subcommand)).line(result.failure().message);
  return result.failure().status;
}

// std::cout as it was (stdio's buffer: line-buffered at a terminal), with the errno of its first
// failed write kept: by the time main checks stdout, later calls have overwritten errno, and the
// reason ("No space left on device") is what the user needs.
class ErrnoKeepingBuf : public std::streambuf {
 public:
  explicit ErrnoKeepingBuf(std::streambuf* to) : to_(to) {}
  int error() const { return error_; }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::streamsize written = to_->sputn(s, n);
    if (written < n) keep();
    return written;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const int_type put = to_->sputc(traits_type::to_char_type(c));
    if (traits_type::eq_int_type(put, traits_type::eof())) keep();
    return put;
  }
  int sync() override {
    const int synced = to_->pubsync();
    if (synced != 0) keep();
    return synced;
  }

 private:
  void keep() {
    if (error_ == 0) error_ = errno != 0 ? errno : EIO;
  }
  std::streambuf* to_;
  int error_ = 0;
};

// Never destroyed: std::cout is flushed at exit, after every static of this file is gone.
ErrnoKeepingBuf& stdout_buf() {
  static ErrnoKeepingBuf* const buf = new ErrnoKeepingBuf(std::cout.rdbuf());
  return *buf;
}

// A subcommand's exit status once what it wrote to stdout is known to have arrived. Checked here,
// once for every subcommand (report, peak, list, compare, plot -o -, fit --json -, sweep...): a
// write error is exit 2 with its reason (a full disk), never exit 0 with an empty file. A reader
// that is gone (`| head`) ends qprof quietly with the status SIGPIPE would have given it: qprof
// ignores SIGPIPE so that its own results survive, and a shell's pipeline sees the usual 141.
int with_stdout_checked(int status, std::string_view subcommand) {
  errno = 0;
  std::cout.flush();
  const bool failed = std::cout.bad() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return status;
  int error = stdout_buf().error() != 0 ? stdout_buf().error() : errno;
  pollfd out{STDOUT_FILENO, 0, 0};
  if (::poll(&out, 1, 0) == 1 && (out.revents & POLLERR)) error = EPIPE;  // a pipe without reader
  if (error == EPIPE) return 128 + SIGPIPE;
  qprof::cli::stderr_speaker(std::string(subcommand))
      .line(std::string("cannot write to stdout: ") + (error != 0 ? std::strerror(error) : "a write failed"));
  return 2;
}

// The options every subcommand inherits from qprof itself (its help layout, --version).
void configure_app(CLI::App& app) {
  app.name("qprof");
  app.formatter(qprof::cli::help_formatter());  // before the subcommands, which inherit it
  app.set_version_flag(
      "--version", [] { return qprof::cli::version_text(); },
      "Print the version, the build type and the GPU backends that work here, and exit");
  app.require_subcommand(1, 1);
}

// The arguments up to "--", in the order typed, habits rewritten; what follows "--" goes to
// `invocation`.
std::vector<std::string> arguments_before_dashdash(int argc, char** argv, qprof::cli::Invocation& invocation) {
  std::vector<std::string> args(argv + 1, argv + argc);
  qprof::cli::rewrite_habits(args);
  if (auto dd = std::find(args.begin(), args.end(), "--"); dd != args.end()) {
    invocation.had_dashdash = true;
    invocation.after_dashdash.assign(dd + 1, args.end());
    args.erase(dd, args.end());
  }
  return args;
}

// One line for a bad option, and where to look: not the whole help screen. A mistyped option
// gets the nearest one, as a mistyped subcommand does. `args` (CLI11's reversed vector) must
// outlive the parse.
void set_failure_message(CLI::App& app, const std::vector<std::string>& args) {
  app.failure_message([&args](const CLI::App* failed, const CLI::Error& e) {
    std::string where = "qprof", hint;
    for (const CLI::App* sub : failed->get_subcommands()) {
      if (!sub->parsed()) continue;
      where += " " + sub->get_name();
      for (auto a = args.rbegin(); a != args.rend() && hint.empty(); ++a) {
        if (const std::string near = qprof::cli::option_suggestion(*sub, *a); !near.empty()) {
          hint = "\nDid you mean " + near + " instead of " + qprof::terminal_text(a->substr(0, 64)) + "?";
        }
      }
    }
    // As wide as the terminal, as every other message (CLI11 prints it, not the speaker), and
    // named as the subcommand's own failures are ("qprof fit: --margin: …", exit_status).
    const std::string prefix = where + ": ";
    return qprof::fit_lines(
        prefix + qprof::terminal_text(e.what()) + hint + "\nRun '" + where + " --help' for the options.",
        qprof::output_columns(STDERR_FILENO), prefix.size());
  });
}

using Adder = qprof::cli::Command (*)(CLI::App&, const qprof::cli::Invocation&);
using Subcommand = std::pair<std::string_view, Adder>;
constexpr Subcommand kSubcommands[] = {
#define QPROF_SUBCOMMAND(name) {#name, qprof::cli::add_##name},
#include "subcommands.def"
#undef QPROF_SUBCOMMAND
};

// The subcommand the first argument names (`args` reversed, as CLI11 takes them); null if none.
const Subcommand* named_subcommand(const std::vector<std::string>& args) {
  const auto named = std::find_if(std::begin(kSubcommands), std::end(kSubcommands),
                                  [&](const auto& s) { return !args.empty() && args.back() == s.first; });
  return named == std::end(kSubcommands) ? nullptr : named;
}

// Where the first argument names a subcommand, only that one is built: its options are all
// that parsing, its --help and its errors need, and building the other nine took 0.6 ms of
// every start (bench/RESULTS.md). Anything else (--help, --version, a typo, the generators
// below) gets the whole tree.
std::vector<qprof::cli::Command> add_subcommands(CLI::App& app, const qprof::cli::Invocation& invocation,
                                                 const Subcommand* named) {
  std::vector<qprof::cli::Command> commands;
  for (const auto& [name, add] : kSubcommands) {
    if (named == nullptr || name == named->first) commands.push_back(add(app, invocation));
  }
  qprof::cli::add_help_examples(app);
  return commands;
}

// qprof --help-man [SUBCOMMAND [EXTRAS_DIR]]: a manual page from the options --help shows
// (hidden: the build runs it to write the pages).
int print_man_page(const CLI::App& app, const std::vector<std::string>& args) {
  const std::string name = args.size() > 1 ? args[args.size() - 2] : "qprof";
  const std::string extras = args.size() > 2 ? args[args.size() - 3] : "";
  const CLI::App* sub = nullptr;
  if (name != "qprof") {
    try {
      sub = app.get_subcommand(name);
    } catch (const CLI::OptionNotFound&) {
      return exit_status(qprof::Failure{"--help-man: no subcommand " + name});
    }
  }
  std::cout << qprof::cli::man_page(app, sub, extras);
  return 0;
}

// The hidden generators the build runs (shell completion, manual pages): their exit status, or
// nullopt when the arguments ask for neither.
std::optional<int> run_generator(CLI::App& app, const std::vector<std::string>& args) {
  // qprof --help-completion [zsh]: the bash completion script, or zsh's
  // (hidden: the build runs them).
  if (!args.empty() && args.back() == "--help-completion") {
    std::cout << (args.size() > 1 && args[args.size() - 2] == "zsh" ? qprof::cli::zsh_completion(app)
                                                                    : qprof::cli::bash_completion(app));
    return 0;
  }
  if (!args.empty() && args.back() == "--help-man") return print_man_page(app, args);
  return std::nullopt;
}

// A subcommand's inputs as its user named them: its positional arguments, comma-separated.
std::string positional_inputs(const CLI::App& sub) {
  std::string inputs;
  for (const CLI::Option* opt : sub.get_options()) {
    if (!opt->get_positional()) continue;
    for (const std::string& r : opt->results()) inputs += (inputs.empty() ? "" : ", ") + r;
  }
  return inputs;
}

// Runs the subcommand the arguments chose; its exit status.
int run_parsed(const std::vector<qprof::cli::Command>& commands) {
  for (const auto& c : commands) {
    if (!c.app->parsed()) continue;
    try {
      return with_stdout_checked(exit_status(c.action(), c.app->get_name()), c.app->get_name());
    } catch (const std::bad_alloc&) {
      // Out of memory anywhere in a command (a chart, a table, an analysis) is exit 2 naming
      // what it read, as a bad input is, never an abort. Its inputs: the positional arguments.
      const std::string inputs = positional_inputs(*c.app);
      qprof::cli::stderr_speaker(c.app->get_name())
          .line(qprof::terminal_text(inputs.empty() ? std::string("the input") : inputs) +
                ": too large to process in memory");
      return qprof::cli::kUsageError;
    }
  }
  return qprof::cli::kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  open_standard_descriptors();
  qprof::child_process::ignore_sigpipe_in_qprof();
  std::cout.rdbuf(&stdout_buf());
  CLI::App app{"qprof: memory over time of a whole process tree (RSS, stages, peaks), mprof-compatible"};
  configure_app(app);
  qprof::cli::Invocation invocation;  // outlives the commands, which keep a reference to it
  std::vector<std::string> args = arguments_before_dashdash(argc, argv, invocation);
  const std::vector<std::string> typed = args;  // before "--", in the order typed
  std::reverse(args.begin(), args.end());       // CLI11 takes its vector in reverse order
  set_failure_message(app, args);

  const Subcommand* named = named_subcommand(args);
  const std::vector<qprof::cli::Command> commands = add_subcommands(app, invocation, named);
  if (const auto status = run_generator(app, args)) return *status;

  if (!args.empty()) {
    if (auto unknown = qprof::cli::unknown_subcommand(app, args.back())) return exit_status(std::move(*unknown));
  }
  if (named != nullptr) {
    if (auto split = qprof::cli::split_size(*app.get_subcommand(std::string(named->first)), typed))
      return exit_status(std::move(*split), named->first);
  }
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : qprof::cli::kUsageError;
  }
  return run_parsed(commands);
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
