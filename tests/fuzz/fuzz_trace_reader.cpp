// libFuzzer target: the trace reader, streaming (every Visitor callback) and into a whole Trace.
// Any bytes must end in a Trace or a ParseError ("FILE:LINE: reason"), never anything else.
// The same bytes also go through the file reader (parse_fd, what `qprof report FILE` uses) with
// a 64-byte line bound, so that short inputs reach the bound and the buffer's refills: where no
// line is longer than the bound both readers must agree, and a longer line must be refused.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "qprof/trace/format.hpp"

namespace {

constexpr std::size_t kSmallBound = 64;

// What the file reader saw: how many MEM samples and markers, and whether it refused the input.
struct Counts : qprof::dat::Visitor {
  std::size_t mem_lines = 0, markers = 0;
  void mem(const qprof::MemSample&) override { ++mem_lines; }
  void mark(qprof::Seconds, std::string_view) override { ++markers; }
};

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<qprof::Trace> whole;
  try {
    whole = qprof::dat::read_trace_text(text, "fuzz.dat");
    (void)whole->t0();
  } catch (const qprof::dat::ParseError& e) {
    if (std::string_view(e.what()).substr(0, 9) != "fuzz.dat:") __builtin_trap();  // always FILE:…
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
    qprof::dat::parse_fd(fd, "fuzz.dat", counts, kSmallBound);
  } catch (const qprof::dat::ParseError& e) {
    const std::string_view what(e.what());
    if (what.substr(0, 9) != "fuzz.dat:") __builtin_trap();
    refused_long = what.find("line longer than 64 bytes") != std::string_view::npos;
    if (!refused_long && whole) __builtin_trap();  // a line the whole-text reader took
  }
  const bool long_line = has_line_longer_than(text, kSmallBound);
  if (refused_long && !long_line) __builtin_trap();  // refused a line within the bound
  if (!long_line && whole) {
    // Both read every line: they must have seen the same samples and markers.
    if (refused_long || counts.mem_lines != whole->mem.size() || counts.markers != whole->markers.size()) __builtin_trap();
  }
  return 0;
}
