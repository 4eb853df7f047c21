// SPDX-License-Identifier: Apache-2.0
// The style compiled into the binary (the fallback of a lone qprof) is plot/qprof.gp as it is.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "qprof/plot/script.hpp"
#include "qprof_builtin_style.hpp"

namespace {

TEST(PlotBuiltinStyle, IsTheStyleFileVerbatim) {
  std::ifstream in(std::string(QPROF_TEST_DATA) + "/../../plot/qprof.gp");
  ASSERT_TRUE(in);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(std::string(qprof::plot::kBuiltinStyle), text.str());
}

TEST(PlotBuiltinStyle, IsWhatALoneBinaryFallsBackTo) {
  char dir_template[] = "/tmp/qprof-style.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  // No directory holds qprof.gp: the compiled-in copy, named as such.
  const qprof::plot::StyleSource lone = qprof::plot::default_style({dir + "/absent", dir});
  EXPECT_EQ(lone.name, "plot/qprof.gp (built in)");
  EXPECT_EQ(lone.text, qprof::plot::kBuiltinStyle);
  // A directory that holds one wins over the copy.
  std::ofstream(dir + "/qprof.gp") << "set grid\n";
  const qprof::plot::StyleSource found = qprof::plot::default_style({dir + "/absent", dir});
  EXPECT_EQ(found.name, dir + "/qprof.gp");
  EXPECT_EQ(found.text, "set grid\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
