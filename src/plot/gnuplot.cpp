// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/gnuplot.hpp"

#include "qprof/common/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/error.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <gnuplot-iostream.h>
#include <iomanip>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "qprof/common/child_process.hpp"
#include "qprof/common/find_program.hpp"
#include "qprof/plot/plot.hpp"

namespace bp = boost::process;

namespace qprof::plot {
namespace {

constexpr int kHighFd = 10;  // descriptors handed to gnuplot are moved above 0–3 first

// A descriptor closed at scope exit.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset(int f = -1) {
    if (fd >= 0) ::close(fd);
    fd = f;
  }
  int release() {
    const int f = fd;
    fd = -1;
    return f;
  }
};

// A close-on-exec copy of `fd` numbered kHighFd or above.
Result<int> high_copy(int fd, const char* what) {
  const int c = ::fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
  if (c < 0) return Failure{std::string("cannot set up ") + what + ": " + std::strerror(errno)};
  return c;
}

// SIGPIPE is held back while qprof writes to gnuplot: if gnuplot stops early (an error in a
// style file), the write fails with EPIPE instead of killing qprof, and gnuplot's message says why.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    already_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~SigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (!already_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      const timespec zero{0, 0};
      sigtimedwait(&pipe, nullptr, &zero);  // ours: consume it
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t old_;
  bool already_pending_ = false;
};

enum class Encoding { text, binary };

// The script through gnuplot-iostream: the commands, and after each plot command its data sets,
// binary for gnuplot (the records of two native doubles that binFmt1d announces in the plot
// command: gnuplot reads text from a pipe one byte per system call, which made the data cost
// more than everything else) or text for a saved script (each set ended by "e").
void send(gnuplotio::Gnuplot& gp, const Script& script, Encoding encoding) {
  gp << std::defaultfloat << std::setprecision(10);  // gnuplot-iostream's default is 18 digits
  for (const ScriptChunk& c : script.chunks) {
    gp << c.commands;
    if (c.plot.empty()) continue;
    if (encoding == Encoding::binary) {
      gp << plot_command(c, [&](std::size_t i) { return "'-' binary" + gp.binFmt1d(c.data[i], "record"); });
      for (const auto& d : c.data) gp.sendBinary1d(d);
    } else {
      gp << plot_command(c, [](std::size_t) { return std::string("'-'"); });
      for (const auto& d : c.data) gp.send1d(d);
    }
  }
  gp << std::flush;
}

