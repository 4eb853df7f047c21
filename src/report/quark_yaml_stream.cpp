// SPDX-License-Identifier: Apache-2.0
// The --yaml-stream rewriter.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "qprof/common/output_file.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/report/quark_yaml.hpp"

namespace qprof::report {
namespace {

// After a rewrite that took d, the next waits until 9·d has passed: at most 10 % of a core.
constexpr int kPauseFactor = 9;

}  // namespace

QuarkYamlStream::QuarkYamlStream(std::string trace_path, std::string yaml_path)
    : trace_path_(std::move(trace_path)),
      trace_fd_(::open(trace_path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY)),
      yaml_path_(std::move(yaml_path)),
      thread_([this] { loop(); }) {}

QuarkYamlStream::~QuarkYamlStream() {
  finish();
  if (trace_fd_ >= 0) ::close(trace_fd_);
}

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
    if (trace_fd_ < 0) {
      error = trace_path_ + ": cannot be opened for reading";
    } else {
      try {  // the trace reader's boundary
        const Result<void> written =
            write_output(yaml_path_, quark_yaml(trace::read_trace_fd(trace_fd_, trace_path_), {.in_progress = true}));
        if (!written) error = written.failure().message;
      } catch (const std::exception& e) {
        error = e.what();
      }
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
