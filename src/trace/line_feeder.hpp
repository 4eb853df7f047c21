// SPDX-License-Identifier: Apache-2.0
// The line splitter of every trace reader: complete lines to parse_line, with their numbers, the
// file's first bytes checked, the unterminated last line said. Private to trace/.
#pragma once

#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "line_parser.hpp"
#include "plain_numbers.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::trace::detail {

// Feeds complete lines to parse_line, tracking line numbers; handles the unterminated last line.
class LineFeeder {
 public:
  LineFeeder(const std::string& name, Visitor& v, std::size_t max_line = kMaxLineBytes)
      : name_(name), v_(v), max_line_(max_line) {}

  // Parses every complete line in `data`; returns how many bytes it consumed.
  std::size_t feed(std::string_view data) {
    std::size_t pos = 0;
    if (line_no_ == 0 && !started_) pos = start_of(data);
    while (true) {
      // Most records are MEM lines: parsed whole where the window fits, with no newline search.
      if (max_line_ >= detail::kMemRecordWindow) {
        try {
          pos += detail::fast_mem_records(data.data() + pos, data.size() - pos, v_, line_no_);
        } catch (const BadRecord& e) {  // the visitor refused the sample (qprof plot: an absurd time)
          throw ParseError(name_, line_no_ + 1, e.what());
        }
      }
      const void* nl = std::memchr(data.data() + pos, '\n', data.size() - pos);
      if (nl == nullptr) {
        if (data.size() - pos > max_line_) too_long();
        return pos;
      }
      const std::size_t end = static_cast<const char*>(nl) - data.data();
      one(data.substr(pos, end - pos), data.data() + data.size());
      pos = end + 1;
    }
  }

  void finish(std::string_view tail) {
    if (tail.empty()) return;
    if (tail.size() > max_line_) too_long();
    ++line_no_;
    v_.at_line(line_no_);
    v_.warning(name_ + ":" + std::to_string(line_no_) +
               ": the last line has no newline (was the writer killed?); it was ignored");
  }

 private:
  // The first bytes of the file: a UTF-8 byte-order mark (an editor's) is skipped; a compressed
  // file is named as such rather than quoted as binary.
  std::size_t start_of(std::string_view data) {
    started_ = true;
    if (data.starts_with("\xEF\xBB\xBF")) return 3;
    static constexpr std::pair<std::string_view, std::string_view> kCompressed[] = {
        {"\x1F\x8B", "gzip (gunzip it first)"},
        {"\x28\xB5\x2F\xFD", "zstd (unzstd it first)"},
        {"\xFD"
         "7zXZ",
         "xz (unxz it first)"},
        {"BZh", "bzip2 (bunzip2 it first)"}};
    for (const auto& [magic, what] : kCompressed) {
      if (data.starts_with(magic))
        throw ParseError(name_, 1, "a compressed file, " + std::string(what) + ", not a trace");
    }
    return 0;
  }

  [[noreturn]] void too_long() const {
    throw ParseError(name_, line_no_ + 1,
                     "line longer than " +
                         (max_line_ == kMaxLineBytes ? std::string("1 MiB") : std::to_string(max_line_) + " bytes"));
  }

  // `limit`: the end of the buffer the line is in (the MEM fast path reads ahead within it).
  void one(std::string_view line, const char* limit) {
    if (line.size() > max_line_) too_long();
    ++line_no_;
    v_.at_line(line_no_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return;
    try {
      if (detail::fast_mem_line(line, limit, v_)) return;
      parse_line(line, v_, before_);
    } catch (const LineError& e) {
      throw ParseError(name_, line_no_, e.reason);
    } catch (const BadRecord& e) {
      throw ParseError(name_, line_no_, e.what());
    }
  }

  const std::string& name_;
  Visitor& v_;
  LinesBefore before_;
  std::size_t max_line_;
  std::size_t line_no_ = 0;
  bool started_ = false;
};

}  // namespace qprof::trace::detail
