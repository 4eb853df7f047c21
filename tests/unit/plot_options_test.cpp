// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "qprof/plot/plot.hpp"

namespace qprof::plot {
namespace {

TEST(PlotOptions, FormatFromTheOutputName) {
  EXPECT_EQ(format_for("chart.png"), Format::png);
  EXPECT_EQ(format_for("dir.v2/Chart.SVG"), Format::svg);
  EXPECT_EQ(format_for("a.pdf"), Format::pdf);
  EXPECT_EQ(format_for("-"), Format::text);
  EXPECT_EQ(format_for("chart.jpg"), std::nullopt);
  EXPECT_EQ(format_for("png"), std::nullopt);
  EXPECT_EQ(format_for(""), std::nullopt);
  EXPECT_EQ(format_name(Format::text), "dumb");
}

TEST(PlotOptions, Size) {
  EXPECT_EQ(parse_size_spec("1280x720"), (std::pair{1280, 720}));
  EXPECT_EQ(parse_size_spec("800X600"), (std::pair{800, 600}));
  EXPECT_EQ(parse_size_spec(" 100 x 40 "), (std::pair{100, 40}));
  for (const char* bad : {"", "1280", "x720", "1280x", "-5x10", "10x5", "1280x720x3", "axb", "99999x100", "1.5x100"}) {
    EXPECT_EQ(parse_size_spec(bad), std::nullopt) << bad;
  }
}

TEST(PlotOptions, Window) {
  using W = std::pair<std::optional<double>, std::optional<double>>;
  EXPECT_EQ(parse_window("10,20"), (W{10.0, 20.0}));
  EXPECT_EQ(parse_window("1.5s, 2s"), (W{1.5, 2.0}));
  EXPECT_EQ(parse_window("10,"), (W{10.0, std::nullopt}));
  EXPECT_EQ(parse_window(",20"), (W{std::nullopt, 20.0}));
  for (const char* bad : {"", ",", "10", "20,10", "5,5", "-1,3", "a,b", "1,2,3", "nan,4", "inf,5"}) {
    EXPECT_EQ(parse_window(bad), std::nullopt) << bad;
  }
}

TEST(PlotOptions, Panels) {
  EXPECT_EQ(parse_panels("memory,gpu,cpu,io"), (std::vector{Panel::memory, Panel::gpu, Panel::cpu, Panel::io}));
  EXPECT_EQ(parse_panels("cpu, Memory"), (std::vector{Panel::cpu, Panel::memory}));
  EXPECT_EQ(parse_panels("io,io"), (std::vector{Panel::io}));
  for (const char* bad : {"", "disks", "memory,", ",cpu"}) EXPECT_EQ(parse_panels(bad), std::nullopt) << bad;
  EXPECT_EQ(panel_name(Panel::gpu), "gpu");
  EXPECT_EQ(parse_panels("memory,disk"), (std::vector{Panel::memory, Panel::disk}));
}

}  // namespace
}  // namespace qprof::plot
