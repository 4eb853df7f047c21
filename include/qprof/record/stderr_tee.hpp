// SPDX-License-Identifier: Apache-2.0
// Copies the child's stderr to qprof's stderr byte for byte (binary-safe, any line length, in a
// fixed amount of memory) and hands each complete marker line to a callback.
#pragma once

#include <functional>
#include <future>
#include <string>
#include <thread>

#include "qprof/record/markers.hpp"

namespace qprof {

// Told just before and after each write of the job's bytes (the live line keeps its own writes
// out of them). Called on the tee's thread.
class TeeOutputGuard {
 public:
  virtual ~TeeOutputGuard() = default;
  virtual void before_output() = 0;
  virtual void after_output() = 0;
};

class StderrTee {
 public:
  using OnMarker = std::function<void(std::string label)>;

  // Reads `from` (the pipe from the child) until every writer closed it; writes to `to`.
  StderrTee(int from, int to, MarkerMatcher matcher, OnMarker on_marker);
  ~StderrTee();  // stops the thread (see finish) and closes `from`
  StderrTee(const StderrTee&) = delete;
  StderrTee& operator=(const StderrTee&) = delete;

  // Before start(): who is told around each write of the job's bytes (nullptr: nobody).
  void guard_output(TeeOutputGuard* guard) { guard_ = guard; }
  void start();
  // Waits up to `wait_ms` for the end of the stream, then stops reading, having copied whatever
  // was already in the pipe. A daemon that still holds the pipe keeps it open (its later writes
  // fail with EPIPE).
  void finish(int wait_ms);

 private:
  void loop();
  void copy_out(const char* data, std::size_t n);
  void scan(const char* data, std::size_t n);

  int from_;
  int to_;
  int stop_fd_;  // eventfd: asks the thread to drain and stop
  bool output_ok_ = true;
  TeeOutputGuard* guard_ = nullptr;
  MarkerMatcher matcher_;
  OnMarker on_marker_;
  std::string line_;  // the current line's first kMarkerScanLimit bytes
  std::promise<void> ended_;  // set when the thread has seen the end of the stream
  std::thread thread_;
};

}  // namespace qprof
