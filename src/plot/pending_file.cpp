#include "pending_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "qprof/plot/plot.hpp"

namespace qprof::plot::detail {
namespace {

// The named fallback's path for the signal handler (async-signal-safe: a fixed buffer, unlink).
char g_path[PATH_MAX];
volatile sig_atomic_t g_armed = 0;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[3];
bool g_installed[3] = {};

extern "C" void remove_and_die(int sig) {
  if (g_armed) ::unlink(g_path);
  ::raise(sig);  // SA_RESETHAND: the default action once this handler returns
}

// Handlers only where the disposition is the default one: a caller's own handling is kept.
void arm(const std::string& path) {
  if (path.size() >= sizeof g_path) return;
  std::memcpy(g_path, path.c_str(), path.size() + 1);
  g_armed = 1;
  for (int i = 0; i < 3; ++i) {
    struct sigaction now {};
    if (::sigaction(kSignals[i], nullptr, &now) != 0 || now.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = remove_and_die;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    g_installed[i] = ::sigaction(kSignals[i], &sa, &g_old[i]) == 0;
  }
}

void disarm() {
  for (int i = 0; i < 3; ++i) {
    if (g_installed[i]) ::sigaction(kSignals[i], &g_old[i], nullptr);
    g_installed[i] = false;
  }
  g_armed = 0;
}

}  // namespace

PendingFile::PendingFile(std::string target) : target_(std::move(target)) {
  const std::filesystem::path t(target_);
  dir_ = (t.has_parent_path() ? t.parent_path() : std::filesystem::path(".")).string();
  fd_ = ::open(dir_.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd_ >= 0) return;
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT) {
    // ENOENT: a kernel that does not know O_TMPFILE; any other error is the folder's own.
    throw PlotError("cannot write " + target_ + ": " + std::strerror(errno));
  }
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    path_ = temporary_name();
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) throw PlotError("cannot write " + target_ + ": " + std::strerror(errno));
  }
  if (fd_ < 0) throw PlotError("cannot write " + target_ + ": no free temporary name");
  arm(path_);
}

PendingFile::~PendingFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!path_.empty() && !committed_) ::unlink(path_.c_str());
  if (!path_.empty()) disarm();
}

std::string PendingFile::temporary_name() const {
  static std::random_device rd;
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, ".%08x.tmp", static_cast<unsigned>(rd()));
  return (std::filesystem::path(dir_) / ("." + std::filesystem::path(target_).filename().string() + suffix)).string();
}

void PendingFile::commit() {
  if (::fsync(fd_) != 0 && errno != EINVAL) throw PlotError("cannot write " + target_ + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || st.st_size == 0) throw PlotError("gnuplot wrote nothing to " + target_);
  if (path_.empty()) {
    // The unnamed file gets a temporary name at the last moment (linkat refuses to replace a
    // file), then takes the target's place in one rename.
    const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
    for (int attempt = 0; attempt < 100 && path_.empty(); ++attempt) {
      const std::string name = temporary_name();
      if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) path_ = name;
      else if (errno != EEXIST) throw PlotError("cannot write " + target_ + ": " + std::strerror(errno));
    }
    if (path_.empty()) throw PlotError("cannot write " + target_ + ": no free temporary name");
  }
  ::close(fd_);
  fd_ = -1;
  if (::rename(path_.c_str(), target_.c_str()) != 0) {
    throw PlotError("cannot write " + target_ + ": " + std::strerror(errno));
  }
  committed_ = true;
}

}  // namespace qprof::plot::detail
