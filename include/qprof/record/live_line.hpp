// SPDX-License-Identifier: Apache-2.0
// The live status line of `qprof run`/`attach` at a terminal: elapsed time, the tree's memory
// now and at its peak, GPU memory, CPU %, the current stage. It lives on the terminal's last row,
// kept out of the scrolling region (DECSTBM, as apt's progress bar does), so that nothing the job
// prints (on stderr through qprof, or on stdout straight to the terminal) is ever written over
// or interleaved with it; qprof's own messages go above it, written between before_output() and
// after_output() as the job's stderr copy is.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "qprof/record/stderr_tee.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::record {

struct LiveStatus {
  Seconds elapsed = 0;
  Bytes rss = 0;
  Bytes peak_rss = 0;
  std::optional<Bytes> footprint;  // the latest cgroup charge or Σ PSS reading, when there is one
  Bytes peak_footprint = 0;
  std::optional<Bytes> gpu;
  std::optional<double> cpu_percent;  // of one core, over the last stats interval
  std::string_view stage;             // the latest marker's label (untrusted text)
};

// What the line says, fitted to `columns` (truncated, never wrapped; printable ASCII only).
std::string format_live_status(const LiveStatus& s, int columns);

class LiveLine : public TeeOutputGuard {
 public:
  // Whether a live line is wanted on `fd`: a terminal, not -q, not --no-live, TERM not "dumb".
  static bool wanted(int fd, bool quiet, bool live_option);
  explicit LiveLine(int fd);
  ~LiveLine() override;  // close()
  LiveLine(const LiveLine&) = delete;
  LiveLine& operator=(const LiveLine&) = delete;

  // Draws `status` unless the last draw was less than 250 ms ago (at most 4 a second), or qprof
  // is not in the terminal's foreground (started with &, or continued with bg): the line is
  // then the shell's to draw on.
  void update(const LiveStatus& status, std::int64_t mono_ns);
  // Gives the terminal back: the row cleared, the scrolling region reset. Before the summary.
  void close();
  // Job control: the terminal given back as close() does before qprof stops (Ctrl-Z), and taken
  // again, with a draw at the next update, once qprof is continued.
  void suspend();
  void resume();

  // TeeOutputGuard: the job's stderr bytes are written whole, never inside a redraw.
  void before_output() override;
  void after_output() override;

  std::uint64_t draws() const { return draws_; }

 private:
  void put(std::string_view s);
  // The row cleared and the scrolling region reset (caller holds mu_).
  void release_row();
  // Sets the scrolling region to all rows but the last for a terminal of `rows` rows.
  void reserve_row(int rows);

  int fd_;
  std::mutex mu_;
  bool open_ = true;
  bool suspended_ = false;
  int rows_ = 0;  // the terminal's height when the region was set (0: not set)
  std::int64_t last_draw_ns_ = 0;
  std::uint64_t draws_ = 0;
  std::string buf_;
};

}  // namespace qprof::record
