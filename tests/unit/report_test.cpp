// SPDX-License-Identifier: Apache-2.0
// The exporters over fixture traces: exact tables in text, Markdown and CSV, JSON parsed back.
#include "qprof/report/report.hpp"

#include <algorithm>
#include <sstream>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "qprof/trace/completeness.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::report {
using analysis::check_budget;
using analysis::compare;
using analysis::CompareColumn;
using analysis::CompareEntry;
using analysis::CompareValue;
using analysis::Comparison;
using analysis::find_peak;
using analysis::Metric;
using analysis::Spread;
using trace::Trace;

namespace {

constexpr Bytes MiB = 1 << 20;

Trace fixture(const std::string& name) { return trace::read_trace(std::string(QPROF_TEST_DATA) + "/report/" + name); }

Document stages_of(const Trace& t, Metric m = Metric::rss) {
  Document d;
  d.tables.push_back(stage_table(t, m));
  return d;
}

TEST(Formats, Names) {
  EXPECT_EQ(parse_format("md"), Format::markdown);
  EXPECT_EQ(parse_format("markdown"), Format::markdown);
  EXPECT_EQ(parse_format("json"), Format::json);
  EXPECT_EQ(parse_format("yaml"), std::nullopt);
}

TEST(StageTable, TextIsAlignedWithUnitsInTheHeader) {
  EXPECT_EQ(
      render(stages_of(fixture("quark.dat")), Format::text),
      "Stages (RSS of the tree, sampled)\n"
      "stage                  start s   end s  duration s  share  peak MiB  at start MiB  at end MiB  delta MiB\n"
      "Pre-process              1.200   3.500       2.300   6.5%     520.0         256.0       512.5     +256.5\n"
      "Calibration              4.000  20.500      16.500  46.3%     700.0         515.0       520.0       +5.0\n"
      "Quantization (Static)   21.000  35.000      14.000  39.3%     900.0         768.0       640.0     -128.0\n");
}

TEST(StageTable, NarrowedToATerminalKeepsTheAnswerAndCutsLongNames) {
  Document d = stages_of(fixture("quark.dat"));
  d.tables[0].rows[2][0].text = "Quantization (Static) with a name much longer than any terminal column allows";
  RenderOptions o;
  o.text_width = 73;  // the summary's 80 less its "qprof: " prefix
  o.named_width = 80;
  o.wider = "qprof report shows them";
  const std::string text = render(d, Format::text, o);
  EXPECT_EQ(text,
            "Stages (RSS of the tree, sampled)\n"
            "stage                              duration s  share  peak MiB  delta MiB\n"
            "Pre-process                             2.300   6.5%     520.0     +256.5\n"
            "Calibration                            16.500  46.3%     700.0       +5.0\n"
            "Quantization (Static) with a n...      14.000  39.3%     900.0     -128.0\n"
            "left out to fit 80 columns: start, end, at start, at end;\n"
            "  qprof report shows them\n")
      << text;
  // Without a width, every column and the whole name.
  EXPECT_NE(render(d, Format::text).find("allows"), std::string::npos);
}

TEST(StageTable, ANoteKeepsEachNumberWithItsUnit) {
  Document d = stages_of(fixture("quark.dat"));
  d.tables[0].notes.push_back("the peak of the footprint was 700.0 MiB, 3.2 % above the limit");
  RenderOptions o;
  o.text_width = 35;  // "... was 700.0" fills a line: its unit goes with it to the next
  const std::string text = render(d, Format::text, o);
  EXPECT_TRUE(text.find("700.0 MiB") != std::string::npos && text.find("3.2 %") != std::string::npos) << text;
}

TEST(StageTable, UnclosedStagesAreMarkedInEveryFormat) {
  const Document d = stages_of(fixture("open_stage.dat"));
  EXPECT_EQ(render(d, Format::text),
            "Stages (RSS of the tree, sampled)\n"
            "stage                start s  end s  duration s  share  peak MiB  at start MiB  at end MiB  delta MiB\n"
            "Load                   0.100  0.300       0.200  25.0%     150.0          50.0       110.0      +60.0\n"
            "Train (never ended)    0.400  0.800       0.400  50.0%     400.0         110.0       260.0     +150.0\n"
            "Eval                   0.600  0.700       0.100  12.5%     400.0         250.0       400.0     +150.0\n"
            "never ended: a Start marker without its End; the stage runs to the end of the trace\n");
  EXPECT_EQ(render(d, Format::markdown),
            "**Stages (RSS of the tree, sampled)**\n"
            "\n"
            "| stage               | start s | end s | duration s | share | peak MiB | at start MiB | at end MiB | "
            "delta MiB |\n"
            "| :------------------ | ------: | ----: | ---------: | ----: | -------: | -----------: | ---------: | "
            "--------: |\n"
            "| Load                |   0.100 | 0.300 |      0.200 | 25.0% |    150.0 |         50.0 |      110.0 |     "
            "+60.0 |\n"
            "| Train (never ended) |   0.400 | 0.800 |      0.400 | 50.0% |    400.0 |        110.0 |      260.0 |    "
            "+150.0 |\n"
            "| Eval                |   0.600 | 0.700 |      0.100 | 12.5% |    400.0 |        250.0 |      400.0 |    "
            "+150.0 |\n"
            "\n"
            "never ended: a Start marker without its End; the stage runs to the end of the trace\n");
  EXPECT_EQ(
      render(d, Format::csv),
      "stage,start_s,end_s,duration_s,share,peak_bytes,peak_at_s,mem_start_bytes,mem_end_bytes,mem_delta_bytes,closed\n"
      "Load,0.1,0.3,0.2,0.25,157286400,0.2,52428800,115343360,62914560,true\n"
      "Train,0.4,0.8,0.4,0.5,419430400,0.7,115343360,272629760,157286400,false\n"
      "Eval,0.6,0.7,0.1,0.125,419430400,0.7,262144000,419430400,157286400,true\n");
  EXPECT_EQ(render(d, Format::csv, {Unit::MiB}).substr(0, 94),
            "stage,start_s,end_s,duration_s,share,peak_mib,peak_at_s,mem_start_mib,mem_end_mib,mem_delta_mi");
}

TEST(StageTable, AChosenUnitAndAnotherMetric) {
  const std::string text = render(stages_of(fixture("quark.dat"), Metric::gpu), Format::text, {Unit::GiB});
  EXPECT_EQ(
      text,
      "Stages (GPU memory of the tree, sampled)\n"
      "stage                  start s   end s  duration s  share  peak GiB  at start GiB  at end GiB  delta GiB\n"
      "Pre-process              1.200   3.500       2.300   6.5%         -          0.00        0.00       0.00\n"
      "Calibration              4.000  20.500      16.500  46.3%      2.00          1.00        2.00      +1.00\n"
      "Quantization (Static)   21.000  35.000      14.000  39.3%      2.00          2.00        1.50     -0.502\n");
  // Under 1 GiB, three significant digits (--unit GiB on a small job: 0.508, not 0.51; 5 MiB: 0.00488).
  const std::string rss = render(stages_of(fixture("quark.dat")), Format::text, {Unit::GiB});
  EXPECT_NE(rss.find("0.508"), std::string::npos) << rss;
  Column size = Column::of("peak", "peak", Kind::bytes);
  EXPECT_EQ(human_value(size, 5.0 * MiB, Unit::GiB), "0.00488");
  EXPECT_EQ(human_value(size, 0.0, Unit::GiB), "0.00");
  EXPECT_EQ(human_value(size, 3.0 * 1024 * MiB, Unit::GiB), "3.00");
}

TEST(Report, JsonHoldsFactsPeaksAndStages) {
  // Σ RSS's stage figures (the default is the footprint: the fixture's cgroup charge).
  const auto j = nlohmann::json::parse(render(trace_report(fixture("quark.dat"), Metric::rss), Format::json));
  EXPECT_EQ(j["command"], "python3 quantize.py --calib-method minmax");
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 35.6);
  EXPECT_EQ(j["exit_status"], 0);
  EXPECT_EQ(j["disk_read_bytes"], 906 * MiB);
  // The footprint first (the fixture's cgroup charge), then every other metric.
  EXPECT_EQ(j["footprint_bytes"], 950 * MiB);
  EXPECT_EQ(j["footprint_basis"], "cgroup charge");
  EXPECT_EQ(j["rss_sum_peak_bytes"], 900 * MiB);
  ASSERT_EQ(j["peaks"].size(), 8u);
  EXPECT_EQ(j["peaks"][0]["metric"], "footprint");
  EXPECT_EQ(j["peaks"][1]["metric"], "rss");
  EXPECT_EQ(j["peaks"][1]["peak_bytes"], 900 * MiB);
  EXPECT_DOUBLE_EQ(j["peaks"][1]["at_s"].get<double>(), 22.0);
  EXPECT_EQ(j["peaks"][1]["stage"], "Quantization (Static)");
  EXPECT_EQ(j["peaks"][7]["metric"], "kernel_process");
  EXPECT_TRUE(j["peaks"][7]["at_s"].is_null());
  EXPECT_EQ(j["peaks"][7]["kernel_high_water_mark"], true);
  ASSERT_EQ(j["stages"].size(), 3u);
  EXPECT_EQ(j["stages"][2]["stage"], "Quantization (Static)");
  EXPECT_EQ(j["stages"][2]["mem_delta_bytes"], -128 * static_cast<std::int64_t>(MiB));
  EXPECT_DOUBLE_EQ(j["stages"][2]["peak_at_s"].get<double>(), 22.0);
  EXPECT_EQ(j["stages"][2]["closed"], true);
}

