// SPDX-License-Identifier: Apache-2.0
// Inside the report module: what `qprof report` says of the series beyond RSS (memory by kind,
// tasks) and of each stage's bottleneck.
#pragma once

#include "qprof/report/report.hpp"

namespace qprof::report::detail {

// Facts: the RSS split by kind at its largest KINDS sample, the swap peak, the most threads and
// processes and the VSZ peak. Nothing when the trace has no KINDS/TASKS lines.
void add_usage_facts(const trace::Trace& trace, Document& doc);

// Each stage's CPU %, GPU busy %, storage read rate, memory growth and verdict: machine-only
// columns of the stage table `stages` (CSV, JSON) and a human table of their own (text, Markdown)
// with each verdict, numbers beside it, under it.
void add_bottlenecks(const trace::Trace& trace, Table& stages, Document& doc);

}  // namespace qprof::report::detail
