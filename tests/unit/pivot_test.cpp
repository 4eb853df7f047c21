// SPDX-License-Identifier: Apache-2.0
// `qprof compare --pivot`: the comparison folded into a grid, its cells the rows' peaks, exact in
// text and CSV; labels that are not ROW/COLUMN and two rows of one cell are refused.
#include <gtest/gtest.h>

#include <stdexcept>

#include "qprof/report/report.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::report {
using analysis::compare;
using analysis::CompareEntry;
using analysis::Metric;
using trace::Trace;

namespace {

constexpr Bytes MiB = 1 << 20;

// A trace whose peak RSS is `peak` MiB.
Trace peaking_at(double peak) {
  Trace t;
  t.mem = {{0.0, 10 * MiB}, {1.0, static_cast<Bytes>(peak * MiB)}, {2.0, 10 * MiB}};
  return t;
}

struct Grid {
  std::vector<Trace> traces;
  std::vector<CompareEntry> entries;
  Grid(const std::vector<std::pair<std::string, double>>& cells) {
    traces.reserve(cells.size());
    for (const auto& [label, peak] : cells) {
      traces.push_back(peaking_at(peak));
      entries.push_back({label, {&traces.back()}});
    }
  }
  Result<Document> pivoted() const {
    return pivot_document(entries, compare(entries, Metric::rss, false), {"model", "method"});
  }
  Document doc() const { return *pivoted(); }
};

TEST(Pivot, RowsAndColumnsInFirstSeenOrderWithTheLowestNamed) {
  const Grid g({{"small/minmax", 100},
                {"small/minmse", 180},
                {"big/minmax", 300},
                {"big/minmse", 250},
                {"small/layerwise", 100}});
  EXPECT_EQ(render(g.doc(), Format::text),
            "peak RSS by model and method\n"
            "model  minmax MiB  minmse MiB  layerwise MiB  lowest method\n"
            "small       100.0       180.0          100.0  minmax, layerwise\n"
            "big         300.0       250.0              -  minmse\n"
            "cells: the peak of each run (rss); - : no such run\n");
  EXPECT_EQ(render(g.doc(), Format::csv),
            "model,peak_bytes:minmax,peak_bytes:minmse,peak_bytes:layerwise,lowest\n"
            "small,104857600,188743680,104857600,\"minmax, layerwise\"\n"
            "big,314572800,262144000,,minmse\n");
}

TEST(Pivot, TheLastSlashSplitsTheLabel) {
  const Grid g({{"org/model-a/minmax", 64}});
  const std::string csv = render(g.doc(), Format::csv);
  EXPECT_NE(csv.find("\norg/model-a,67108864,minmax\n"), std::string::npos) << csv;
}

TEST(Pivot, LabelsThatAreNotRowSlashColumnAreRefused) {
  for (const std::string bad : {"minmax", "/minmax", "small/"}) {
    const Grid g({{bad, 64}});
    const Result<Document> refused = g.pivoted();
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.failure().message,
              "the label '" + bad + "' is not model/method (give --label ROW/COLUMN for every row)");
  }
}

TEST(Pivot, TwoRowsOfOneCellAreRefused) {
  const Grid g({{"small/minmax", 64}, {"small/minmax", 65}});
  const Result<Document> refused = g.pivoted();
  ASSERT_FALSE(refused) << "no error";
  EXPECT_EQ(refused.failure().message, "two rows are the cell 'small/minmax'");
}

}  // namespace
}  // namespace qprof::report
