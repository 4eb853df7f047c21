// libFuzzer target: the trace reader, streaming (every Visitor callback) and into a whole Trace.
// Any bytes must end in a Trace or a ParseError ("FILE:LINE: reason"), never anything else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qprof/trace/format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const qprof::Trace t = qprof::dat::read_trace_text(text, "fuzz.dat");
    (void)t.t0();
  } catch (const qprof::dat::ParseError& e) {
    if (std::string_view(e.what()).substr(0, 9) != "fuzz.dat:") __builtin_trap();  // always FILE:…
  }
  return 0;
}
