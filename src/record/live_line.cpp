// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/live_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "qprof/common/units.hpp"
#include "qprof/common/write_all.hpp"

namespace qprof::record {
namespace {

constexpr std::int64_t kMinDrawGapNs = 250 * 1000000;  // at most 4 draws a second

bool window(int fd, int& rows, int& cols) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) != 0) return false;
  rows = ws.ws_row;
  cols = ws.ws_col;
  return rows >= 2 && cols >= 20;
}

constexpr int kLastRank = 5;
// The stage is shown last but ranks second, after the elapsed time and the memory: where the job
// is (its latest marker) is what a user of a training script looks at first. It is text, the one
// part that may be cut: it claims up to kStageClaim columns before the parts ranked after it (at
// least kStageShownAtLeast, or it is left out), and whatever room they leave after that.
constexpr int kStageRank = 2;
constexpr std::size_t kStageClaim = 20;
constexpr std::size_t kStageShownAtLeast = 4;
constexpr std::string_view kSeparator = " | ";

// A label is the job's text: printable ASCII only, so that it never drives the terminal and its
// width is its length.
std::string printable_stage(std::string_view label) {
  std::string stage;
  for (unsigned char c : label.substr(0, 200)) stage += (c >= 0x20 && c < 0x7F) ? static_cast<char>(c) : '?';
  return stage;
}

// One part of the line and its rank (0 first) in the choice of what fits.
struct LivePart {
  std::string text;
  int rank;
};

// The parts that fit `room`, in their order, taken by rank: one that does not fit is left out
// whole, never cut inside a number ("RSS sum 1.01 GiB (peak 1.0"), and a later-ranked one that
// fits is still shown. parts.front() is the elapsed time: where it alone does not fit, what of it does.
std::string join_fitting(const std::vector<LivePart>& parts, const std::string& stage, std::size_t room) {
  if (parts.front().text.size() > room) return parts.front().text.substr(0, room);
  std::vector<bool> shown(parts.size(), false);
  std::size_t used = 0;  // the columns of the parts taken so far, separators included
  const auto take = [&](std::size_t width) {
    const std::size_t more = used == 0 ? width : kSeparator.size() + width;
    if (used + more > room) return false;
    used += more;
    return true;
  };
  bool stage_shown = false;
  for (int rank = 0; rank <= kLastRank; ++rank) {
    if (rank == kStageRank && !stage.empty()) {
      const std::size_t left = room - used;
      const std::size_t claim =
          std::min({stage.size(), kStageClaim, left > kSeparator.size() ? left - kSeparator.size() : 0});
      stage_shown = claim >= std::min(stage.size(), kStageShownAtLeast) && take(claim);
    }
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (parts[i].rank == rank) shown[i] = take(parts[i].text.size());
  }
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (shown[i]) text += (text.empty() ? "" : std::string(kSeparator)) + parts[i].text;
  }
  if (stage_shown) {
    text += std::string(kSeparator) + stage;
    if (text.size() > room) text.resize(room);
  }
  return text;
}

}  // namespace

std::string format_live_status(const LiveStatus& s, int columns) {
  // The line's parts in the order they are shown, each with its rank where not all fit:
  // elapsed time, memory, the stage, GPU memory, CPU, then Σ RSS beside a footprint.
  std::vector<LivePart> parts;
  char head[64];
  std::snprintf(head, sizeof head, "qprof %.1f s", s.elapsed);
  parts.push_back({head, 0});
  // The footprint first (shared pages once), as the summary gives it; then Σ RSS as mprof counts
  // it, which ranks last beside a footprint (the second count of the same memory).
  if (s.footprint)
    parts.push_back({"footprint " + human_bytes(*s.footprint) + " (peak " + human_bytes(s.peak_footprint) + ")", 1});
  parts.push_back(
      {std::string(s.footprint ? "RSS sum " : "RSS ") + human_bytes(s.rss) + " (peak " + human_bytes(s.peak_rss) + ")",
       s.footprint ? kLastRank : 1});
  if (s.gpu) parts.push_back({"GPU " + human_bytes(*s.gpu), 3});
  if (s.cpu_percent) {
    char cpu[32];
    std::snprintf(cpu, sizeof cpu, "CPU %.0f %%", *s.cpu_percent);
    parts.push_back({cpu, 4});
  }
  // One short of the width: a character in the last column would wrap on some terminals.
  const std::size_t room = columns > 1 ? static_cast<std::size_t>(columns - 1) : 0;
  const std::string stage = printable_stage(s.stage);
  return join_fitting(parts, stage, room);
}

bool LiveLine::wanted(int fd, bool quiet, bool live_option) {
  if (quiet || !live_option || !::isatty(fd)) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

LiveLine::LiveLine(int fd) : fd_(fd) {}

LiveLine::~LiveLine() { close(); }

void LiveLine::put(std::string_view s) {
  // The terminal gone: nothing more to show.
  if (open_ && !write_all(fd_, s).ok()) open_ = false;
}

void LiveLine::reserve_row(int rows) {
  std::string seq;
  // The old row, where the terminal was resized: cleared.
  if (rows_ > 0 && rows_ <= rows) seq += "\0337\033[" + std::to_string(rows_) + ";1H\033[2K\0338";
  // IND then RI: one row of room below the cursor (the screen scrolls if it is on the last
  // row), the cursor back where it was, column kept. Then the scrolling region stops above the
  // last row (DECSTBM homes the cursor: saved and restored around it).
  seq += "\033D\033M\0337\033[1;" + std::to_string(rows - 1) + "r\0338";
  put(seq);
  rows_ = rows;
}

void LiveLine::update(const LiveStatus& status, std::int64_t mono_ns) {
  if (last_draw_ns_ > 0 && mono_ns - last_draw_ns_ < kMinDrawGapNs) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_) return;
  int rows = 0, cols = 0;
  if (suspended_) return;
  // Every attempt counts toward the 4-a-second limit, drawn or not: in the background or on a
  // terminal too small, the two ioctls below then run at most 4 times a second, not once per
  // sample on the sampler's thread.
  last_draw_ns_ = mono_ns;
  if (!window(fd_, rows, cols)) return;
  if (::tcgetpgrp(fd_) != ::getpgrp()) {
    // In the background: the region is given back (a write the terminal allows unless TOSTOP).
    release_row();
    return;
  }
  if (rows != rows_) reserve_row(rows);
  buf_ = "\0337\033[" + std::to_string(rows) + ";1H\r\033[2K" + format_live_status(status, cols) + "\0338";
  put(buf_);
  ++draws_;
}

void LiveLine::release_row() {
  if (rows_ > 0) put("\0337\033[r\033[" + std::to_string(rows_) + ";1H\033[2K\0338");
  rows_ = 0;
}

void LiveLine::close() {
  std::lock_guard<std::mutex> lock(mu_);
  release_row();
  open_ = false;
}

void LiveLine::suspend() {
  std::lock_guard<std::mutex> lock(mu_);
  release_row();
  suspended_ = true;
}

void LiveLine::resume() {
  std::lock_guard<std::mutex> lock(mu_);
  suspended_ = false;
  last_draw_ns_ = 0;
}

void LiveLine::before_output() { mu_.lock(); }
void LiveLine::after_output() { mu_.unlock(); }

}  // namespace qprof::record
