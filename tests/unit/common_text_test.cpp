// The helpers every output stage shares (common/). Each was written twice before and the copies
// had drifted: the default label of a trace.
#include <gtest/gtest.h>

#include <string>

#include "qprof/common/trace_label.hpp"

namespace qprof {
namespace {

TEST(TraceLabel, StripsADatSuffixOnly) {
  EXPECT_EQ(default_label("runs/minmax.dat"), "minmax");
  EXPECT_EQ(default_label("/a/b.c.dat"), "b.c");
  EXPECT_EQ(default_label("percentile"), "percentile");
  // plot used to strip any extension ("run.v2" → "run"), export only .dat: one trace, two names.
  EXPECT_EQ(default_label("runs/run.v2"), "run.v2");
  EXPECT_EQ(default_label("notes.txt"), "notes.txt");
  EXPECT_EQ(default_label("x,\"y\".dat"), "x,\"y\"");
  EXPECT_EQ(default_label(".dat"), ".dat");
  EXPECT_EQ(default_label("dir/"), "dir/");
}

}  // namespace
}  // namespace qprof
