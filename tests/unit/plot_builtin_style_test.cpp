// The style compiled into the binary (the fallback of a lone qprof) is plot/qprof.gp as it is.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "qprof_builtin_style.hpp"

namespace {

TEST(PlotBuiltinStyle, IsTheStyleFileVerbatim) {
  std::ifstream in(std::string(QPROF_TEST_DATA) + "/../../plot/qprof.gp");
  ASSERT_TRUE(in);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(std::string(qprof::plot::kBuiltinStyle), text.str());
}

}  // namespace