std::string read_all(int fd) {
  std::string out;
  ::lseek(fd, 0, SEEK_SET);
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > (1u << 20)) break;  // enough to say what went wrong
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// Starts gnuplot (through Boost.Process) with `in` as its stdin, `err` as its stderr and `out`
// (if >= 0) as its descriptor 3, all three above 3 (qprof moved them there), so that no dup2
// overwrites one before it is used. Its exec-setup hook sets PR_SET_PDEATHSIG, so that gnuplot
// dies with qprof (a qprof killed by SIGKILL included) instead of drawing on as an orphan.
// Its process id, or why it cannot be started.
Result<pid_t> spawn_gnuplot(const std::string& gnuplot, int in, int err, int out) {
  // The script is UTF-8 (`set encoding utf8`): under a locale that is not (LANG unset, LC_ALL=C,
  // as on a fresh machine or in CI), gnuplot warns "iconv failed to convert degree sign" on every
  // plot. Its locale is therefore C.UTF-8 whatever qprof's: the same text on every machine (glibc
  // has it built in since 2.35, Debian 12's; where it is missing gnuplot falls back to C and the
  // warning comes back, no worse than before).
  bp::environment env = boost::this_process::environment();
  env["LC_ALL"] = "C.UTF-8";
  // gnuplot runs ~/.gnuplot (and $XDG_CONFIG_HOME/gnuplot/gnuplotrc) before the script: a user's
  // settings, or anyone's code planted there, would change or take over qprof's chart. A HOME
  // with nothing in it gives every chart the same start. Fonts are found through the system's
  // fontconfig cache, which needs no HOME.
  env["HOME"] = "/nonexistent";
  env.erase("XDG_CONFIG_HOME");
  Result<std::unique_ptr<child_process::ExecReport>> opened = child_process::ExecReport::open();
  if (!opened) return Failure{"cannot create a pipe: " + opened.failure().message};
  child_process::ExecReport* report = opened->get();
  constexpr int kSetUp = child_process::kExec + 1;
  const pid_t parent = ::getpid();
  bp::child child(
      bp::exe = gnuplot, env, bp::ignore_error, *report,
      bp::extend::on_exec_setup = [&](auto&) {  // async-signal-safe calls only
        child_process::restore_sigpipe();
        if (::dup2(in, 0) < 0 || ::dup2(err, 2) < 0 || (out >= 0 && ::dup2(out, 3) < 0) ||
            ::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
          report->fail(kSetUp, errno);
        }
        if (::getppid() != parent) ::_exit(127);  // qprof died before the death signal was armed
      });
  const pid_t pid = child.id();
  child.detach();  // run_gnuplot reaps it, after its watchdog has stopped
  if (const std::optional<child_process::Failure> failure = report->wait()) {
    if (child.valid()) {
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    return Failure{"cannot run " + gnuplot + ": " + std::strerror(failure->error)};
  }
  return pid;
}

// Kills gnuplot with SIGKILL when it has not finished within the time given. The caller reaps
// gnuplot only after stop(): until then the PID cannot belong to anyone else.
class Watchdog {
 public:
  Watchdog(pid_t pid, double seconds) : pid_(pid) {
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    thread_ = std::thread([this, deadline] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_until(lock, deadline, [this] { return done_; })) {
        fired_ = true;
        ::kill(pid_, SIGKILL);
      }
    });
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog() { stop(); }
  // Ends the watch; true when it had to kill gnuplot.
  bool stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return fired_;
  }

 private:
  pid_t pid_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool fired_ = false;
  std::thread thread_;
};

}  // namespace

double render_timeout(const Script& script) {
  std::size_t points = 0;
  for (const ScriptChunk& c : script.chunks) {
    for (const auto& d : c.data) points += d.size();
  }
  return kRenderBaseSeconds + static_cast<double>(points) / kRenderPointsPerSecond;
}

namespace {

// The descriptors gnuplot gets: its error output (an unlinked temporary file: a pipe could fill
// up while qprof is writing), the read end of the script's pipe and the chart's output, each
// above 0–3; and the write end qprof keeps.
struct GnuplotFds {
  Fd err, pipe_read, pipe_write, out;
};

Result<void> set_up_fds(GnuplotFds& fds, int output_fd) {
  FILE* err_file = std::tmpfile();
  if (!err_file) return Failure{std::string("cannot create a temporary file: ") + std::strerror(errno)};
  Result<int> err = high_copy(fileno(err_file), "gnuplot's error output");
  std::fclose(err_file);
  if (!err) return err.failure();
  fds.err.reset(*err);
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return Failure{std::string("cannot create a pipe: ") + std::strerror(errno)};
  fds.pipe_read.reset(p[0]);
  fds.pipe_write.reset(p[1]);
  Result<int> read_end = high_copy(p[0], "a pipe");
  if (!read_end) return read_end.failure();
  fds.pipe_read.reset(*read_end);
  if (output_fd >= 0) {
    Result<int> out = high_copy(output_fd, "the output file");
    if (!out) return out.failure();
    fds.out.reset(*out);
  }
  return {};
}

// The script down the pipe to gnuplot's stdin. A gnuplot that hangs while qprof still writes is
// killed by the watchdog: the write fails (gnuplot-iostream's stream goes bad, without an
// exception), and gnuplot's status says why.
Result<void> send_script(Fd& pipe_write, pid_t pid, Watchdog& watchdog, const Script& script) {
  SigpipeBlock block;
  FILE* to_gnuplot = ::fdopen(pipe_write.fd, "w");
  if (!to_gnuplot) {
    const int e = errno;
    watchdog.stop();
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return Failure{std::string("cannot write to gnuplot: ") + std::strerror(e)};
  }
  pipe_write.release();  // the FILE owns it now
  // gnuplot-iostream closes the FILE (and so gnuplot's stdin) when `gp` goes out of scope.
  gnuplotio::Gnuplot gp(to_gnuplot);
  send(gp, script, Encoding::binary);
  return {};
}

}  // namespace

