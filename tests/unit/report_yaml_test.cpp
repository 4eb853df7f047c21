// SPDX-License-Identifier: Apache-2.0
// The Quark-layout YAML, parsed back with yaml-cpp; atomic rewrites; the streaming rewriter.
#include "qprof/report/quark_yaml.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <set>
#include <fstream>
#include <thread>

#include "qprof/trace/completeness.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::report {
using trace::Trace;

namespace {

namespace fs = std::filesystem;

Trace fixture(const std::string& name) { return trace::read_trace(std::string(QPROF_TEST_DATA) + "/report/" + name); }

std::string temp_dir() {
  static const std::string dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "qprof-yaml-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
    static std::string keep = tmpl;
    std::atexit([] { fs::remove_all(keep); });
    return tmpl;
  }();
  return dir;
}

void spit(const std::string& path, const std::string& text, std::ios::openmode mode = std::ios::trunc) {
  std::ofstream out(path, std::ios::binary | mode);
  out << text;
}

std::vector<std::string> keys(const YAML::Node& map) {
  std::vector<std::string> out;
  for (const auto& kv : map) out.push_back(kv.first.as<std::string>());
  return out;
}

TEST(QuarkYaml, HasQuarksKeysInQuarksOrder) {
  const YAML::Node y = YAML::Load(quark_yaml(fixture("quark.dat")));
  EXPECT_EQ(keys(y), (std::vector<std::string>{"memory_usage", "total_quantization_time_seconds", "peak_memory_mb",
                                               "tree_peak_memory_mb", "peak_gpu_memory_mb", "gpu_peak_memory_mb",
                                               "total_disk_read_mb", "total_disk_write_mb", "missing", "qprof"}));
  ASSERT_EQ(y["memory_usage"].size(), 9u);
  for (const auto& rec : y["memory_usage"]) {
    EXPECT_EQ(keys(rec), (std::vector<std::string>{"step", "timestamp", "relative_time_secs", "cpu_memory_mb",
                                                   "gpu_memory_mb", "disk_read_mb", "disk_write_mb"}));
  }
}

