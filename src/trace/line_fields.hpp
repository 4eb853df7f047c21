// SPDX-License-Identifier: Apache-2.0
// The fields of one trace line, read in place: words, numbers and the free text after them, each
// refused with the record's kind and what was expected (private to the trace reader). Inline:
// every record of a trace goes through it.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "line_parser.hpp"
#include "plain_numbers.hpp"
#include "record_range.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::trace::detail {

// A field as a reason shows it: quoted, escaped, its first 60 characters.
std::string quoted(std::string_view s);

// Splits the fields of a line: separated by spaces (mprof's writer uses exactly one).
class Fields {
 public:
  Fields(std::string_view kind, std::string_view rest) : kind_(kind), rest_(rest) {}

  std::string_view word(const char* what) {
    skip_spaces();
    if (rest_.empty()) throw LineError{std::string(kind_) + ": missing " + what};
    // A plain loop: find_first_of calls memchr on the separator set for every character.
    std::size_t end = 0;
    while (end < rest_.size() && rest_[end] != ' ' && rest_[end] != '\t') ++end;
    std::string_view w = rest_.substr(0, end);
    rest_.remove_prefix(w.size());
    return w;
  }

  double number(const char* what) {
    const std::string_view w = word(what);
    double v = 0;
    if (detail::plain_decimal(w, v)) return v;
    auto r = std::from_chars(w.data(), w.data() + w.size(), v);
    if (r.ec != std::errc() || r.ptr != w.data() + w.size() || !std::isfinite(v)) {
      throw LineError{std::string(kind_) + ": " + what + " " + quoted(w) + " is not a number"};
    }
    return v;
  }

  // A time, in the range of record_range.hpp.
  Seconds time(const char* what) {
    const double t = number(what);
    if (auto why = time_out_of_range(kind_, what, t)) throw LineError{std::move(*why)};
    return t;
  }

  // A memory figure in MiB (mprof's unit), as bytes, in the range of record_range.hpp.
  Bytes mib(const char* what) {
    const Bytes b = from_mib(non_negative(what));
    if (auto why = bytes_out_of_range(kind_, what, b)) throw LineError{std::move(*why)};
    return b;
  }

  // A memory figure in bytes, in the range of record_range.hpp.
  Bytes bytes(const char* what) {
    const Bytes b = count(what);
    if (auto why = bytes_out_of_range(kind_, what, b)) throw LineError{std::move(*why)};
    return b;
  }

  double non_negative(const char* what) {
    const double v = number(what);
    if (v < 0) throw LineError{std::string(kind_) + ": " + what + " is negative"};
    return v;
  }

  std::uint64_t count(const char* what) {
    const std::string_view w = word(what);
    std::uint64_t v = 0;
    auto r = std::from_chars(w.data(), w.data() + w.size(), v);
    if (r.ec == std::errc::result_out_of_range) throw out_of_range(what, w);
    if (r.ec != std::errc() || r.ptr != w.data() + w.size()) {
      throw LineError{std::string(kind_) + ": " + what + " " + quoted(w) + " is not a whole number"};
    }
    return v;
  }

  std::int64_t integer(const char* what) {
    const std::string_view w = word(what);
    std::int64_t v = 0;
    auto r = std::from_chars(w.data(), w.data() + w.size(), v);
    if (r.ec == std::errc::result_out_of_range) throw out_of_range(what, w);
    if (r.ec != std::errc() || r.ptr != w.data() + w.size()) {
      throw LineError{std::string(kind_) + ": " + what + " " + quoted(w) + " is not an integer"};
    }
    return v;
  }

  // The rest of the line after one separator: free text.
  std::string_view text() {
    if (!rest_.empty() && rest_.front() == ' ') rest_.remove_prefix(1);
    std::string_view t = rest_;
    rest_ = {};
    return t;
  }

  bool empty() {
    skip_spaces();
    return rest_.empty();
  }

  std::string_view kind() const { return kind_; }

 private:
  // A whole number with too many digits for the field ("pid 99999999999999999999"): out of range,
  // not "not an integer".
  LineError out_of_range(const char* what, std::string_view w) const {
    return LineError{std::string(kind_) + ": " + what + " " + quoted(w) + " is out of range"};
  }
  void skip_spaces() {
    while (!rest_.empty() && (rest_.front() == ' ' || rest_.front() == '\t')) rest_.remove_prefix(1);
  }
  std::string_view kind_;
  std::string_view rest_;
};

}  // namespace qprof::trace::detail