TEST(Report, TextStartsWithTheFactsOfTheRun) {
  const std::string text = render(trace_report(fixture("quark.dat")), Format::text);
  const std::string facts = text.substr(0, text.find("\nPeaks\n"));
  EXPECT_EQ(facts.substr(0, facts.find("CPU time")), "trace            " + std::string(QPROF_TEST_DATA) +
                                                         "/report/quark.dat\n"
                                                         "command          python3 quantize.py --calib-method minmax\n"
                                                         "footprint        950.0 MiB\n"
                                                         "footprint basis  cgroup charge\n"
                                                         "Σ RSS peak       900.0 MiB\n"
                                                         "host             lab-7\n"
                                                         "duration         35.6 s\n"
                                                         "samples          16\n"
                                                         "interval         500 ms\n"
                                                         "exit status      0\n");
  // Every series the trace has: CPU, storage and syscall I/O (the fixture's last IO line).
  for (const char* line :
       {"CPU time         ", "CPU peak %       ", "disk read        906.0 MiB\n", "disk written     159.2 MiB\n",
        "rchar            ", "wchar            ", "notes            an example warning, kept with the trace\n"}) {
    EXPECT_NE(facts.find(line), std::string::npos) << line << "\n" << facts;
  }
  EXPECT_NE(
      text.find("Peaks\n"
                "metric          peak MiB    at s  stage                  what\n"
                "footprint          950.0  22.000  Quantization (Static)  the tree's memory, shared pages once (its "
                "cgroup's charge, else Σ PSS)\n"
                "rss                900.0  22.000  Quantization (Static)  RSS of the tree, sampled\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("kernel_process     700.0       -  -                      largest single process, the kernel's "
                      "peak, a lower bound\n"),
            std::string::npos)
      << text;
}

