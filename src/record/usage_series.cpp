// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/usage_series.hpp"

#include <algorithm>

namespace qprof::record {
using trace::MemKindsSample;
using trace::TasksSample;

void UsageSeries::record(const std::vector<Member>& members, Seconds t, trace::Writer& out) {
  MemKindsSample k{t, 0, 0, 0, 0};
  TasksSample n{t, 0, 0, 0};
  for (const Member& m : members) {
    // A member qprof reaped, or one whose status read failed, holds nothing any more.
    if (m.reaped_by_qprof || m.gone || !m.usage.valid) continue;
    k.anon += m.usage.anon;
    k.file += m.usage.file;
    k.shmem += m.usage.shmem;
    k.swap += m.usage.swap;
    ++n.processes;
    n.threads += m.usage.threads;
    n.vsz += m.usage.vsz;
  }
  if (n.processes == 0) return;  // the tree is gone: no false zero
  ++readings_;
  out.kinds(k);
  out.tasks(n);
  if (!largest_ || k.rss() > largest_->rss()) largest_ = k;
  if (!most_tasks_ || n.threads > most_tasks_->threads) most_tasks_ = n;
  peak_vsz_ = std::max(peak_vsz_, n.vsz);
  peak_swap_ = std::max(peak_swap_, k.swap);
}

}  // namespace qprof::record
