// SPDX-License-Identifier: Apache-2.0
// Series helpers shared by the analysis files (private to analysis/).
#pragma once

#include <optional>
#include <unordered_map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/metric_table.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/analysis/peaks.hpp"

namespace qprof::analysis::detail {

std::optional<Bytes> peak_line(const trace::Trace& t, std::string_view name);
// The highest sample; the first one when several are equal.
std::optional<trace::MemSample> highest(const std::vector<trace::MemSample>& series);
// The samples of a time-ordered series inside a window, found by binary search.
std::pair<std::vector<trace::MemSample>::const_iterator, std::vector<trace::MemSample>::const_iterator> samples_in(
    const std::vector<trace::MemSample>& series, const TimeWindow& w);
bool in_any(const std::vector<TimeWindow>& windows, Seconds t);
TimeWindow window_of(const trace::Stage& s);
// The latest sample at or before t (with the slack), if any.
std::optional<Bytes> value_at(const std::vector<trace::MemSample>& series, Seconds t);
// The highest sample inside any of the stages (a stage can run several times).
std::optional<Peak> peak_in_stages(const std::vector<trace::MemSample>& series, Metric m,
                                   const std::vector<const trace::Stage*>& stages);
double round_to(double v, double step);
// GPU lines summed over devices: one value per sample time, the latest value of every device
// seen so far summed, given once the lines of that time end (devices are sampled together).
class GpuTotals {
 public:
  // Feeds `each` the total of the previous time when `s` starts a new one.
  template <class Each>
  void add(const trace::GpuSample& s, Each&& each) {
    if (pending_ && pending_t_ != s.t) each(trace::MemSample{pending_t_, sum_});
    // The sum is kept as devices change, not summed again per time: with many devices that was
    // quadratic (200 000 devices took a report 38 s). Unsigned: the updates cancel.
    Bytes& held = latest_[s.device];
    sum_ += s.tree - held;
    held = s.tree;
    pending_ = true;
    pending_t_ = s.t;
  }
  template <class Each>
  void finish(Each&& each) {
    if (pending_) each(trace::MemSample{pending_t_, sum_});
    pending_ = false;
  }

 private:
  std::unordered_map<int, Bytes> latest_;
  Bytes sum_ = 0;
  bool pending_ = false;
  Seconds pending_t_ = 0;
};

// A metric's series as the trace holds it (GPU: devices summed at each sample time).
std::vector<trace::MemSample> series_as_written(const trace::Trace& t, Metric m);
// What the metric's row functions need of the trace: whether it has CGROUP lines, and for a
// dir:NAME metric the index of its directory.
PickContext pick_context(const trace::Trace& t, Metric m);
// A dir:NAME metric's info and NAME (dirs.cpp); nullptr for any other metric.
const MetricInfo* dir_metric_info(Metric m, std::string* name = nullptr);

}  // namespace qprof::analysis::detail