Result<std::string> find_gnuplot(const std::string& name, const std::string& who) {
  std::string path = find_program(name);
  if (!path.empty()) return path;
  const std::string missing = name.find('/') != std::string::npos ? "there is no program at '" + name + "'"
                                                                  : "there is no '" + name + "' on PATH";
  return Failure{who + " draws with gnuplot, and " + missing +
                 ": install the Debian package gnuplot-nox (apt-get install gnuplot-nox), or gnuplot"};
}

Result<void> run_gnuplot(const std::string& gnuplot, const Script& script, int output_fd, const WarningSink& warn,
                         double timeout_s) {
  if (!(timeout_s > 0)) timeout_s = render_timeout(script);
  GnuplotFds fds;
  if (Result<void> ready = set_up_fds(fds, output_fd); !ready) return ready;
  const Result<pid_t> spawned = spawn_gnuplot(gnuplot, fds.pipe_read.fd, fds.err.fd, fds.out.fd);
  if (!spawned) return spawned.failure();
  const pid_t pid = *spawned;
  fds.pipe_read.reset();
  fds.out.reset();
  Watchdog watchdog(pid, timeout_s);
  if (Result<void> sent = send_script(fds.pipe_write, pid, watchdog, script); !sent) return sent;

  // Waits for its end without reaping it, so that the watchdog can never signal a reused PID.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  const bool timed_out = watchdog.stop();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    char why[160];
    std::snprintf(why, sizeof why, "gnuplot did not finish the chart within %.*f s and was stopped (--render-timeout)",
                  timeout_s < 1 ? 3 : 0, timeout_s);
    return Failure{why};
  }
  const std::vector<std::string> said = lines_of(read_all(fds.err.fd));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    if (warn) {
      for (const std::string& l : said) warn("gnuplot: " + l);
    }
    return {};
  }
  std::string why = WIFSIGNALED(status) ? "gnuplot was killed by signal " + std::to_string(WTERMSIG(status))
                                        : "gnuplot failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  // Its last words say what went wrong; the script line it quotes can be long.
  const std::size_t from = said.size() > 12 ? said.size() - 12 : 0;
  for (std::size_t i = from; i < said.size(); ++i) why += "\n  " + said[i];
  return Failure{why};
}

Result<void> save_script(const Script& script, const std::string& path) {
  const auto failed = [&](const std::string& why) {
    return Failure{"cannot write the gnuplot script to " + path + ": " + why};
  };
  // Through common's OutputFile: a device or a folder is refused, a file replaced whole.
  Result<std::unique_ptr<OutputFile>> opened = OutputFile::open(path);
  if (!opened) return failed(opened.failure().message);
  OutputFile& file = **opened;
  // gnuplot-iostream writes to a copy of the descriptor and closes it (with fclose, which would
  // only print its failure): the file's own commit is qprof's, and a failed one is said.
  const int copy = ::fcntl(file.fd(), F_DUPFD_CLOEXEC, 0);
  FILE* stream = copy < 0 ? nullptr : ::fdopen(copy, "w");
  if (!stream) {
    const Failure f = failed(std::strerror(errno));
    if (copy >= 0) ::close(copy);
    return f;
  }
  bool written;
  {
    gnuplotio::Gnuplot gp(stream);
    send(gp, script, Encoding::text);  // a script to read and edit
    written = static_cast<bool>(gp);
  }
  if (!written) return failed(std::strerror(errno));
  if (Result<void> committed = file.commit(); !committed) return failed(committed.failure().message);
  return {};
}

}  // namespace qprof::plot
