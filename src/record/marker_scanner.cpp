// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/marker_scanner.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "qprof/common/text.hpp"

namespace qprof::record {

// Where lines end in one piece. Each of '\n' and '\r' is searched for once over the piece, however
// many lines it holds: a progress bar's thousands of '\r' in one read cost one pass, not one each.
class MarkerScanner::LineEnds {
 public:
  LineEnds(const char* data, std::size_t n) : data_(data), n_(n) {}
  // The first '\n' or '\r' at or after `from`; n when there is none.
  std::size_t next(std::size_t from) {
    if (lf_ < static_cast<std::ptrdiff_t>(from)) lf_ = find(from, '\n');
    if (cr_ < static_cast<std::ptrdiff_t>(from)) cr_ = find(from, '\r');
    return static_cast<std::size_t>(std::min(lf_, cr_));
  }

 private:
  std::ptrdiff_t find(std::size_t from, char c) const {
    const void* at = std::memchr(data_ + from, c, n_ - from);
    return at ? static_cast<const char*>(at) - data_ : static_cast<std::ptrdiff_t>(n_);
  }

  const char* data_;
  std::size_t n_;
  std::ptrdiff_t lf_ = -1;  // -1: not searched yet
  std::ptrdiff_t cr_ = -1;
};

MarkerScanner::MarkerScanner(MarkerMatcher matcher, OnLabel on_label)
    : matcher_(std::move(matcher)), on_label_(std::move(on_label)) {
  held_.reserve(matcher_.by_prefix() ? kMarkerLabelLimit : kMarkerLineLimit);
}

void MarkerScanner::feed(const char* data, std::size_t n) {
  if (matcher_.by_prefix()) {
    feed_by_prefix(data, n);
  } else {
    feed_by_regex(data, n);
  }
}

void MarkerScanner::finish() {
  if (matcher_.by_prefix() ? in_label_ : (!held_.empty() || over_)) end_held_line();
  held_.clear();
  in_label_ = false;
  after_cr_ = false;
}

// Nothing is copied while the marker text is sought: the piece is searched where it lies, which is
// all a chatty job's stderr without markers costs.
void MarkerScanner::feed_by_prefix(const char* data, std::size_t n) {
  LineEnds ends(data, n);
  std::size_t pos = 0;
  while (pos < n) {
    if (!in_label_) {
      const std::size_t found = seek_prefix(data + pos, n - pos);
      if (found == std::string::npos) return;
      pos += found;
      in_label_ = true;
    }
    const std::size_t end = ends.next(pos);
    // The label's leading blanks are no part of it: they do not count against its bound.
    if (held_.empty()) {
      while (pos < end && (data[pos] == ' ' || data[pos] == '\t')) ++pos;
    }
    const std::size_t room = kMarkerLabelLimit - held_.size();
    held_.append(data + pos, std::min(end - pos, room));
    if (end - pos > room) over_ = true;
    if (end == n) return;
    end_held_line();
    pos = end + 1;
  }
}

// Seeking: the offset in `data` just past the marker text, or npos; held_ then keeps the stream's
// last bytes, which may begin a marker text that the next piece ends.
std::size_t MarkerScanner::seek_prefix(const char* data, std::size_t n) {
  constexpr std::string_view prefix = kDefaultMarkerPrefix;
  constexpr std::size_t tail = prefix.size() - 1;
  if (!held_.empty()) {
    const std::size_t before = held_.size();
    held_.append(data, std::min(n, tail));
    const std::size_t at = held_.find(prefix);  // held_ alone is too short: it ends in data
    if (at != std::string::npos) {
      held_.clear();
      return at + prefix.size() - before;
    }
    if (n < tail) {
      held_.erase(0, held_.size() - std::min(held_.size(), tail));
      return std::string::npos;
    }
    held_.clear();
  }
  // A search for its 'Q' (memchr), each one compared: 'Q' is rare in what programs print, and this
  // is faster than memmem over text without it (a progress bar's).
  const std::size_t at = std::string_view(data, n).find(prefix);
  if (at != std::string_view::npos) return at + prefix.size();
  const std::size_t keep = std::min(n, tail);
  held_.assign(data + n - keep, keep);
  return std::string::npos;
}

void MarkerScanner::feed_by_regex(const char* data, std::size_t n) {
  LineEnds ends(data, n);
  std::size_t pos = 0;
  if (after_cr_ && n > 0) {
    after_cr_ = false;
    if (data[0] == '\n') pos = 1;
  }
  while (pos < n) {
    const std::size_t end = ends.next(pos);
    const std::size_t room = kMarkerLineLimit - held_.size();
    held_.append(data + pos, std::min(end - pos, room));
    if (end - pos > room) over_ = true;
    if (end == n) return;
    end_held_line();
    pos = end + 1;
    // "\r\n" is one end: no empty line between them for a pattern such as ^(.*)$ to match.
    if (data[end] == '\r') {
      if (pos == n) after_cr_ = true;
      if (pos < n && data[pos] == '\n') ++pos;
    }
  }
}

void MarkerScanner::end_held_line() {
  if (matcher_.by_prefix()) {
    take_label(held_, over_);
  } else if (over_) {
    ++lines_too_long_;
  } else if (const auto label = matcher_.match(held_)) {
    take_label(*label, false);
  }
  held_.clear();
  in_label_ = false;
  over_ = false;
}

void MarkerScanner::take_label(std::string_view label, bool cut) {
  label = trim_blanks(label);
  if (label.size() > kMarkerLabelLimit) {
    label = trim_blanks(label.substr(0, kMarkerLabelLimit));
    cut = true;
  }
  if (cut) ++labels_cut_;
  on_label_(std::string(label));
}

}  // namespace qprof::record
