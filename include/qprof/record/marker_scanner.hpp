// SPDX-License-Identifier: Apache-2.0
// Finds the marker lines of a stream that arrives in pieces of any size (the job's stderr, as the
// tee reads it). A line ends at '\n' or at '\r' ("\r\n" is one end): a progress bar redraws its
// line after each '\r', and what follows the last one is what the terminal shows as the line.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "qprof/record/markers.hpp"

namespace qprof::record {

class MarkerScanner {
 public:
  using OnLabel = std::function<void(const std::string& label)>;

  // Each marker line's label goes to `on_label`, in the order of the lines, from feed() or finish().
  MarkerScanner(MarkerMatcher matcher, OnLabel on_label);
  MarkerScanner(const MarkerScanner&) = delete;
  MarkerScanner& operator=(const MarkerScanner&) = delete;

  // The next piece of the stream. The default rule finds QPROF_MARK: anywhere in a line of any
  // length as it streams past, holding only the label; --marker-regex needs the whole line, held
  // up to kMarkerLineLimit bytes.
  void feed(const char* data, std::size_t n);
  // The end of the stream: a last line without its end is a line too.
  void finish();

  // Read from any thread while the scanner runs on its own.
  // Labels longer than kMarkerLabelLimit: taken cut there.
  std::uint64_t labels_cut() const { return labels_cut_.load(); }
  // --marker-regex: lines longer than kMarkerLineLimit, not searched.
  std::uint64_t lines_too_long() const { return lines_too_long_.load(); }

 private:
  class LineEnds;
  void feed_by_prefix(const char* data, std::size_t n);
  std::size_t seek_prefix(const char* data, std::size_t n);
  void feed_by_regex(const char* data, std::size_t n);
  void take_label(std::string_view label, bool cut);
  void end_held_line();

  MarkerMatcher matcher_;
  OnLabel on_label_;
  // By prefix: the stream's last bytes (fewer than the marker text) while seeking it, the label's
  // bytes once found. By regex: the line's bytes.
  std::string held_;
  bool in_label_ = false;  // by prefix: the marker text was found in the current line
  bool over_ = false;      // the current label (or regex line) outgrew its bound
  bool after_cr_ = false;  // by regex: the last line ended at '\r' (a '\n' right after it is the same end)
  std::atomic<std::uint64_t> labels_cut_{0};
  std::atomic<std::uint64_t> lines_too_long_{0};
};

}  // namespace qprof::record
