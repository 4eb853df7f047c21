// SPDX-License-Identifier: Apache-2.0
// The live status line's side of the run: whether there is one (a terminal, unless -q or
// --no-live), and what its next frame says: the elapsed time, the tree's memory now and at its
// peak, GPU memory, the CPU % of the latest stats interval and the latest marker's label.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "qprof/record/live_line.hpp"

namespace qprof::record::session {

class LiveView {
 public:
  // `line` null: no live line, and every call does nothing.
  LiveView(std::unique_ptr<LiveLine> line, std::int64_t start_ns) : line_(std::move(line)), start_ns_(start_ns) {}
  // The line on qprof's stderr when LiveLine::wanted says so.
  static LiveView open(bool quiet, bool live_option, std::int64_t start_ns);

  LiveLine* line() { return line_.get(); }
  void set_stage(const std::string& label) {
    if (line_) stage_ = label;
  }
  void set_cpu_percent(double percent) { cpu_percent_ = percent; }
  // The frame at `now` (drawn at most 4 times a second, LiveLine::update).
  LiveStatus status(std::int64_t now, Bytes rss, Bytes peak_rss, std::optional<Bytes> gpu) const;
  void show(std::int64_t now, Bytes rss, Bytes peak_rss, std::optional<Bytes> gpu);
  // The footprint's latest reading and peak, shown first once there is one.
  void set_footprint(std::optional<Bytes> now, Bytes peak) {
    footprint_ = now;
    peak_footprint_ = peak;
  }
  void suspend() {
    if (line_) line_->suspend();
  }
  void resume() {
    if (line_) line_->resume();
  }
  // The terminal whole again, before the summary.
  void close() {
    if (line_) line_->close();
  }

 private:
  std::unique_ptr<LiveLine> line_;
  std::int64_t start_ns_;
  std::string stage_;
  std::optional<double> cpu_percent_;
  std::optional<Bytes> footprint_;
  Bytes peak_footprint_ = 0;
};

}  // namespace qprof::record::session
