// SPDX-License-Identifier: Apache-2.0
#include "live_view.hpp"

#include <unistd.h>

namespace qprof::record::session {

LiveView LiveView::open(bool quiet, bool live_option, std::int64_t start_ns) {
  if (!LiveLine::wanted(STDERR_FILENO, quiet, live_option)) return LiveView(nullptr, start_ns);
  return LiveView(std::make_unique<LiveLine>(STDERR_FILENO), start_ns);
}

LiveStatus LiveView::status(std::int64_t now, Bytes rss, Bytes peak_rss, std::optional<Bytes> gpu) const {
  LiveStatus s;
  s.elapsed = static_cast<double>(now - start_ns_) / 1e9;
  s.rss = rss;
  s.peak_rss = peak_rss;
  s.footprint = footprint_;
  s.peak_footprint = peak_footprint_;
  s.gpu = gpu;
  s.cpu_percent = cpu_percent_;
  s.stage = stage_;
  return s;
}

void LiveView::show(std::int64_t now, Bytes rss, Bytes peak_rss, std::optional<Bytes> gpu) {
  if (line_) line_->update(status(now, rss, peak_rss, gpu), now);
}

}  // namespace qprof::record::session
