// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: marker lines as qprof run reads them from the job's stderr (MarkerMatcher,
// the default prefix and a --marker-regex), paired into stages (trace/stages) as they arrive.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qprof/record/markers.hpp"
#include "qprof/trace/stages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const qprof::record::MarkerMatcher by_prefix;
  static const qprof::record::MarkerMatcher by_regex =
      *qprof::record::MarkerMatcher::compile("^\\s*\\[stage\\]\\s*(.*)$");
  std::string_view text(reinterpret_cast<const char*>(data), size);
  qprof::trace::StageTracker tracker;
  double t = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    for (const qprof::record::MarkerMatcher* m : {&by_prefix, &by_regex}) {
      if (const auto label = m->match(line)) {
        if (label->size() > qprof::record::kMarkerScanLimit) __builtin_trap();  // the documented cut
        (void)qprof::trace::stage_start_name(*label);
        (void)qprof::trace::stage_end_name(*label);
        t += 0.01;
        if (const auto stage = tracker.on_marker(*label, t, 1)) {
          if (stage->t_end < stage->t_start) __builtin_trap();
        }
      }
    }
  }
  (void)tracker.unclosed(t + 1, 1);
  return 0;
}
