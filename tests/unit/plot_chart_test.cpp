// SPDX-License-Identifier: Apache-2.0
// The chart model and the gnuplot program made from it, without running gnuplot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <tuple>

#include "qprof/plot/chart.hpp"
#include "qprof/plot/escape.hpp"
#include "qprof/plot/labels.hpp"
#include "qprof/plot/script.hpp"

namespace qprof::plot {
namespace {

const std::string kData = QPROF_TEST_DATA;

const ChartLabel* find_label(const ChartPanel& p, const std::string& text) {
  for (const ChartLabel& l : p.labels) {
    if (l.text == text) return &l;
  }
  return nullptr;
}

TEST(PlotChart, OneTraceWithEverything) {
  const TraceData d = *reduce_file(kData + "/plot/full.dat", {});
  PlotOptions o;
  o.panels = {Panel::memory, Panel::gpu, Panel::cpu, Panel::io};
  const Chart c = *build_chart({{&d, "full"}}, o, Format::png, 1280, 1200);
  ASSERT_EQ(c.panels.size(), 4u);
  const ChartPanel& mem = c.panels[0];
  EXPECT_EQ(mem.ylabel, "memory (MiB)");
  EXPECT_EQ(mem.bands.size(), 4u);  // the stages
  EXPECT_NE(find_label(mem, "Load"), nullptr);
  EXPECT_NE(find_label(mem, "Export (no End)"), nullptr);
  EXPECT_NE(find_label(mem, "checkpoint: batch 100"), nullptr);
  EXPECT_NE(find_label(mem, "killed by SIGKILL"), nullptr);
  EXPECT_NE(find_label(mem, "peak 5.40 GiB at 6 s"), nullptr);
  // Stages' own markers are not drawn again as checkpoints: 2 checkpoints and the exit.
  EXPECT_EQ(mem.vlines.size(), 3u);
  // Every label is above the data: the y range leaves them room.
  double data_max = 0;
  for (const ChartSeries& s : mem.series) {
    for (const Point& p : s.data) data_max = std::max(data_max, p.v);
  }
  for (const ChartLabel& l : mem.labels) {
    if (l.coords == ChartLabel::Coords::first_graph) {
      EXPECT_GT(l.y * mem.ymax, data_max) << l.text;
    }
  }
  // Exact peaks as lines, in the key.
  const auto titled = [&](const std::string& prefix) {
    return std::any_of(mem.series.begin(), mem.series.end(),
                       [&](const ChartSeries& s) { return s.title.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(titled("cgroup charge peak (includes page cache): 5.66 GiB"));
  EXPECT_TRUE(titled("largest process, kernel peak (lower bound): 2.90 GiB"));
  EXPECT_TRUE(titled("sum of VmHWM (upper bound): 7.02 GiB"));
  EXPECT_FALSE(titled("cgroup peak (exact)"));
  EXPECT_TRUE(titled("tree RSS sum, peak 5.40 GiB at 6 s"));
  EXPECT_TRUE(titled("footprint: cgroup charge")) << "the footprint series is named as such";
  // Other panels: stages and checkpoints too, labels only on top.
  EXPECT_EQ(c.panels[2].bands.size(), 4u);
  EXPECT_TRUE(c.panels[2].labels.empty());
  EXPECT_EQ(c.panels[2].ylabel, "CPU (% of one core)");
  EXPECT_TRUE(c.panels[3].xtic_labels);
  EXPECT_FALSE(c.panels[0].xtic_labels);
  // Panels stack top to bottom without overlapping, inside the canvas.
  for (std::size_t i = 0; i < c.panels.size(); ++i) {
    EXPECT_GT(c.panels[i].box.top, c.panels[i].box.bottom);
    EXPECT_GT(c.panels[i].box.bottom, 0);
    EXPECT_LT(c.panels[i].box.top, 1);
    if (i > 0) {
      EXPECT_LE(c.panels[i].box.top, c.panels[i - 1].box.bottom);
    }
  }
}

TEST(PlotChart, CpuIsPercentOfOneCoreAndIoARate) {
  const TraceData d = *reduce_file(kData + "/plot/full.dat", {});
  PlotOptions o;
  o.panels = {Panel::cpu, Panel::io};
  const Chart c = *build_chart({{&d, "full"}}, o, Format::svg, 1000, 600);
  ASSERT_EQ(c.panels.size(), 2u);
  double cpu_max = 0;
  for (const Point& p : c.panels[0].series.at(0).data) cpu_max = std::max(cpu_max, p.v);
  EXPECT_NEAR(cpu_max, 350.0, 0.5);  // 3.5 cores during calibration
  EXPECT_EQ(c.panels[1].ylabel, "I/O (MiB/s)");
  double read_max = 0;
  for (const Point& p : c.panels[1].series.at(0).data) read_max = std::max(read_max, p.v);
  EXPECT_NEAR(read_max, 400.0, 0.5);
}

TEST(PlotChart, AShortLastIntervalIsNoCpuSpike) {
  // One core busy, CPU read every 0.25 s in 10 ms ticks, and a last reading 2 ms after the one
  // before (qprof's final sample at the exit) that happens to see one more tick.
  std::string text = "QPROF 1 start=0\nMEM 1.0 0\n";
  for (int i = 0; i <= 20; ++i) text += "CPU " + std::to_string(i * 0.25) + " " + std::to_string(i * 0.25) + "\n";
  text += "CPU 5.002 5.01\nMEM 1.0 5.002\n";
  const TraceData d = *reduce_text(text, "cpu.dat", {});
  PlotOptions o;
  o.panels = {Panel::memory, Panel::cpu};
  const Chart c = *build_chart({{&d, "cpu"}}, o, Format::png, 1280, 720);
  const ChartSeries& cpu = c.panels.at(1).series.at(0);
  for (const Point& p : cpu.data) EXPECT_NEAR(p.v, 100.0, 5.0) << p.t;  // not 500 %
  EXPECT_NEAR(cpu.data.back().t, 5.002, 1e-9);
}

TEST(PlotChart, ExtremeValuesStayNumbers) {
  const std::string text =
      "QPROF 1 start=0\nMEM 0 0\nMEM 1099511627776 0.5\nPEAK cgroup 1152921504606846976\n"
      "GPU 0.5 0 1152921504606846976 0\n";
  const TraceData d = *reduce_text(text, "big.dat", {});
  const Chart c = *build_chart({{&d, "big"}}, {}, Format::png, 1280, 720);
  EXPECT_EQ(c.panels.at(0).ylabel, "memory (GiB)");
  EXPECT_TRUE(std::isfinite(c.panels.at(0).ymax));
  // 1 EiB (the most a trace line holds) in GiB, from the sample or from the PEAK line.
  EXPECT_GE(c.panels.at(0).ymax, 1073741824.0);
  EXPECT_FALSE(reduce_text("QPROF 1 start=0\nMEM 0 0\nMEM 1099511627777 0.5\n", "bigger.dat", {}))
      << "a MiB more than 1 EiB is a broken line";
}

TEST(PlotChart, ABoundFarAboveTheDataIsNeitherDrawnNorWritten) {
  // 100 MiB of data; Σ VmHWM of workers that never coexisted says 1 GiB; the kernel's 90 MiB.
  const std::string text =
      "QPROF 1 start=0\nMEM 50 0\nMEM 100 1\nMEM 60 2\nPEAK hwm_sum 1073741824\nPEAK kernel_process 94371840\n";
  const TraceData d = *reduce_text(text, "loose.dat", {});
  const Chart c = *build_chart({{&d, "loose"}}, {}, Format::png, 1280, 720);
  const ChartPanel& p = c.panels.at(0);
  EXPECT_LT(p.ymax, 200.0);  // MiB: the axis fits the data, not the loose bound
  std::string titles, notes;
  for (const ChartSeries& s : p.series) titles += s.title + "\n";
  for (const std::string& n : c.notes) notes += n + "\n";
  // An upper bound that far above bounds nothing (workers that never coexisted): left out, as the
  // run's summary leaves it out, neither drawn nor written under the chart.
  EXPECT_EQ(notes.find("sum of VmHWM"), std::string::npos) << notes;
  EXPECT_EQ(titles.find("sum of VmHWM"), std::string::npos) << titles;
  EXPECT_NE(titles.find("largest process, kernel peak (lower bound)"), std::string::npos) << titles;
}

TEST(PlotChart, DefaultSizes) {
  EXPECT_EQ(default_size({Panel::memory}, 1), (std::pair{1280, 720}));
  EXPECT_GT(default_size({Panel::memory, Panel::gpu}, 1).second, 720);
  EXPECT_GT(default_size({Panel::memory}, 3).second, default_size({Panel::memory}, 2).second);
  EXPECT_LE(default_size({Panel::memory, Panel::gpu, Panel::cpu, Panel::io}, 40).second, 4000);
}

TEST(PlotChart, DefaultPanelsAreMemoryAndGpuWhenRecorded) {
  const TraceData full = *reduce_file(kData + "/plot/full.dat", {});
  const TraceData mprof = *reduce_file(kData + "/mprof/func.dat", {});
  EXPECT_EQ(resolve_panels({{&full, "a"}}, {}), (std::vector{Panel::memory, Panel::gpu}));
  EXPECT_EQ(resolve_panels({{&mprof, "b"}}, {}), (std::vector{Panel::memory}));
  std::vector<std::string> warnings;
  PlotOptions o;
  o.panels = {Panel::gpu, Panel::memory};
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  EXPECT_EQ(resolve_panels({{&mprof, "b"}}, o), (std::vector{Panel::memory}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("no gpu samples"), std::string::npos);
}

TEST(PlotChart, OverlayAlignsAtZeroWithLanesAndAKeyOfPeaks) {
  const TraceData a = *reduce_file(kData + "/plot/full.dat", {});
  const TraceData b = *reduce_file(kData + "/mprof/func.dat", {});
  const Chart c = *build_chart({{&a, "minmax"}, {&b, "mprof run"}}, {}, Format::png, 1280, 720);
  const ChartPanel& mem = c.panels.at(0);
  EXPECT_DOUBLE_EQ(mem.xmin, 0);
  EXPECT_NEAR(mem.xmax, 12.01, 1e-6);  // the longer trace, to its exit
  ASSERT_GE(mem.series.size(), 2u);
  EXPECT_EQ(mem.series[0].title.rfind("minmax, peak 5.40 GiB at 6 s", 0), 0u) << mem.series[0].title;
  EXPECT_EQ(mem.series[1].title.rfind("mprof run, peak 141.8 MiB", 0), 0u) << mem.series[1].title;
  EXPECT_NE(mem.series[0].color, mem.series[1].color);
  EXPECT_EQ(mem.points.size(), 2u);  // each trace's peak
  // Stages as bars in their trace's lanes, in the trace's colour, at the top.
  std::size_t bars = 0;
  for (const ChartBand& band : mem.bands) {
    EXPECT_GT(band.color, 0);
    EXPECT_GT(band.y0, 0.5);
    ++bars;
  }
  EXPECT_EQ(bars, 4u + 2u);
}

// A job's stages are the spans of its ranks' and overlap (Alloc until the last rank is done,
// Hold from the first rank on): each takes a lane of its own, its name inside its bar.
TEST(PlotChart, OverlappingStagesOfATraceTakeLanesOfTheirOwn) {
  const TraceData a = *reduce_file(kData + "/mprof/func.dat", {});
  TraceData job = a;
  job.stages.clear();
  for (const auto& [name, from, to] : {std::tuple{"Alloc", 0.5, 3.0}, {"Hold", 1.0, 5.0}, {"Save", 5.5, 6.0}}) {
    trace::Stage s;
    s.name = name;
    s.t_start = from;
    s.t_end = to;
    job.stages.push_back(s);
  }
  for (const Format f : {Format::png, Format::text}) {
    const Chart c = *build_chart({{&a, "rank"}, {&job, "job"}}, {}, f, 1280, 720);
    const ChartPanel& mem = c.panels.at(0);
    std::vector<const ChartLabel*> names;
    for (const char* n : {"Alloc", "Hold", "Save"}) {
      names.push_back(find_label(mem, n));
      ASSERT_NE(names.back(), nullptr) << n << (f == Format::text ? " (text)" : "");
    }
    EXPECT_NE(names[0]->y, names[1]->y) << "Alloc and Hold overlap: two lanes";
    EXPECT_EQ(names[0]->y, names[2]->y) << "Save starts after Alloc's end: Alloc's lane";
    if (f == Format::text) continue;
    // The bars of one colour that overlap in time do not overlap in height.
    for (std::size_t i = 0; i < mem.bands.size(); ++i) {
      for (std::size_t k = i + 1; k < mem.bands.size(); ++k) {
        const ChartBand &p = mem.bands[i], &q = mem.bands[k];
        if (p.color != q.color || p.x1 <= q.x0 || q.x1 <= p.x0) continue;
        EXPECT_TRUE(p.y1 <= q.y0 || q.y1 <= p.y0) << p.x0 << "-" << p.x1 << " and " << q.x0 << "-" << q.x1;
      }
    }
  }
}

TEST(PlotChart, FacetsShareTheAxes) {
  const TraceData a = *reduce_file(kData + "/plot/full.dat", {});
  const TraceData b = *reduce_file(kData + "/mprof/func.dat", {});
  PlotOptions o;
  o.facet = true;
  const Chart c = *build_chart({{&a, "a"}, {&b, "b"}}, o, Format::png, 1280, 1200);
  // memory + gpu for each trace
  ASSERT_EQ(c.panels.size(), 4u);
  EXPECT_DOUBLE_EQ(c.panels[0].ymax, c.panels[2].ymax);
  EXPECT_DOUBLE_EQ(c.panels[0].xmax, c.panels[2].xmax);
  EXPECT_GT(c.panels[0].box.bottom, c.panels[2].box.top);
  EXPECT_EQ(std::count_if(c.canvas_labels.begin(), c.canvas_labels.end(),
                          [](const ChartLabel& l) { return l.kind == LabelKind::facet; }),
            2);
}

TEST(PlotChart, WindowAndEmptyWindow) {
  ReduceOptions ro;
  ro.from = 3;
  ro.to = 5;
  const TraceData d = *reduce_file(kData + "/plot/full.dat", ro);
  PlotOptions o;
  o.from = 3;
  o.to = 5;
  const Chart c = *build_chart({{&d, "w"}}, o, Format::png, 800, 500);
  EXPECT_DOUBLE_EQ(c.panels[0].xmin, 3);
  EXPECT_DOUBLE_EQ(c.panels[0].xmax, 5);
  ro.from = 100;
  ro.to = 200;
  const TraceData none = *reduce_file(kData + "/plot/full.dat", ro);
  o.from = 100;
  o.to = 200;
  EXPECT_FALSE(build_chart({{&none, "w"}}, o, Format::png, 800, 500));
}

TEST(PlotChart, LongTracesReadInMinutesOrHours) {
  std::string text = "QPROF 1 start=0\n";
  for (int i = 0; i <= 100; ++i) text += "MEM 1.0 " + std::to_string(i * 36) + "\n";  // one hour
  const TraceData hour = *reduce_text(text, "hour.dat", {});
  const Chart c = *build_chart({{&hour, "h"}}, {}, Format::png, 1280, 720);
  EXPECT_EQ(c.time_format, TimeFormat::minutes);
  EXPECT_GE(c.xtic_step, 300);
  EXPECT_EQ(c.xlabel, "time from start (min:s)");
  std::string three = "QPROF 1 start=0\n";
  for (int i = 0; i <= 100; ++i) three += "MEM 1.0 " + std::to_string(i * 108) + "\n";  // three hours
  const TraceData hours = *reduce_text(three, "three.dat", {});
  const Chart h = *build_chart({{&hours, "h"}}, {}, Format::png, 1280, 720);
  EXPECT_EQ(h.time_format, TimeFormat::hours);
  EXPECT_GE(h.xtic_step, 1200);
  EXPECT_EQ(h.xlabel, "time from start (h:min)");
}

// The structural promise of the script: a chart's commands hold no backquote and no '@' at all
// (nothing gnuplot could expand), and outside string literals only qprof's own words, whatever
// the trace says.
void expect_no_code_from_strings(const std::string& script, const std::vector<std::string>& words) {
  std::istringstream in(script.substr(script.find("# ---- chart")));
  std::string line;
  bool data = false;
  while (std::getline(in, line)) {
    if (data) {
      if (line == "e") data = false;
      continue;
    }
    EXPECT_EQ(line.find_first_of("`@"), std::string::npos) << line;
    // What is outside the double-quoted literals (backslash escapes inside them).
    std::string outside;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (quoted && line[i] == '\\') {
        ++i;
        continue;
      }
      if (line[i] == '"') {
        quoted = !quoted;
        continue;
      }
      if (!quoted) outside += line[i];
    }
    EXPECT_FALSE(quoted) << "unterminated string: " << line;
    for (const std::string& w : words) EXPECT_EQ(outside.find(w), std::string::npos) << line;
    // A plot command's data follows its last line.
    if ((line.rfind("plot ", 0) == 0 || line.rfind("     '-'", 0) == 0) && line.back() != '\\') {
      data = line.find("'-'") != std::string::npos;
    }
  }
}

TEST(PlotScript, HostileLabelsStayInsideLiterals) {
  const std::string text =
      "QPROF 1 start=100\n"
      "CMDLINE sh -c 'touch /tmp/x'; \"; system(\"touch /tmp/y\"); \" `touch /tmp/z`\n"
      "MEM 10.0 100.0\n"
      "MARK 100.1 a\"; system(\"touch /tmp/pwned\"); \"\n"
      "MEM 20.0 100.2\n"
      "MARK 100.3 `touch /tmp/pwned`\n"
      "MARK 100.35 x' . system('touch /tmp/pwned') . '\n"
      "MARK 100.4 line1\\nline2'; system('touch /tmp/pwned'); \\\\\n"
      "MARK 100.45 @qprof_format $(touch /tmp/pwned) \\xff\n"
      "MEM 30.0 100.5\n"
      "GPUDEV 0 GPU-x 1000 name'; system('x'); '\n"
      "GPU 100.5 0 10 20\n"
      "PEAK kernel_process 1000\n";
  const TraceData d = *reduce_text(text, "hostile.dat", {});
  PlotOptions o;
  o.title = "T'; system('touch /tmp/pwned'); '`x`";
  o.panels = {Panel::memory, Panel::gpu};
  for (Format f : {Format::png, Format::text}) {
    const Chart c = *build_chart({{&d, "L'\"`@"}}, o, f, f == Format::text ? 100 : 1280, f == Format::text ? 30 : 720);
    const std::string script = write_script(c, {{"style", "set grid\n"}}, OutputTarget::fd3).commands();
    expect_no_code_from_strings(script, {"system", "touch", "pwned", "$("});
    EXPECT_NE(script.find(gp_string("a\"; system(\"touch /tmp/pwned\"); \"")), std::string::npos);
    EXPECT_NE(script.find("set output '/dev/fd/3'"), std::string::npos);
    // The style comes first, then qprof forces plain text.
    EXPECT_LT(script.find("set grid"), script.find("set termoption noenhanced"));
  }
}

TEST(PlotScript, OutputTargetsAndData) {
  const TraceData d = *reduce_file(kData + "/mprof/func.dat", {});
  const Chart c = *build_chart({{&d, "f"}}, {}, Format::svg, 800, 500);
  const Script s = write_script(c, {{"a", "# a"}}, OutputTarget::named, "out dir/it's.svg");
  const std::string text = s.commands();
  EXPECT_NE(text.find("set output \"out dir/it's.svg\""), std::string::npos);
  EXPECT_NE(text.find("qprof_format = 'svg'"), std::string::npos);
  EXPECT_NE(text.find("unset multiplot"), std::string::npos);
  // One data set for each '-' in the plot commands.
  std::size_t sets = 0;
  for (const ScriptChunk& ch : s.chunks) {
    sets += ch.data.size();
    for (const PlotItem& item : ch.plot) EXPECT_LT(item.data, static_cast<int>(ch.data.size()));
  }
  std::size_t dashes = 0, pos = 0;
  while ((pos = text.find("'-' using", pos)) != std::string::npos) ++dashes, ++pos;
  EXPECT_EQ(sets, dashes);
  EXPECT_NE(write_script(c, {}, OutputTarget::stdout_).commands().find("set output\n"), std::string::npos);
}

TEST(PlotScript, TheDefaultStyleIsFound) {
  const StyleSource s = default_style();
  EXPECT_NE(s.text.find("set terminal pngcairo"), std::string::npos);
  EXPECT_FALSE(template_dirs().empty());
}

}  // namespace
}  // namespace qprof::plot
