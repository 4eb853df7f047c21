// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/pss_pass.hpp"

#include <algorithm>

namespace qprof::record {

bool PssPass::moved() const {
  constexpr Bytes kFloor = Bytes{1} << 20;
  return slack > kFloor && slack * 100 > sum.pss;
}

PssPass assemble_pss_pass(std::span<const PssReading> readings) {
  PssPass p;
  Bytes raw = 0, raw_unreclaimable = 0;
  bool split = false;
  for (std::size_t i = 0; i < readings.size(); ++i) {
    const PssReading& r = readings[i];
    const bool last = i + 1 == readings.size();
    const bool left = !r.resident_after || *r.resident_after == 0;
    // A member that exits during the pass hands its share of the pages it shared to the others:
    // those read after it count that share again (workers that end one by one made the footprint
    // 14 MiB above the truth). Left out, each share is at most what it is.
    if (left && !last) continue;
    ++p.counted;
    raw += r.rollup.pss;
    p.sum.uss += r.rollup.uss;
    if (r.rollup.has_split) {
      split = true;
      raw_unreclaimable += r.rollup.pss_unreclaimable;
    }
    if (left) continue;  // the last one read: no member after it counted its share again
    // Pages this member mapped or unmapped during the pass, of those it shares: each moved the
    // shares of the members read on the other side of the change, by at most half a page. Pages
    // of its own (USS) moved no other member's share: a job that grows is not cut.
    const Bytes after = *r.resident_after;
    const Bytes moved = after > r.resident_before ? after - r.resident_before : r.resident_before - after;
    const Bytes shared = r.rollup.rss > r.rollup.uss ? r.rollup.rss - r.rollup.uss : 0;
    p.slack += std::min(moved, shared) / 2;
  }
  // Never below what the members hold alone: their own pages are counted whole at any moment.
  p.sum.pss = std::max(raw > p.slack ? raw - p.slack : 0, p.sum.uss);
  p.slack = raw - p.sum.pss;
  if (split) p.sum.unreclaimable = std::min(raw_unreclaimable > p.slack ? raw_unreclaimable - p.slack : 0, p.sum.pss);
  return p;
}

}  // namespace qprof::record
