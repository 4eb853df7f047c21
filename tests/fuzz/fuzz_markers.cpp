// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: marker lines as qprof run reads them from the job's stderr (MarkerScanner
// with the default prefix and with a --marker-regex, the stream cut in two pieces where the
// input's first byte says), paired into stages (trace/stages) as they arrive.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "qprof/record/marker_scanner.hpp"
#include "qprof/record/markers.hpp"
#include "qprof/trace/stages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const qprof::record::MarkerMatcher by_prefix;
  static const qprof::record::MarkerMatcher by_regex =
      *qprof::record::MarkerMatcher::compile("^\\s*\\[stage\\]\\s*(.*)$");
  if (size == 0) return 0;
  const std::size_t cut_at = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (const qprof::record::MarkerMatcher* m : {&by_prefix, &by_regex}) {
    qprof::trace::StageTracker tracker;
    double t = 0;
    qprof::record::MarkerScanner scanner(*m, [&](const std::string& label) {
      if (label.size() > qprof::record::kMarkerLabelLimit) __builtin_trap();  // the documented cut
      (void)qprof::trace::stage_start_name(label);
      (void)qprof::trace::stage_end_name(label);
      t += 0.01;
      if (const auto stage = tracker.on_marker(label, t, 1)) {
        if (stage->t_end < stage->t_start) __builtin_trap();
      }
    });
    const std::size_t first = std::min(cut_at, text.size());
    scanner.feed(text.data(), first);
    scanner.feed(text.data() + first, text.size() - first);
    scanner.finish();
    (void)tracker.unclosed(t + 1, 1);
  }
  return 0;
}
