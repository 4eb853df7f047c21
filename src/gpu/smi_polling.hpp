// SPDX-License-Identifier: Apache-2.0
// The "smi" backends' common part (private to gpu/): a thread that polls the output of
// long-running nvidia-smi / rocm-smi children. smi_nvidia.cpp and smi_rocm.cpp build on it.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "child.hpp"
#include "common.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/gpu/backend.hpp"

namespace qprof::gpu::smi_detail {

using detail::Child;

inline std::int64_t ms(std::int64_t n) { return n * 1'000'000; }

// A thread that polls children's stdout until stop; subclasses handle lines and timeouts.
class PollingBackend : public Backend {
 public:
  ~PollingBackend() override = default;
  void take_warnings(std::vector<std::string>& out) override { warnings_.take(out); }
  // The latest device totals the reader thread parsed.
  bool device_used(std::span<Bytes> used) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    bool any = false;
    for (std::size_t i = 0; i < used.size() && i < used_.size(); ++i) {
      used[i] = used_[i];
      any = any || used_[i] != kUnknown;
    }
    return any;
  }

 protected:
  void start_thread() {
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
    thread_ = std::thread([this] { loop(); });
  }
  void stop_thread() {
    quit_ = true;
    if (wake_[1] >= 0) [[maybe_unused]]
      auto n = ::write(wake_[1], "x", 1);
    if (thread_.joinable()) thread_.join();
    for (int& fd : wake_) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
  }
  // Children whose output the thread reads, and what to do.
  virtual std::vector<Child*> children() = 0;
  virtual void on_output(std::size_t child, std::int64_t now) = 0;  // read its lines now
  virtual void on_tick(std::int64_t now) = 0;
  virtual int poll_ms() const = 0;

  detail::Warnings warnings_;
  std::atomic<bool> quit_{false};
  mutable std::mutex mu_;    // guards used_ and the derived backend's latest lists
  std::vector<Bytes> used_;  // per device; kUnknown where unknown

 private:
  void loop() {
    std::vector<pollfd> fds;
    while (!quit_) {
      const std::vector<Child*> kids = children();
      fds.clear();
      for (Child* c : kids) fds.push_back(pollfd{c->running() && !c->eof() ? c->out_fd() : -1, POLLIN, 0});
      fds.push_back(pollfd{wake_[0], POLLIN, 0});
      ::poll(fds.data(), fds.size(), poll_ms());
      if (quit_) break;
      const std::int64_t now = monotonic_ns();
      for (std::size_t i = 0; i < kids.size(); ++i) {
        if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) on_output(i, now);
      }
      on_tick(now);
    }
  }
  int wake_[2] = {-1, -1};
  std::thread thread_;
};

Result<std::unique_ptr<Backend>> open_nvidia_smi(const OpenOptions& o);
Result<std::unique_ptr<Backend>> open_rocm_smi(const OpenOptions& o);

}  // namespace qprof::gpu::smi_detail
