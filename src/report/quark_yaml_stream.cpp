// Atomic file replacement and the --yaml-stream rewriter.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <system_error>

#include "qprof/trace/format.hpp"
#include "qprof/report/quark_yaml.hpp"

namespace qprof::report {
namespace {

// After a rewrite that took d, the next waits until 9·d has passed: at most 10 % of a core.
constexpr int kPauseFactor = 9;

// A file of our own next to `path` (same directory, so that rename() is atomic): ".NAME.tmp.PID.N".
int create_temp_beside(const std::string& path, std::string& temp) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path p(path);
  if (std::filesystem::is_directory(p)) {
    throw std::system_error(EISDIR, std::generic_category(), "cannot write " + path);
  }
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  temp = (dir / ("." + p.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                 std::to_string(counter++)))
             .string();
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot write " + path);
  return fd;
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view text) {
  std::string temp;
  const int fd = create_temp_beside(path, temp);
  std::size_t done = 0;
  int error = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    throw std::system_error(error, std::generic_category(), "cannot write " + path);
  }
}

void check_writable(const std::string& path) {
  std::string temp;
  ::close(create_temp_beside(path, temp));
  ::unlink(temp.c_str());
}

QuarkYamlStream::QuarkYamlStream(std::string trace_path, std::string yaml_path)
    : trace_path_(std::move(trace_path)), yaml_path_(std::move(yaml_path)), thread_([this] { loop(); }) {}

QuarkYamlStream::~QuarkYamlStream() { finish(); }

void QuarkYamlStream::checkpoint() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = true;
  }
  cv_.notify_one();
}

void QuarkYamlStream::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void QuarkYamlStream::abandon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = false;
    stop_ = true;
  }
  cv_.notify_one();
}

std::size_t QuarkYamlStream::rewrites() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rewrites_;
}

std::vector<std::string> QuarkYamlStream::errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

void QuarkYamlStream::loop() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point not_before = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return pending_ || stop_; });
    if (!pending_) return;  // stopped, and nothing left to write
    // Rewriting takes at most a tenth of the time (each costs a read of the whole trace): wait out
    // the pause the last rewrite earned; checkpoints meanwhile fold into this one.
    cv_.wait_until(lock, not_before, [this] { return stop_; });
    if (!pending_) return;  // abandoned meanwhile
    pending_ = false;
    lock.unlock();
    const Clock::time_point started = Clock::now();
    // The trace is the contract: the checkpoint was flushed to it before the sampler called us.
    std::string error;
    try {
      write_file_atomically(yaml_path_, quark_yaml(dat::read_trace(trace_path_), {.in_progress = true}));
    } catch (const std::exception& e) {
      error = e.what();
    }
    const Clock::time_point done = Clock::now();
    not_before = done + (done - started) * kPauseFactor;
    lock.lock();
    if (error.empty()) {
      ++rewrites_;
    } else if (std::find(errors_.begin(), errors_.end(), error) == errors_.end()) {
      errors_.push_back(error);
    }
  }
}

}  // namespace qprof::report
