#include "qprof/plot/gnuplot.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "qprof/plot/plot.hpp"

extern char** environ;

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

// A close-on-exec copy of `fd` numbered kHighFd or above; throws PlotError.
int high_copy(int fd, const char* what) {
  const int c = ::fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
  if (c < 0) throw PlotError(std::string("cannot set up ") + what + ": " + std::strerror(errno));
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

// The whole script as gnuplot reads it from qprof: the commands, and after each plot command its
// data sets in binary, the records of two native doubles that the plot command's
// "format='%double%double' record=(N)" announces. (Script::text() is the same program with its
// data as text, what --script saves.)
std::string binary_script(const Script& script) {
  std::ostringstream out;
  for (const ScriptChunk& c : script.chunks) {
    out << c.commands;
    if (c.plot.empty()) continue;
    out << plot_command(c, [&](std::size_t i) {
      return "'-' binary format='%double%double' record=(" + std::to_string(c.data[i].size()) + ") ";
    });
    for (const auto& d : c.data) {
      for (const auto& [x, y] : d) {
        const double pair[2] = {x, y};
        out.write(reinterpret_cast<const char*>(pair), sizeof pair);
      }
    }
  }
  return out.str();
}

// Writes all of `text` to `fd`; false when it could not (gnuplot stopped reading: its exit
// status and messages say why).
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
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


// Starts gnuplot with `in` as its stdin, `err` as its stderr and `out` (if >= 0) as its
// descriptor 3. fork and exec rather than posix_spawn, for one thing posix_spawn cannot do:
// PR_SET_PDEATHSIG, so that gnuplot dies with qprof (a qprof killed by SIGKILL included) instead
// of drawing on as an orphan. Throws PlotError when it cannot be started.
pid_t spawn_gnuplot(const std::string& gnuplot, int in, int err, int out) {
  int report[2];  // exec's failure comes back through a close-on-exec pipe
  if (::pipe2(report, O_CLOEXEC) != 0) throw PlotError(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::string arg0 = gnuplot;
  char* argv[] = {arg0.data(), nullptr};
  // The script is UTF-8 (`set encoding utf8`): under a locale that is not (LANG unset, LC_ALL=C,
  // as on a fresh machine or in CI), gnuplot warns "iconv failed to convert degree sign" on every
  // plot. Its locale is therefore C.UTF-8 whatever qprof's: the same text on every machine (glibc
  // has it built in since 2.35, Debian 12's; where it is missing gnuplot falls back to C and the
  // warning comes back, no worse than before).
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LC_ALL=", 7) != 0) env_text.emplace_back(*e);
  }
  env_text.emplace_back("LC_ALL=C.UTF-8");
  std::vector<char*> envp;
  for (std::string& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(report[0]);
    ::close(report[1]);
    throw PlotError("cannot run " + gnuplot + ": " + std::strerror(e));
  }
  if (pid == 0) {  // the child: async-signal-safe calls only
    int e = 0;
    if (::dup2(in, 0) < 0 || ::dup2(err, 2) < 0 || (out >= 0 && ::dup2(out, 3) < 0) ||
        ::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
      e = errno;
    } else if (::getppid() != parent) {
      ::_exit(127);  // qprof died before the death signal was armed
    } else {
      ::execve(gnuplot.c_str(), argv, envp.data());
      e = errno;
    }
    [[maybe_unused]] const ssize_t n = ::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(report[1]);
  int child_errno = 0;
  ssize_t n;
  while ((n = ::read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw PlotError("cannot run " + gnuplot + ": " + std::strerror(child_errno));
  }
  return pid;
}

// Kills gnuplot with SIGKILL when it has not finished within the time given. The caller reaps
// gnuplot only after stop(): until then the PID cannot belong to anyone else.
class Watchdog {
 public:
  Watchdog(pid_t pid, double seconds) : pid_(pid) {
    const auto deadline = std::chrono::steady_clock::now() +
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

void run_gnuplot(const std::string& gnuplot, const Script& script, int output_fd, const WarningSink& warn,
                 double timeout_s) {
  if (!(timeout_s > 0)) timeout_s = render_timeout(script);
  // Its messages go to an unlinked temporary file: a pipe could fill up while qprof is writing.
  FILE* err_file = std::tmpfile();
  if (!err_file) throw PlotError(std::string("cannot create a temporary file: ") + std::strerror(errno));
  Fd err(high_copy(fileno(err_file), "gnuplot's error output"));
  std::fclose(err_file);

  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw PlotError(std::string("cannot create a pipe: ") + std::strerror(errno));
  Fd pipe_read(p[0]), pipe_write(p[1]);
  pipe_read.reset(high_copy(p[0], "a pipe"));
  Fd out;
  if (output_fd >= 0) out.reset(high_copy(output_fd, "the output file"));

  const pid_t pid = spawn_gnuplot(gnuplot, pipe_read.fd, err.fd, out.fd);
  pipe_read.reset();
  out.reset();
  Watchdog watchdog(pid, timeout_s);

  {
    // A gnuplot that hangs while qprof still writes is killed by the watchdog: the write fails.
    SigpipeBlock block;
    write_all(pipe_write.fd, binary_script(script));
    pipe_write.reset();  // gnuplot's end of input
  }

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
    std::snprintf(why, sizeof why, "gnuplot did not finish the chart within %.0f s and was stopped (--render-timeout)",
                  timeout_s);
    throw PlotError(why);
  }
  const std::vector<std::string> said = lines_of(read_all(err.fd));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    if (warn) {
      for (const std::string& l : said) warn("gnuplot: " + l);
    }
    return;
  }
  std::string why = WIFSIGNALED(status) ? "gnuplot was killed by signal " + std::to_string(WTERMSIG(status))
                                        : "gnuplot failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  // Its last words say what went wrong; the script line it quotes can be long.
  const std::size_t from = said.size() > 12 ? said.size() - 12 : 0;
  for (std::size_t i = from; i < said.size(); ++i) why += "\n  " + said[i];
  throw PlotError(why);
}

void save_script(const Script& script, const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw PlotError("cannot write the gnuplot script to " + path + ": " + std::strerror(errno));
  Fd file(fd);
  if (!write_all(fd, script.text()) || ::close(file.release()) != 0) {
    throw PlotError("cannot write the gnuplot script to " + path + ": " + std::strerror(errno));
  }
}

}  // namespace qprof::plot
