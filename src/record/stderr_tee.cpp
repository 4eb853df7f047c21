// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/stderr_tee.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "qprof/common/write_all.hpp"

namespace qprof::record {

StderrTee::StderrTee(int from, int to, MarkerMatcher matcher, OnMarker on_marker)
    : from_(from),
      to_(to),
      stop_fd_(::eventfd(0, EFD_CLOEXEC)),
      on_marker_(std::move(on_marker)),
      scanner_(std::move(matcher), [this](const std::string& label) { offer(label); }) {
  const int size = ::fcntl(from_, F_GETPIPE_SZ);
  if (size > 0) pipe_size_ = size;
}

StderrTee::~StderrTee() {
  finish(0);
  if (stop_fd_ >= 0) ::close(stop_fd_);
  if (from_ >= 0) ::close(from_);
}

void StderrTee::start() {
  thread_ = std::thread([this] {
    // Signals belong to the sampler thread: its sleep must be the one they interrupt.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    loop();
    ended_.set_value();
  });
}

void StderrTee::finish(int wait_ms) {
  if (!thread_.joinable()) return;
  ended_.get_future().wait_for(std::chrono::milliseconds(wait_ms));
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t w = ::write(stop_fd_, &one, sizeof one);
  thread_.join();
}

void StderrTee::loop() {
  char buf[1 << 16];
  pollfd fds[2] = {{from_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  bool& stopping = stopping_;
  while (true) {
    // When asked to stop, take only what is already in the pipe.
    const bool waiting = !stopping && pending_ && pending_();
    const int ready = ::poll(fds, stopping ? 1 : 2, stopping ? 0 : waiting ? 1 : -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready == 0 && waiting) {
      wake_();
      continue;
    }
    if (!stopping && (fds[1].revents & POLLIN)) stopping = true;
    if (ready == 0 && stopping) break;
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t n = ::read(from_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // every writer is gone
    copy_out(buf, static_cast<std::size_t>(n));
    scanner_.feed(buf, static_cast<std::size_t>(n));
  }
  // A last line without its end is whole now: the stream ended, or qprof stopped reading it (a
  // daemon holds it open after the job's end).
  scanner_.finish();
}

void StderrTee::copy_out(const char* data, std::size_t n) {
  if (guard_) guard_->before_output();
  // Our stderr gone: the child's is still drained, so that it never blocks.
  if (output_ok_ && !write_all(to_, std::string_view(data, n)).ok()) output_ok_ = false;
  if (guard_) guard_->after_output();
}

bool StderrTee::pipe_has_room() const {
  int pending = 0;
  return ::ioctl(from_, FIONREAD, &pending) == 0 && pending < pipe_size_ / 2;
}

void StderrTee::offer(const std::string& label) {
  // A burst of markers waits for the sampler to take the ones before it, as long as that costs
  // the job nothing; a flood that fills the pipe is dropped instead of holding the job back.
  while (!on_marker_(label)) {
    if (stopping_ || !pipe_has_room()) {
      ++dropped_;
      return;
    }
    if (wake_) wake_();
    pollfd stop{stop_fd_, POLLIN, 0};
    if (::poll(&stop, 1, 1) > 0) stopping_ = true;  // finish(): the inbox takes the rest at once
  }
}

}  // namespace qprof::record
