// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the trace reader, streaming (every Visitor callback) and into a whole Trace.
// Any bytes must end in a Trace or a ParseError ("FILE:LINE: reason"), never anything else.
// The same bytes also go through the file reader (parse_fd, what `qprof report FILE` uses) with
// a 64-byte line bound, so that short inputs reach the bound and the buffer's refills: where no
// line is longer than the bound both readers must agree, and a longer line must be refused.
// And the MEM fast paths (trace/plain_numbers.cpp) against the general one: every MEM line is
// read again with an extra field, which only the general path takes; the samples must be equal
// to the bit, and a line one path refuses the other must refuse too. And the piece reader (a job's
// sum over many ranks) in its smallest pieces against the text reader: the same records, or the
// same error.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/trace/format.hpp"
#include "qprof/trace/piece_reader.hpp"

namespace {

constexpr std::size_t kSmallBound = 64;

// What the file reader saw: how many MEM samples and markers, and whether it refused the input.
struct Counts : qprof::trace::Visitor {
  std::size_t mem_lines = 0, markers = 0;
  void mem(const qprof::trace::MemSample&) override { ++mem_lines; }
  void mark(qprof::Seconds, std::string_view) override { ++markers; }
};

// The MEM samples (to the bit), the markers and the warnings, as a reader gave them.
struct Records : qprof::trace::Visitor {
  std::vector<qprof::trace::MemSample> samples;
  std::size_t markers = 0, warnings = 0;
  void mem(const qprof::trace::MemSample& s) override { samples.push_back(s); }
  void mark(qprof::Seconds, std::string_view) override { ++markers; }
  void warning(const std::string&) override { ++warnings; }
  bool operator==(const Records& o) const {
    if (samples.size() != o.samples.size() || markers != o.markers || warnings != o.warnings) return false;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (samples[i].bytes != o.samples[i].bytes || std::memcmp(&samples[i].t, &o.samples[i].t, sizeof(double)) != 0)
        return false;
    }
    return true;
  }
};

// The text with " x" added to every MEM line (before a '\r' that ends it): what the reader
// takes for the same sample, from its general path (a newer writer's extra field is skipped).
std::string with_extra_field(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(start, end - start);
    const bool cr = !line.empty() && line.back() == '\r';
    if (cr) line.remove_suffix(1);
    out += line;
    if (nl != std::string_view::npos && line.substr(0, 4) == "MEM ") out += " x";
    if (cr) out += '\r';
    if (nl == std::string_view::npos) break;
    out += '\n';
    start = nl + 1;
  }
  return out;
}

bool has_line_longer_than(std::string_view text, std::size_t bound) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    if (end - start > bound) return true;
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return false;
}

// The error's text after the input's name, "" for none.
template <typename Read>
std::string error_of(const std::string& name, Read&& read) {
  try {
    read();
  } catch (const qprof::trace::ParseError& e) {
    const std::string_view what(e.what());
    if (what.substr(0, name.size()) != name) __builtin_trap();
    return std::string(what.substr(name.size()));
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<qprof::trace::Trace> whole;
  try {
    whole = qprof::trace::read_trace_text(text, "fuzz.dat");
    (void)whole->t0();
  } catch (const qprof::trace::ParseError& e) {
    if (std::string_view(e.what()).substr(0, 9) != "fuzz.dat:") __builtin_trap();  // always FILE:…
  }

  std::optional<qprof::trace::Trace> general;
  try {
    general = qprof::trace::read_trace_text(with_extra_field(text), "fuzz.dat");
  } catch (const qprof::trace::ParseError&) {
  }
  if (whole.has_value() != general.has_value()) __builtin_trap();  // one path took a line the other refused
  if (whole) {
    if (whole->mem.size() != general->mem.size()) __builtin_trap();
    for (std::size_t i = 0; i < whole->mem.size(); ++i) {
      if (whole->mem[i].bytes != general->mem[i].bytes) __builtin_trap();
      if (std::memcmp(&whole->mem[i].t, &general->mem[i].t, sizeof(double)) != 0) __builtin_trap();
    }
  }

  static const int fd = ::memfd_create("fuzz_trace", MFD_CLOEXEC);
  if (fd < 0) __builtin_trap();
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size) ||
      ::lseek(fd, 0, SEEK_SET) != 0) {
    __builtin_trap();
  }
  Counts counts;
  bool refused_long = false;
  try {
    qprof::trace::parse_fd(fd, "fuzz.dat", counts, kSmallBound);
  } catch (const qprof::trace::ParseError& e) {
    const std::string_view what(e.what());
    if (what.substr(0, 9) != "fuzz.dat:") __builtin_trap();
    refused_long = what.find("line longer than 64 bytes") != std::string_view::npos;
    if (!refused_long && whole) __builtin_trap();  // a line the whole-text reader took
  }
  const bool long_line = has_line_longer_than(text, kSmallBound);
  if (refused_long && !long_line) __builtin_trap();  // refused a line within the bound
  if (!long_line && whole) {
    // Both read every line: they must have seen the same samples and markers.
    if (refused_long || counts.mem_lines != whole->mem.size() || counts.markers != whole->markers.size())
      __builtin_trap();
  }

  Records by_text, by_pieces;
  const std::string text_error = error_of("fuzz.dat", [&] { qprof::trace::parse_text(text, "fuzz.dat", by_text); });
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const std::string pieces_error = error_of(path, [&] {
    qprof::trace::PieceReader reader(path, size, by_pieces, qprof::trace::PieceReader::kMinPieceBytes);
    while (reader.next()) {
    }
  });
  if (pieces_error != text_error || !(by_pieces == by_text)) __builtin_trap();
  return 0;
}
