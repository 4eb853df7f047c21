// SPDX-License-Identifier: Apache-2.0
// The figures that need every sample of a series (trends, rates) read a reduced trace's file
// again (trace::read_trace_reduced), as far as its reading went; a whole trace from memory.
// Private to analysis/.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "qprof/analysis/metric.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::analysis::detail {

using SampleSink = std::function<void(const trace::MemSample&)>;
using IndexedSink = std::function<void(std::size_t metric, const trace::MemSample&)>;

// Every sample of each metric's series, in time order, as metric_series gives them, with the
// metric's index in `metrics` (a reduced trace: one read of its file, whose series are in time
// order, else it would not have been reduced).
void scan_series(const trace::Trace& t, const std::vector<Metric>& metrics, const IndexedSink& each);
// A reduced trace's records, read again from its file.
void scan_records(const trace::Trace& t, trace::Visitor& visitor);

// One metric's series of a reduced trace, as scan_series gives it, read a piece of the file at a
// time (trace::PieceReader): for a caller that walks many traces at once on one thread.
class SeriesPieces {
 public:
  SeriesPieces(const trace::Trace& t, Metric m, SampleSink each);
  ~SeriesPieces();
  SeriesPieces(const SeriesPieces&) = delete;
  SeriesPieces& operator=(const SeriesPieces&) = delete;

  // The next piece's samples to `each`; false once the last were given (in this call or before).
  bool next();

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace qprof::analysis::detail