// The recorded Quark layouts (its docs' sample and its code's layout) and qprof's YAML, read by
// the same reader: qprof has every key Quark writes (but the cache directory's, which it does
// not measure), and beyond them only tree_peak_memory_mb, missing and qprof.
TEST(QuarkYaml, KeysMatchRecordedQuarkFilesKeyByKey) {
  std::set<std::string> quark_top, quark_record;
  for (const char* f : {"quark_profile.docs.yaml", "quark_profile.code.yaml"}) {
    const YAML::Node q = YAML::LoadFile(std::string(QPROF_TEST_DATA) + "/quark/" + f);
    ASSERT_TRUE(q.IsMap()) << f;
    for (const std::string& k : keys(q)) quark_top.insert(k);
    ASSERT_GT(q["memory_usage"].size(), 0u) << f;
    for (const auto& rec : q["memory_usage"]) {
      for (const std::string& k : keys(rec)) quark_record.insert(k);
    }
  }
  ASSERT_TRUE(quark_top.count("peak_gpu_memory_mb") && quark_top.count("gpu_peak_memory_mb"));
  const YAML::Node y = YAML::Load(quark_yaml(fixture("quark.dat")));
  const std::vector<std::string> ours = keys(y);
  const std::set<std::string> our_top(ours.begin(), ours.end());
  std::set<std::string> only_quark, only_ours;
  std::set_difference(quark_top.begin(), quark_top.end(), our_top.begin(), our_top.end(),
                      std::inserter(only_quark, only_quark.end()));
  std::set_difference(our_top.begin(), our_top.end(), quark_top.begin(), quark_top.end(),
                      std::inserter(only_ours, only_ours.end()));
  EXPECT_EQ(only_quark, (std::set<std::string>{"peak_cache_dir_disk_usage_mb"}));
  EXPECT_EQ(only_ours, (std::set<std::string>{"missing", "qprof", "tree_peak_memory_mb"}));
  for (const auto& rec : y["memory_usage"]) {
    const std::vector<std::string> k = keys(rec);
    EXPECT_EQ(std::set<std::string>(k.begin(), k.end()), quark_record);
  }
  // Every summary value is a number, as in Quark's files.
  for (const char* k : {"total_quantization_time_seconds", "peak_memory_mb", "tree_peak_memory_mb",
                        "peak_gpu_memory_mb", "gpu_peak_memory_mb", "total_disk_read_mb", "total_disk_write_mb"}) {
    EXPECT_NO_THROW(y[k].as<double>()) << k;
  }
  // The definitions block says what each key means under qprof.
  const std::string text = quark_yaml(fixture("quark.dat"));
  EXPECT_NE(text.find("# peak_memory_mb: kernel high-water mark (ru_maxrss) of the largest single process"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# tree_peak_memory_mb:"), std::string::npos);
}

TEST(QuarkYaml, RecordsAreTheSamplesAtStartMarkersAndEnd) {
  const YAML::Node y = YAML::Load(quark_yaml(fixture("quark.dat")));
  const YAML::Node r = y["memory_usage"];
  struct Expect {
    const char* step;
    double rel, cpu, gpu, read, write;
  };
  const Expect expected[] = {
      {"Start", 0.0, 128.5, 0.0, 0.0, 0.0},
      {"Pre-process Start", 1.2, 256.0, 0.0, 45.25, 0.5},
      {"Pre-process End", 3.5, 512.5, 0.0, 320.75, 1.0},
      {"Calibration Start", 4.0, 515.0, 1024.0, 320.75, 1.0},
      {"Calibration End", 20.5, 520.0, 2048.5, 890.5, 2.75},
      {"Quantization (Static) Start", 21.0, 768.0, 2050.0, 890.5, 2.75},
      {"Checkpoint saved", 30.0, 700.0, 2050.0, 890.5, 2.75},
      {"Quantization (Static) End", 35.0, 640.0, 1536.0, 905.25, 158.5},
      {"End", 35.5, 635.0, 1530.0, 906.0, 159.25},
  };
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    const Expect& e = expected[i];
    EXPECT_EQ(r[i]["step"].as<std::string>(), e.step);
    EXPECT_DOUBLE_EQ(r[i]["timestamp"].as<double>(), 1709395200.0 + e.rel) << e.step;
    EXPECT_DOUBLE_EQ(r[i]["relative_time_secs"].as<double>(), e.rel) << e.step;
    EXPECT_DOUBLE_EQ(r[i]["cpu_memory_mb"].as<double>(), e.cpu) << e.step;
    EXPECT_DOUBLE_EQ(r[i]["gpu_memory_mb"].as<double>(), e.gpu) << e.step;
    EXPECT_DOUBLE_EQ(r[i]["disk_read_mb"].as<double>(), e.read) << e.step;
    EXPECT_DOUBLE_EQ(r[i]["disk_write_mb"].as<double>(), e.write) << e.step;
    // Floats stay floats for every reader: "0.0", never "0".
    EXPECT_NE(r[i]["gpu_memory_mb"].Scalar().find('.'), std::string::npos);
  }
}

TEST(QuarkYaml, SummaryAndEverythingElse) {
  const YAML::Node y = YAML::Load(quark_yaml(fixture("quark.dat")));
  EXPECT_DOUBLE_EQ(y["total_quantization_time_seconds"].as<double>(), 35.6);
  // Quark's meaning: the kernel's high-water mark of the (largest) single process; the tree's
  // sampled Σ RSS beside it.
  EXPECT_DOUBLE_EQ(y["peak_memory_mb"].as<double>(), 700.0);
  EXPECT_DOUBLE_EQ(y["tree_peak_memory_mb"].as<double>(), 900.0);
  EXPECT_DOUBLE_EQ(y["peak_gpu_memory_mb"].as<double>(), 2050.0);
  EXPECT_DOUBLE_EQ(y["gpu_peak_memory_mb"].as<double>(), 2050.0);
  EXPECT_DOUBLE_EQ(y["total_disk_read_mb"].as<double>(), 906.0);
  EXPECT_DOUBLE_EQ(y["total_disk_write_mb"].as<double>(), 159.25);
  EXPECT_EQ(y["missing"].size(), 0u);
  const YAML::Node q = y["qprof"];
  EXPECT_EQ(q["command"].as<std::string>(), "python3 quantize.py --calib-method minmax");
  EXPECT_EQ(q["host"].as<std::string>(), "lab-7");
  EXPECT_DOUBLE_EQ(q["interval_secs"].as<double>(), 0.5);
  EXPECT_EQ(q["samples"].as<int>(), 16);
  EXPECT_EQ(q["memory_unit"].as<std::string>(), "MiB");
  EXPECT_FALSE(q["in_progress"].as<bool>());
  EXPECT_EQ(q["exit"]["status"].as<int>(), 0);
  EXPECT_DOUBLE_EQ(q["peaks"]["rss"]["mb"].as<double>(), 900.0);
  EXPECT_EQ(q["peaks"]["rss"]["stage"].as<std::string>(), "Quantization (Static)");
  EXPECT_FALSE(q["peaks"]["rss"]["kernel_high_water_mark"].as<bool>());
  EXPECT_DOUBLE_EQ(q["peaks"]["kernel_process"]["mb"].as<double>(), 700.0);
  EXPECT_TRUE(q["peaks"]["kernel_process"]["kernel_high_water_mark"].as<bool>());
  EXPECT_FALSE(q["peaks"]["kernel_process"]["relative_time_secs"]);
  EXPECT_DOUBLE_EQ(q["peaks"]["cgroup"]["mb"].as<double>(), 950.0);
  EXPECT_TRUE(q["peaks"]["hwm_sum"]["stage"].IsNull());  // at 35.5 s, after the last stage
  ASSERT_EQ(q["stages"].size(), 3u);
  EXPECT_EQ(q["stages"][1]["name"].as<std::string>(), "Calibration");
  EXPECT_DOUBLE_EQ(q["stages"][1]["duration_secs"].as<double>(), 16.5);
  EXPECT_DOUBLE_EQ(q["stages"][1]["peak_memory_mb"].as<double>(), 700.0);
  EXPECT_DOUBLE_EQ(q["stages"][2]["delta_memory_mb"].as<double>(), -128.0);
  EXPECT_DOUBLE_EQ(q["checkpoints"][8]["pss_mb"].as<double>(), 850.0);
  EXPECT_DOUBLE_EQ(q["checkpoints"][8]["cpu_seconds"].as<double>(), 30.25);
  EXPECT_EQ(q["notes"][0].as<std::string>(), "an example warning, kept with the trace");
}

TEST(QuarkYaml, SeriesTheTraceLacksAreZeroAndListedAsMissing) {
  const YAML::Node y = YAML::Load(quark_yaml(fixture("open_stage.dat")));
  std::vector<std::string> missing;
  for (const auto& m : y["missing"]) missing.push_back(m.as<std::string>());
  EXPECT_EQ(missing,
            (std::vector<std::string>{"peak_memory_mb", "gpu_memory_mb", "peak_gpu_memory_mb", "gpu_peak_memory_mb",
                                      "disk_read_mb", "disk_write_mb", "total_disk_read_mb", "total_disk_write_mb"}));
  for (const auto& rec : y["memory_usage"]) EXPECT_EQ(rec["gpu_memory_mb"].Scalar(), "0.0");
  EXPECT_EQ(y["gpu_peak_memory_mb"].Scalar(), "0.0");
  EXPECT_DOUBLE_EQ(y["total_quantization_time_seconds"].as<double>(), 0.8);
  const YAML::Node q = y["qprof"];
  EXPECT_FALSE(q["exit"]);  // the trace ends without an EXIT line
  EXPECT_FALSE(q["checkpoints"]);
  EXPECT_FALSE(q["stages"][1]["closed"].as<bool>());
}

TEST(QuarkYaml, InProgressHasNoEndRecordYet) {
  const YAML::Node y = YAML::Load(quark_yaml(fixture("open_stage.dat"), {.in_progress = true}));
  EXPECT_EQ(y["memory_usage"][y["memory_usage"].size() - 1]["step"].as<std::string>(), "Eval End");
  EXPECT_TRUE(y["qprof"]["in_progress"].as<bool>());
}

TEST(QuarkYaml, ATraceCutShortIsInProgressWithoutAMadeUpEnd) {
  // open_stage.dat ends without its EXIT record (qprof SIGKILLed): its last record is its last
  // marker, not an End made of its last sample, and the YAML says why.
  const YAML::Node y = YAML::Load(quark_yaml(fixture("open_stage.dat")));
  EXPECT_EQ(y["memory_usage"][y["memory_usage"].size() - 1]["step"].as<std::string>(), "Eval End");
  EXPECT_TRUE(y["qprof"]["in_progress"].as<bool>());
  EXPECT_EQ(y["qprof"]["incomplete"].as<std::string>(), trace::kNoEndRecord);
  // A whole trace: finished, its End record made of its last sample.
  const YAML::Node whole = YAML::Load(quark_yaml(fixture("quark.dat")));
  EXPECT_EQ(whole["memory_usage"][whole["memory_usage"].size() - 1]["step"].as<std::string>(), "End");
  EXPECT_FALSE(whole["qprof"]["in_progress"].as<bool>());
  EXPECT_FALSE(whole["qprof"]["incomplete"]);
}

TEST(QuarkYaml, LabelsAreQuotedAndEscaped) {
  const std::string label = "Tricky: \"quoted\" # not a comment, true, 12, caf\xc3\xa9\ttab";
  const Trace t =
      trace::read_trace_text("MEM 1.0 1.0\nMARK 1.5 " + trace::escape_text(label) + "\nMEM 2.0 2.0\n", "t.dat");
  const YAML::Node y = YAML::Load(quark_yaml(t));
  EXPECT_EQ(y["memory_usage"][1]["step"].as<std::string>(), label);
  // An mprof trace (no header): its time starts at its first sample.
  EXPECT_DOUBLE_EQ(y["memory_usage"][1]["relative_time_secs"].as<double>(), 0.5);
  EXPECT_EQ(y["qprof"]["trace_format"].as<int>(), 0);
}

// Waits (a loaded machine is slow) until the stream has written `n` times.
bool wait_for_rewrites(const QuarkYamlStream& s, std::size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (s.rewrites() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return s.rewrites() >= n;
}

TEST(QuarkYamlStream, RewritesAtEveryCheckpointFromTheTrace) {
  const std::string trace = temp_dir() + "/stream.dat", yaml = temp_dir() + "/stream.yaml";
  spit(trace,
       "QPROF 1 version=0.1.0 interval=0.010000 host=h root_pid=1 start=100.000000 metric=rss\n"
       "MEM 10.000000 100.0000\nMEM 20.000000 100.5000\nMARK 100.500000 Load Start\n");
  QuarkYamlStream stream(trace, yaml);
  stream.checkpoint();
  ASSERT_TRUE(wait_for_rewrites(stream, 1));
  YAML::Node y = YAML::LoadFile(yaml);
  EXPECT_TRUE(y["qprof"]["in_progress"].as<bool>());
  ASSERT_EQ(y["memory_usage"].size(), 2u);
  EXPECT_EQ(y["memory_usage"][1]["step"].as<std::string>(), "Load Start");
  EXPECT_EQ(y["qprof"]["stages"][0]["closed"].as<bool>(), false);

  // A half-written last line (the sampler mid-flush) is skipped, not an error.
  spit(trace, "MEM 60.000000 101.0000\nMARK 101.000000 Load End\nMEM 70.0", std::ios::app);
  stream.checkpoint();
  stream.finish();
  EXPECT_EQ(stream.rewrites(), 2u);
  EXPECT_TRUE(stream.errors().empty());
  y = YAML::LoadFile(yaml);
  ASSERT_EQ(y["memory_usage"].size(), 3u);
  EXPECT_DOUBLE_EQ(y["memory_usage"][2]["cpu_memory_mb"].as<double>(), 60.0);
  EXPECT_TRUE(y["qprof"]["stages"][0]["closed"].as<bool>());
}

TEST(QuarkYamlStream, SaysWhyItCouldNotWrite) {
  QuarkYamlStream stream(temp_dir() + "/missing.dat", temp_dir() + "/never.yaml");
  stream.checkpoint();
  stream.checkpoint();
  stream.finish();
  EXPECT_EQ(stream.rewrites(), 0u);
  ASSERT_EQ(stream.errors().size(), 1u);  // each reason once
  EXPECT_NE(stream.errors()[0].find("missing.dat"), std::string::npos) << stream.errors()[0];
  EXPECT_FALSE(fs::exists(temp_dir() + "/never.yaml"));
}

}  // namespace
}  // namespace qprof::report
