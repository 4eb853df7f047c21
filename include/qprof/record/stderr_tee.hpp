// SPDX-License-Identifier: Apache-2.0
// Copies the child's stderr to qprof's stderr byte for byte (binary-safe, any line length, in a
// fixed amount of memory) and hands each marker line's label to a callback (lines as
// MarkerScanner reads them; the last one, unended, at the end of the stream).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "qprof/record/marker_scanner.hpp"
#include "qprof/record/markers.hpp"

namespace qprof::record {

// Told just before and after each write of the job's bytes (the live line keeps its own writes
// out of them). Called on the tee's thread.
class TeeOutputGuard {
 public:
  virtual ~TeeOutputGuard() = default;
  virtual void before_output() = 0;
  virtual void after_output() = 0;

  // before_output() now, after_output() when it goes out of scope.
  class Held {
   public:
    explicit Held(TeeOutputGuard& guard) : guard_(guard) { guard_.before_output(); }
    ~Held() { guard_.after_output(); }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    TeeOutputGuard& guard_;
  };
};

class StderrTee {
 public:
  // False: no room for the marker now (a bounded queue is full).
  using OnMarker = std::function<bool(const std::string& label)>;

  // Reads `from` (the pipe from the child) until every writer closed it; writes to `to`.
  StderrTee(int from, int to, MarkerMatcher matcher, OnMarker on_marker);
  ~StderrTee();  // stops the thread (see finish) and closes `from`
  StderrTee(const StderrTee&) = delete;
  StderrTee& operator=(const StderrTee&) = delete;

  // Before start(): who is told around each write of the job's bytes (nullptr: nobody).
  void guard_output(TeeOutputGuard* guard) { guard_ = guard; }
  // Before start(): while `pending()` says markers wait for their checkpoint, `wake()` is called
  // every millisecond (the marker callback never waits for the checkpoint, so that the job's
  // stderr is never held back; a wake-up it sent may have been lost). A marker the callback has
  // no room for is offered again every millisecond while the pipe is less than half full (the
  // job cannot be blocked yet); past that, it is dropped and counted.
  void wake_while(std::function<bool()> pending, std::function<void()> wake) {
    pending_ = std::move(pending);
    wake_ = std::move(wake);
  }
  void start();
  // Waits up to `wait_ms` for the end of the stream, then stops reading, having copied whatever
  // was already in the pipe. A daemon that still holds the pipe keeps it open (its later writes
  // fail with EPIPE).
  void finish(int wait_ms);
  // Markers dropped: the callback had no room while the job's writes were filling the pipe.
  std::uint64_t dropped() const { return dropped_.load(); }
  // Marker labels cut at kMarkerLabelLimit, and lines too long for --marker-regex (not searched).
  std::uint64_t labels_cut() const { return scanner_.labels_cut(); }
  std::uint64_t lines_too_long() const { return scanner_.lines_too_long(); }

 private:
  void loop();
  void copy_out(const char* data, std::size_t n);
  void offer(const std::string& label);
  bool pipe_has_room() const;

  int from_;
  int to_;
  int stop_fd_;            // eventfd: asks the thread to drain and stop
  bool stopping_ = false;  // the thread was asked to stop (on the thread only)
  int pipe_size_ = 4096;   // the pipe's capacity (F_GETPIPE_SZ), or a terminal's smallest
  std::atomic<std::uint64_t> dropped_{0};
  bool output_ok_ = true;
  TeeOutputGuard* guard_ = nullptr;
  OnMarker on_marker_;
  std::function<bool()> pending_;
  std::function<void()> wake_;
  MarkerScanner scanner_;     // hands its labels to offer()
  std::promise<void> ended_;  // set when the thread has seen the end of the stream
  std::thread thread_;
};

}  // namespace qprof::record