TEST(Report, ATraceCutShortSaysSoInEveryFormat) {
  // open_stage.dat ends without its EXIT record, as a trace does when qprof is SIGKILLed.
  const Document cut = trace_report(fixture("open_stage.dat"));
  const std::string why = trace::kNoEndRecord;
  const std::string text = render(cut, Format::text);
  EXPECT_NE(text.find("\ntrace incomplete  " + why + "\n"), std::string::npos) << text;
  EXPECT_NE(render(cut, Format::markdown).find("trace incomplete: " + why), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(render(cut, Format::json))["incomplete"], why);
  const Document whole = trace_report(fixture("quark.dat"));
  EXPECT_EQ(render(whole, Format::text).find("incomplete"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(render(whole, Format::json)).contains("incomplete"));
}

struct Calibrations {
  Trace minmax = fixture("minmax.dat"), percentile = fixture("percentile.dat"), layerwise = fixture("layerwise.dat"),
        minmse = fixture("minmse.dat");
  std::vector<CompareEntry> entries() const {
    return {{"minmax", {&minmax}}, {"percentile", {&percentile}}, {"layerwise", {&layerwise}}, {"minmse", {&minmse}}};
  }
};

TEST(Compare, TextMarksTheLowestAndShowsRatios) {
  const Calibrations c;
  const auto entries = c.entries();
  EXPECT_EQ(
      render(comparison_document(entries, compare(entries, Metric::rss, false)), Format::text),
      "label       peak RSS MiB   peak ratio  duration s   time ratio  peak kernel MiB   disk read MiB   disk write "
      "MiB\n"
      "minmax            2580.0         1.00      10.000*        1.00           2400.0*          300.0*            "
      "20.0*\n"
      "percentile        2724.0         1.06      12.000         1.20           2500.0           300.0*            "
      "22.0\n"
      "layerwise         2468.0*        0.96      15.000         1.50                -           900.0             "
      "20.0*\n"
      "minmse            2580.0         1.00      20.000         2.00                -               -            "
      "    -\n"
      "* lowest of its column\n"
      "ratios: to the first row (minmax)\n");
}

TEST(Compare, StagesAndBudgetsInMarkdown) {
  const Calibrations c;
  const auto entries = c.entries();
  const std::vector<RowBudget> budgets{
      {false, "ok"}, {true, "over --max-peak by 124.0 MiB (+4.8%)"}, {false, "ok"}, {false, "ok"}};
  EXPECT_EQ(render(comparison_document(entries, compare(entries, Metric::rss, true), budgets), Format::markdown),
            "| label      | peak RSS MiB | peak ratio | duration s | time ratio | peak in Calibration MiB | peak "
            "in Quantization MiB | peak kernel MiB | disk read MiB | disk write MiB | budget                           "
            "    |\n"
            "| :--------- | -----------: | ---------: | ---------: | ---------: | ----------------------: | -----"
            "------------------: | --------------: | ------------: | -------------: | "
            ":----------------------------------- |\n"
            "| minmax     |       2580.0 |       1.00 | **10.000** |       1.00 |                  2580.0 |      "
            "             2000.0 |      **2400.0** |     **300.0** |       **20.0** | ok                               "
            "    |\n"
            "| percentile |       2724.0 |       1.06 |     12.000 |       1.20 |                  2724.0 |      "
            "             2100.0 |          2500.0 |     **300.0** |           22.0 | over --max-peak by 124.0 MiB "
            "(+4.8%) |\n"
            "| layerwise  |   **2468.0** |       0.96 |     15.000 |       1.50 |              **2200.0** |      "
            "             2468.0 |               - |         900.0 |       **20.0** | ok                               "
            "    |\n"
            "| minmse     |       2580.0 |       1.00 |     20.000 |       2.00 |                  2580.0 |      "
            "         **1900.0** |               - |             - |              - | ok                               "
            "    |\n"
            "\n"
            "Bold: the lowest of its column.\n"
            "ratios: to the first row (minmax)\n");
}

TEST(Compare, CsvHasAFieldForEveryDecoration) {
  const Calibrations c;
  const std::vector<CompareEntry> entries{{"minmax", {&c.minmax}}, {"minmse", {&c.minmse}}};
  EXPECT_EQ(render(comparison_document(entries, compare(entries, Metric::rss, false)), Format::csv),
            "label,trace,runs,duration_s,duration_s_ratio,duration_s_lowest,peak_rss_bytes,peak_rss_bytes_ratio,"
            "peak_rss_bytes_lowest,peak_kernel_process_bytes,peak_kernel_process_bytes_ratio,peak_kernel_process_bytes_"
            "lowest,"
            "disk_read_bytes,disk_read_bytes_ratio,disk_read_bytes_lowest,disk_write_bytes,disk_write_bytes_ratio,"
            "disk_write_bytes_lowest\n"
            // Both peaks are 2580 MiB: neither is lower, neither is marked.
            "minmax," +
                c.minmax.source +
                ",1,10,1,true,2705326080,1,false,2516582400,1,false,314572800,1,false,20971520,1,false\n"
                "minmse," +
                c.minmse.source + ",1,20,2,false,2705326080,1,false,,,,,,,,,\n");
}

TEST(Compare, JsonParsesBackWithSpreadOfRepeatedRuns) {
  const Calibrations c;
  const std::vector<CompareEntry> entries{{"three runs", {&c.minmax, &c.percentile, &c.layerwise}},
                                          {"minmse", {&c.minmse}}};
  const std::string out = render(comparison_document(entries, compare(entries, Metric::rss, true)), Format::json);
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["metric"], "rss");
  ASSERT_EQ(j["comparison"].size(), 2u);
  const auto& row = j["comparison"][0];
  EXPECT_EQ(row["label"], "three runs");
  EXPECT_EQ(row["runs"], 3);
  EXPECT_EQ(row["trace"], c.minmax.source + ";" + c.percentile.source + ";" + c.layerwise.source);
  EXPECT_EQ(row["peak_rss_bytes"]["value"], 2580 * MiB);
  EXPECT_EQ(row["peak_rss_bytes"]["min"], 2468 * MiB);
  EXPECT_EQ(row["peak_rss_bytes"]["max"], 2724 * MiB);
  EXPECT_EQ(row["peak_rss_bytes"]["lowest"], false);  // the same as minmse's: no row is lower
  EXPECT_DOUBLE_EQ(row["duration_s"]["value"].get<double>(), 12.0);
  EXPECT_EQ(row["stage_peak_bytes:Quantization"]["max"], 2468 * MiB);
  const auto& second = j["comparison"][1];
  EXPECT_TRUE(second["disk_read_bytes"]["value"].is_null());
  EXPECT_NEAR(second["duration_s"]["ratio"].get<double>(), 20.0 / 12.0, 1e-6);
  // Text shows the spread after the median.
  const std::string text = render(comparison_document(entries, compare(entries, Metric::rss, false)), Format::text);
  EXPECT_NE(
      text.find("three runs     3  2580.0 (2468.0\u20132724.0)         1.00  12.000 (10.000\u201315.000)*        1.00"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("repeated runs: the median, then (min\u2013max)"), std::string::npos);
}

// Marks are read as printed: 10 KiB and 40 KiB both print "0.0" in MiB, so neither is marked;
// beside a 5 MiB row both print as the lowest and both are.
TEST(Compare, MarksOnlyWhereThePrintedValuesDiffer) {
  auto document = [](std::vector<double> kib) {
    Comparison c;
    c.columns = {{"peak_rss", "peak RSS", CompareColumn::Kind::bytes, Metric::rss, ""}};
    std::vector<CompareEntry> entries;
    const double lowest = *std::min_element(kib.begin(), kib.end());
    for (std::size_t i = 0; i < kib.size(); ++i) {
      entries.push_back({"run" + std::to_string(i + 1), {}});
      c.rows.push_back({{Spread{kib[i] * 1024, kib[i] * 1024, kib[i] * 1024}, kib[i] == lowest, kib[i] / kib[0]}});
    }
    return render(comparison_document(entries, c), Format::text, {Unit::MiB});
  };
  const std::string alike = document({40, 10});
  EXPECT_EQ(alike.find('*'), std::string::npos) << alike;
  const std::string apart = document({40, 10, 5120});
  EXPECT_NE(apart.find("run1            0.0*"), std::string::npos) << apart;
  EXPECT_NE(apart.find("run2            0.0*"), std::string::npos) << apart;
  EXPECT_NE(apart.find("run3            5.0 "), std::string::npos) << apart;
  EXPECT_NE(apart.find("* lowest of its column"), std::string::npos) << apart;
}

// A job's total is the sum of its ranks: no ratio to a rank, never "the lowest".
TEST(Compare, ASummedRowHasNoRatioNorMark) {
  const Calibrations c;
  std::vector<CompareEntry> entries{
      {"rank 0", {&c.minmax}}, {"rank 1", {&c.layerwise}}, {"job (2 ranks)", {&c.minmse}, true}};
  const Comparison cmp = compare(entries, Metric::rss, false);
  for (const CompareValue& v : cmp.rows[2]) {
    EXPECT_FALSE(v.ratio);
    EXPECT_FALSE(v.lowest);
  }
  // Its duration (20 s) is the longest, its RSS (2580) ties rank 0: the marks are the ranks'.
  const std::string text = render(comparison_document(entries, cmp), Format::text);
  EXPECT_NE(text.find("job (2 ranks)        2580.0            -      20.000            -"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 1               2468.0*        0.96"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(render(comparison_document(entries, cmp), Format::json));
  EXPECT_TRUE(j["comparison"][2]["peak_rss_bytes"]["ratio"].is_null());
  EXPECT_EQ(j["comparison"][2]["peak_rss_bytes"]["lowest"], false);
}

// A text table narrowed to a width: every line fits, the footprint and Σ RSS stay, and the
// columns left out are named with the way to see them; machine formats keep every column.
TEST(Compare, TextFitsTheWidthAndNamesWhatItLeftOut) {
  const Calibrations c;
  const Trace quark = fixture("quark.dat");
  std::vector<CompareEntry> entries{{"quark", {&quark}}, {"minmax", {&c.minmax}}, {"percentile", {&c.percentile}}};
  const Document doc = comparison_document(entries, compare(entries, Metric::rss, true));
  RenderOptions narrow;
  narrow.text_width = 100;
  narrow.wider = "--wide shows them";
  const std::string text = render(doc, Format::text, narrow);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(display_width(line), 100u) << line << "\n" << text;
  // --stages asked for the stage columns: kept before the duration.
  EXPECT_TRUE(text.starts_with("label       peak footprint MiB   peak RSS MiB   peak ratio  peak in Pre-process MiB"))
      << text;
  EXPECT_NE(text.find("left out to fit 100 columns: "), std::string::npos) << text;
  EXPECT_NE(text.find("--wide shows them"), std::string::npos) << text;
  const std::string wide = render(doc, Format::text);
  EXPECT_GT(wide.find('\n'), 100u) << wide;
  EXPECT_EQ(wide.find("left out"), std::string::npos);
  // Every column the wide table has is in the narrow table or named under it.
  for (const Column& col : doc.tables[0].columns) {
    if (!col.human) continue;
    EXPECT_NE(text.find(col.title), std::string::npos) << col.title << "\n" << text;
  }
  const std::string csv = render(doc, Format::csv, narrow);
  EXPECT_NE(csv.find("disk_write_bytes"), std::string::npos);
}

// A narrowed render wraps a table's notes too, at list commas where it can, losing no word.
TEST(Compare, NotesWrapToTheWidth) {
  Document doc;
  Table t;
  t.name = "t";
  t.columns = {Column::of("label", "label", Kind::text)};
  t.rows = {{Cell::string("a")}};
  const std::string note =
      "no largest workers for 23.5 GiB: the model does not rise with it (footprint 74.8 MiB × workers^-0.00, "
      "R² 0.336) [limit: the memtotal limit in force when the first run was recorded]";
  t.notes = {note};
  doc.tables.push_back(t);
  RenderOptions narrow;
  narrow.text_width = 100;
  const std::string text = render(doc, Format::text, narrow);
  std::istringstream lines(text);
  std::string joined;
  std::getline(lines, joined);  // the header
  std::getline(lines, joined);  // the row
  joined.clear();
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    EXPECT_LE(display_width(line), 100u) << line;
    if (count > 0) {
      EXPECT_TRUE(line.starts_with("  ")) << line;
      line = line.substr(2);
    }
    joined += (joined.empty() ? "" : " ") + line;
  }
  EXPECT_EQ(count, 2u) << text;
  EXPECT_EQ(joined, note);
  EXPECT_NE(render(doc, Format::text).find(note), std::string::npos) << "unwrapped at any width";
}

TEST(Peak, OneLinersAsMprofPrintsThem) {
  const Trace t = fixture("quark.dat");
  PeakLine l;
  l.file = "quark.dat";
  l.peak = find_peak(t, Metric::rss);
  PeakLine bad;
  bad.file = "gone.dat";
  bad.error = "gone.dat: cannot open";
  EXPECT_EQ(peak_lines({l, bad}, Unit::MiB, true), "quark.dat\t900.000 MiB\n");
  EXPECT_EQ(peak_lines({l}, Unit::MiB, false), "900.0 MiB\n");
  EXPECT_EQ(peak_lines({l}, Unit::GiB, false), "0.9 GiB\n");
  EXPECT_EQ(peak_lines({l}, Unit::B, false), "943718400 B\n");
  EXPECT_EQ(peak_lines({l}, Unit::MB, true), "quark.dat\t943.718 MB\n");
  l.children = {{7, 12 * MiB}};
  EXPECT_EQ(peak_lines({l}, Unit::MiB, true), "quark.dat\t900.000 MiB\n  Child 7\t\t\t12.000 MiB\n");
}

TEST(Peak, OfAStageAndWhyThereIsNone) {
  const Trace t = fixture("open_stage.dat");
  const PeakLine eval = peak_line(t, Metric::rss, "Eval");
  ASSERT_TRUE(eval.peak);
  EXPECT_EQ(eval.peak->bytes, 400 * MiB);
  EXPECT_EQ(eval.where, (std::vector<std::string>{"Eval", "Train"}));
  EXPECT_NEAR(*eval.relative_t, 0.7, 1e-6);
  EXPECT_EQ(peak_line(t, Metric::rss, "Load").peak->bytes, 150 * MiB);
  EXPECT_EQ(peak_line(t, Metric::rss, "Nope").error,
            t.source + " has no stage 'Nope' (stages: 'Load', 'Train', 'Eval')");
  EXPECT_EQ(peak_line(t, Metric::gpu).error, t.source + " has no gpu (it has: rss)");
  const Trace q = fixture("quark.dat");
  EXPECT_EQ(peak_line(q, Metric::kernel_process, "Calibration").error,
            "kernel_process has no samples over time, so it has no peak inside a stage");
  EXPECT_EQ(peak_line(q, Metric::pss, "Calibration").error, q.source + " has no pss sample inside stage 'Calibration'");
  const Trace c = trace::read_trace(std::string(QPROF_TEST_DATA) + "/mprof/children.dat");
  EXPECT_EQ(peak_line(c, Metric::rss, "", true).children.size(), 2u);
}

TEST(Peak, JsonParsesBack) {
  const Trace t = fixture("quark.dat");
  PeakLine l;
  l.file = "quark.dat";
  l.peak = find_peak(t, Metric::rss);
  l.relative_t = 22.0;
  l.where = {"Quantization (Static)"};
  PeakLine bad;
  bad.file = "gone.dat";
  bad.metric = Metric::pss;
  bad.error = "gone.dat has no pss";
  const auto one = nlohmann::json::parse(peak_json({l}, Unit::GiB, true));
  EXPECT_EQ(one["bytes"], 900 * MiB);
  EXPECT_DOUBLE_EQ(one["value"].get<double>(), 0.878906);
  EXPECT_EQ(one["unit"], "GiB");
  EXPECT_EQ(one["stage"], "Quantization (Static)");
  EXPECT_DOUBLE_EQ(one["relative_time_s"].get<double>(), 22.0);
  const auto all = nlohmann::json::parse(peak_json({l, bad}, Unit::MiB, false));
  ASSERT_TRUE(all.is_array());
  EXPECT_EQ(all[1]["error"], "gone.dat has no pss");
  EXPECT_EQ(all[1]["metric"], "pss");
  EXPECT_FALSE(all[1].contains("bytes"));
}

TEST(Budget, MessageSaysByHowMuchAndWhere) {
  const Trace t = fixture("quark.dat");
  EXPECT_EQ(budget_message(t, *check_budget(t, Metric::rss, 800 * MiB)),
            "peak RSS 900.0 MiB exceeds the budget of 800.0 MiB by 100.0 MiB (+12.5%), at 22 s, in stage "
            "'Quantization (Static)'");
  EXPECT_EQ(budget_message(t, *check_budget(t, Metric::rss, 1ull << 30)),
            "peak RSS 900.0 MiB is within the budget of 1.00 GiB");
  EXPECT_EQ(budget_message(t, *check_budget(t, Metric::kernel_process, 500 * MiB)),
            "peak kernel 700.0 MiB exceeds the budget of 500.0 MiB by 200.0 MiB (+40.0%)");
  EXPECT_EQ(
      budget_message(t, *check_budget(t, Metric::hwm_sum, 500 * MiB)),
      "peak VmHWM sum 1000.0 MiB exceeds the budget of 500.0 MiB by 500.0 MiB (+100.0%), at 35.5 s, outside any stage");
}

// A stage's CPU intervals start at its first reading, the run's at its start (CPU time 0): the run's
// split merged a 30 ms interval into a burst the stage's caught whole (83 % against 56 %). The
// run's peak is the highest measured, its stages' included.
TEST(Report, TheRunsCpuPeakIsNeverBelowAStages) {
  Trace t;
  t.meta.format_version = 1;
  t.meta.start = 100;
  for (const double at : {100.0, 100.06, 100.09, 100.15, 100.3}) t.mem.push_back({at, 10 * MiB});
  t.cpu = {{100.06, 0.0}, {100.09, 0.0}, {100.15, 0.05}, {100.3, 0.05}};
  trace::Stage burst;
  burst.name = "Burst";
  burst.t_start = 100.09;
  burst.t_end = 100.15;
  t.stages.push_back(burst);
  const auto j = nlohmann::json::parse(render(trace_report(t), Format::json));
  ASSERT_EQ(j["stages"].size(), 1u) << j.dump();
  ASSERT_TRUE(j["stages"][0]["cpu_peak_percent"].is_number()) << j.dump();
  EXPECT_NEAR(j["stages"][0]["cpu_peak_percent"].get<double>(), 83.0, 0.5);
  EXPECT_NEAR(j["cpu_peak_percent"].get<double>(), 83.0, 0.5) << "the run's own split: 55.6";
}

// The bottleneck table names a stage as the stage table does, "(never ended)" too, and gives no
// second growth: the stage table's delta is in the report's metric (a Σ RSS growth beside it read
// +50.3 MiB where the footprint's delta said -0.6, for a stage that ran to the exit).
TEST(Report, TheBottleneckTableNamesStagesAsTheStageTable) {
  Trace t;
  t.meta.format_version = 1;
  t.meta.start = 100;
  for (const double at : {100.0, 100.1, 100.2, 100.3}) t.mem.push_back({at, 10 * MiB});
  t.cpu = {{100.1, 0.01}, {100.2, 0.02}, {100.3, 0.03}};
  trace::Stage open;
  open.name = "Never";
  open.t_start = 100.1;
  open.t_end = 100.3;
  open.closed = false;
  t.stages.push_back(open);
  const std::string text = render(trace_report(t), Format::text);
  const std::string table = text.substr(text.find("Bottlenecks per stage"));
  EXPECT_NE(table.find("\nNever (never ended) "), std::string::npos) << table;
  EXPECT_EQ(table.find("growth"), std::string::npos) << table;
}

// A moment is said to the table's precision (a job peak "at 1 s" beside a Hosts row at 1.004 read as two
// moments); a duration in words.
TEST(Report, AMomentFactReadsAsTheTableRowItNames) {
  Document d;
  d.facts.push_back({Column::of("job_peak_at", "job peak at", Kind::moment), Cell::number(1.004)});
  d.facts.push_back({Column::of("duration", "duration", Kind::seconds), Cell::number(125.0)});
  Table t;
  t.title = "Hosts";
  t.columns.push_back(Column::of("peak_at", "at", Kind::moment));
  t.rows.push_back({Cell::number(1.004)});
  d.tables.push_back(t);
  const std::string text = render(d, Format::text);
  EXPECT_NE(text.find("job peak at  1.004 s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("duration     2 min 5 s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("1.004\n"), std::string::npos) << text;
  const auto json = nlohmann::json::parse(render(d, Format::json));
  EXPECT_DOUBLE_EQ(json["job_peak_at_s"].get<double>(), 1.004) << json.dump();
}

TEST(Text, WidthCountsCodePoints) {
  EXPECT_EQ(display_width("caf\xc3\xa9"), 4u);
  EXPECT_EQ(display_width("a\u2013b"), 3u);
}

}  // namespace
}  // namespace qprof::report
