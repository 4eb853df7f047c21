// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/live_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

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

}  // namespace

std::string format_live_status(const LiveStatus& s, int columns) {
  // The line's parts, most telling first; those that do not fit are left out whole, so that the
  // line is never cut inside a number ("RSS sum 1.01 GiB (peak 1.0").
  std::vector<std::string> parts;
  char head[64];
  std::snprintf(head, sizeof head, "qprof %.1f s", s.elapsed);
  parts.emplace_back(head);
  // The footprint first (shared pages once), as the summary gives it; then Σ RSS as mprof counts it.
  if (s.footprint)
    parts.push_back("footprint " + human_bytes(*s.footprint) + " (peak " + human_bytes(s.peak_footprint) + ")");
  parts.push_back(std::string(s.footprint ? "RSS sum " : "RSS ") + human_bytes(s.rss) + " (peak " +
                  human_bytes(s.peak_rss) + ")");
  if (s.gpu) parts.push_back("GPU " + human_bytes(*s.gpu));
  if (s.cpu_percent) {
    char cpu[32];
    std::snprintf(cpu, sizeof cpu, "CPU %.0f %%", *s.cpu_percent);
    parts.emplace_back(cpu);
  }
  std::string stage;
  // A label is the job's text: printable ASCII only, so that it never drives the terminal
  // and its width is its length.
  for (unsigned char c : s.stage.substr(0, 200)) stage += (c >= 0x20 && c < 0x7F) ? static_cast<char>(c) : '?';
  // One short of the width: a character in the last column would wrap on some terminals.
  const std::size_t room = columns > 1 ? static_cast<std::size_t>(columns - 1) : 0;
  std::string text;
  std::size_t shown = 0;
  for (const std::string& part : parts) {
    const std::string next = text.empty() ? part : text + " | " + part;
    if (next.size() > room) break;
    text = next;
    ++shown;
  }
  // The stage's name is the one part that may be cut (it is text, not a figure): after all the
  // figures, where a few of its letters fit.
  if (!stage.empty() && shown == parts.size() && text.size() + 3 + 4 <= room) {
    text += " | " + stage;
    if (text.size() > room) text.resize(room);
  }
  if (text.empty()) text = std::string(parts.front()).substr(0, room);
  return text;
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
