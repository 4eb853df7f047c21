// SPDX-License-Identifier: Apache-2.0
// The examples of examples/, each run under the built qprof as a user would run it, with the
// figures their documentation promises checked against the traces: what each calibration method
// holds, what forked workers share (calibrate.py and forked_workers.py), the pivot table against
// `qprof peak`, the shell example's stages, and the PyTorch data loader's tree.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e_util.hpp"
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using analysis::find_peak;
using analysis::Metric;
using analysis::stage_peak;
using trace::DirSample;
using trace::Trace;

namespace {

namespace fs = std::filesystem;

const std::string kExamples = QPROF_TEST_EXAMPLES;
constexpr double kMiB = 1024.0 * 1024.0;

std::string example(const std::string& name) { return kExamples + "/" + name; }

// qprof run, bounded, of a Python example (Debian's python3: the one torch is installed for).
Result run_python(const std::string& out, const std::vector<std::string>& script_and_args,
                  const std::vector<std::string>& qprof_options = {}) {
  std::vector<std::string> argv{"prlimit", as_limit("1073741824"), qprof_bin(), "run", "-q", "-o", out};
  argv.insert(argv.end(), qprof_options.begin(), qprof_options.end());
  argv.push_back("--");
  argv.push_back(debian_python());
  argv.insert(argv.end(), script_and_args.begin(), script_and_args.end());
  return run(argv, "", 300);
}

double stage_peak_mib(const Trace& t, const std::string& stage) {
  const auto p = stage_peak(t, Metric::rss, stage);
  return p ? static_cast<double>(p->bytes) / kMiB : -1.0;
}

// What each method holds during Calibration beside the model, as examples/calibrate.py documents
// it (A = --activations): the run's peaks differ by what the methods hold (the interpreter's own
// memory, the same in each run, drops out), and each is the model, the method's share and the
// interpreter's 10-25 MiB. (Stage peaks would depend on when qprof reads a stderr marker.)
TEST(CalibrateExample, EachMethodHoldsWhatItsDocumentationSays) {
  const std::string dir = temp_dir();
  const double model = 32, a = 64;
  const std::vector<std::pair<std::string, double>> methods = {
      {"minmax", a}, {"percentile", a + a / 2}, {"layerwise_percentile", a / 4 + a / 8}, {"minmse", a + a / 2 + a}};
  std::vector<double> peaks;
  for (const auto& [method, holds] : methods) {
    const std::string out = dir + "/" + method + ".dat";
    const Result r =
        run_python(out, {example("calibrate.py"), "--method", method, "--model", "32", "--activations", "64"});
    ASSERT_EQ(r.status, 0) << method << ": " << r.err;
    const Trace t = trace::read_trace(out);
    const std::vector<std::string> want = {"Pre-process", "Calibration", "Quantization (Static)", "Post-process"};
    ASSERT_EQ(t.stages.size(), want.size()) << method;
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t.stages[i].name, want[i]) << method;
    const double peak = static_cast<double>(find_peak(t, Metric::rss)->bytes) / kMiB;
    EXPECT_GT(peak, model + holds) << method;
    EXPECT_LT(peak, model + holds + 25.0) << method;
    peaks.push_back(peak);
  }
  for (std::size_t i = 1; i < methods.size(); ++i) {
    EXPECT_NEAR(peaks[i] - peaks[0], methods[i].second - methods[0].second, 3.0)
        << methods[i].first << " against minmax: " << peaks[i] << " and " << peaks[0] << " MiB";
  }
  // The documented order: layerwise_percentile < minmax < percentile < minmse.
  EXPECT_LT(peaks[2], peaks[0]);
  EXPECT_LT(peaks[0], peaks[1]);
  EXPECT_LT(peaks[1], peaks[3]);
}

// Forked workers read the parent's model without copying it: Σ RSS counts it once per process,
// PSS once in all.
TEST(CalibrateExample, WorkersShareTheModelSoPssIsBelowTheSumOfRss) {
  const std::string out = temp_dir() + "/workers.dat";
  const double model = 96;
  const Result r = run_python(out,
                              {example("calibrate.py"), "--workers", "2", "--model", "96", "--activations", "16",
                               "--batches", "4", "--pause", "0.2"},
                              {"-M", "--metric", "all", "--pss-interval", "0.05"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  std::set<int> pids;
  for (const auto& c : t.children) pids.insert(c.pid);
  EXPECT_EQ(pids.size(), 2u) << "the two workers (-M records the members below the command)";
  const auto rss = find_peak(t, Metric::rss);
  const auto pss = find_peak(t, Metric::pss);
  ASSERT_TRUE(rss && pss);
  // Two workers each map the whole model: Σ RSS holds it three times, PSS once.
  EXPECT_GE(rss->bytes / kMiB, 3 * model) << "Σ RSS";
  EXPECT_GT((static_cast<double>(rss->bytes) - static_cast<double>(pss->bytes)) / kMiB, 2 * model * 0.9)
      << "Σ RSS " << rss->bytes / kMiB << " MiB, PSS " << pss->bytes / kMiB << " MiB";
}

// examples/forked_workers.py, the README's first run, scaled down: a parent holding 100 MiB and 3
// forked workers that read it and touch 20 MiB each. Σ RSS counts the model once per process; the
// footprint (the cgroup charge as root, else Σ PSS) about once: 100 + 3 × 20 MiB and the interpreters.
TEST(ForkedWorkersExample, TheFootprintCountsTheModelOnceAndSigmaRssOncePerProcess) {
  const std::string out = temp_dir() + "/forked.dat";
  const Result r = run_python(out, {example("forked_workers.py"), "100", "3", "20"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  const auto rss = find_peak(t, Metric::rss);
  const auto footprint = find_peak(t, Metric::footprint);
  ASSERT_TRUE(rss && footprint) << r.err;
  EXPECT_GE(rss->bytes / kMiB, 4 * 100 + 3 * 20) << "Σ RSS";
  EXPECT_GE(footprint->bytes / kMiB, 100 + 3 * 20 * 0.9) << "footprint";
  EXPECT_LE(footprint->bytes / kMiB, 100 + 3 * 20 + 60) << "footprint";
}

// --cache-dir: percentile spills every batch's histograms (A/2) into the directory and deletes them
// at the end of Calibration; --watch-dir sees the growth, and the YAML has it as Quark names it.
TEST(CalibrateExample, CacheDirGrowthIsWhatTheScriptWrote) {
  const std::string dir = temp_dir();
  const std::string cache = dir + "/cache", out = dir + "/cache.dat", yaml = dir + "/cache.yaml";
  const int batches = 4, activations = 32;
  const Result r =
      run_python(out,
                 {example("calibrate.py"), "--method", "percentile", "--activations", std::to_string(activations),
                  "--batches", std::to_string(batches), "--cache-dir", cache, "--pause", "0.4"},
                 {"--watch-dir", cache, "--watch-interval", "0.2", "--yaml", yaml});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.dirs.size(), 1u);
  Bytes start = 0, peak = 0, last = 0;
  for (const DirSample& s : t.dir_samples) {
    if (&s == &t.dir_samples.front()) start = s.apparent;
    peak = std::max(peak, s.apparent);
    last = s.apparent;
  }
  const double wrote = batches * activations / 2.0;  // MiB
  EXPECT_NEAR((static_cast<double>(peak) - static_cast<double>(start)) / kMiB, wrote, 0.05 * wrote);
  EXPECT_EQ(last, start) << "the files are deleted at the end of Calibration";
  const std::string y = read_file(yaml);
  EXPECT_NE(y.find("peak_cache_dir_disk_usage_mb: "), std::string::npos) << y;
}

// The C example: each stage ends with a synchronous checkpoint, which holds the memory at that
// line (the table, then the table and its index), whatever the program frees next.
TEST(CExample, SynchronousCheckpointsHoldEachStagesMemory) {
  const std::string out = temp_dir() + "/table.dat";
  const Result r =
      run({"prlimit", as_limit("1073741824"), qprof_bin(), "run", "-q", "-o", out, "--", QPROF_TEST_EXAMPLE_C, "96"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, std::to_string(96 * 256) + " pages read\n");
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.stages.size(), 3u);
  std::map<std::string, double> at;
  for (const auto& m : t.markers) at[m.label] = m.at.rss ? static_cast<double>(*m.at.rss) / kMiB : -1;
  EXPECT_GE(at["Build End"], 96.0);
  EXPECT_LT(at["Build End"], 96.0 + 4.0);
  EXPECT_GE(at["Query End"], 96.0 + 24.0);
  EXPECT_LT(at["Query End"], 96.0 + 24.0 + 4.0);
  EXPECT_LT(at["Release End"], 4.0);
}

// sweep_calibration.sh: over workers, the footprint grows by what each worker holds on its own
// (its batch's 32 MiB of activations and what the forked interpreter writes, a few MiB: the model
// is shared and counted once); over the activations of one process, by 1 MiB a MiB (minmax holds
// one batch's activations beside the model). Each model is solved for the limit in force.
TEST(SweepCalibrationExample, TheModelsGrowByWhatEachWorkerAndEachBatchHolds) {
  const std::string dir = temp_dir() + "/sweep";
  const Result r = run({"prlimit", as_limit("4294967296"), "env", "QPROF=" + qprof_bin(), "PYTHON=" + debian_python(),
                        "WORKERS=1,2,4", "ACTIVATIONS=16,32,64", "sh", example("sweep_calibration.sh"), dir},
                       "", 600);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Model of each figure against workers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Model of each figure against activations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("workers \u2264 "), std::string::npos) << "solved for the limit in force:\n" << r.out;
  EXPECT_TRUE(fs::exists(dir + "/workers.png"));
  EXPECT_TRUE(fs::exists(dir + "/activations.png"));
  const auto slope_mib = [](const std::string& parameter, const std::vector<std::string>& traces) {
    std::vector<std::string> args{"compare", "--sweep", parameter, "--format", "json"};
    args.insert(args.end(), traces.begin(), traces.end());
    const Result c = qprof(args);
    EXPECT_EQ(c.status, 0) << c.err;
    const auto j = nlohmann::json::parse(c.out);
    for (const auto& row : j["sweep_model"]) {
      if (row["figure"] == "footprint") return row["slope"].get<double>() / kMiB;
    }
    ADD_FAILURE() << "no footprint model in\n" << c.out;
    return 0.0;
  };
  const double per_worker = slope_mib(
      "workers", {dir + "/workers/workers=1.dat", dir + "/workers/workers=2.dat", dir + "/workers/workers=4.dat"});
  EXPECT_GE(per_worker, 32.0 * 0.97);
  EXPECT_LE(per_worker, 32.0 + 8.0);
  const double per_mib =
      slope_mib("activations", {dir + "/activations/activations=16.dat", dir + "/activations/activations=32.dat",
                                dir + "/activations/activations=64.dat"});
  EXPECT_NEAR(per_mib, 1.0, 0.05);
}

// compare_methods.sh: the grid's cells are `qprof peak` of each trace, and its answer the lowest.
TEST(CompareMethodsExample, PivotCellsAreThePeaksOfEachTrace) {
  const std::string dir = temp_dir() + "/methods";
  const std::string qprof_dir = fs::path(qprof_bin()).parent_path();
  const Result r = run({"env", "QPROF=" + qprof_bin(), "PYTHON=" + debian_python(), "MODELS=16 32", "sh",
                        example("compare_methods.sh"), dir},
                       "", 600);
  ASSERT_EQ(r.status, 0) << r.err;
  // The grid, read back as CSV from the same traces.
  std::vector<std::string> files, labels;
  for (const std::string model : {"16", "32"}) {
    for (const std::string method : {"minmax", "percentile", "layerwise_percentile", "minmse"}) {
      files.push_back(dir + "/" + model + "-" + method + ".dat");
      labels.push_back(model + "MiB/" + method);
    }
  }
  std::string label_list;
  for (const std::string& l : labels) label_list += (label_list.empty() ? "" : ",") + l;
  std::vector<std::string> args{"compare", "--pivot", "model,method", "--format", "csv", "--label", label_list};
  args.insert(args.end(), files.begin(), files.end());
  const Result csv = qprof(args);
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')),
            "model,peak_bytes:minmax,peak_bytes:percentile,peak_bytes:layerwise_percentile,peak_bytes:minmse,lowest");
  // Each cell, at its row (model) and column (method), is that trace's `qprof peak`.
  std::map<std::string, std::vector<std::string>> grid;  // model row → its fields
  for (std::size_t p = csv.out.find('\n'); p != std::string::npos && p + 1 < csv.out.size();
       p = csv.out.find('\n', p + 1)) {
    std::stringstream line(csv.out.substr(p + 1, csv.out.find('\n', p + 1) - p - 1));
    std::vector<std::string> fields;
    for (std::string f; std::getline(line, f, ',');) fields.push_back(f);
    if (!fields.empty()) grid[fields.front()] = fields;
  }
  const std::vector<std::string> methods{"minmax", "percentile", "layerwise_percentile", "minmse"};
  for (std::size_t i = 0; i < files.size(); ++i) {
    // The grid's default figure is the footprint (the traces recorded one); `qprof peak FILE`
    // alone is mprof's Σ RSS, so it is asked for the same metric.
    const Result peak = qprof({"peak", "--metric", "footprint", "--unit", "B", files[i]});
    ASSERT_EQ(peak.status, 0) << peak.err;
    const std::string bytes = peak.out.substr(peak.out.find('\t') + 1, peak.out.find(' ') - peak.out.find('\t') - 1);
    const std::string model = labels[i].substr(0, labels[i].find('/'));
    const std::size_t column = 1 + i % methods.size();
    ASSERT_TRUE(grid.count(model)) << model << " has no row in\n" << csv.out;
    ASSERT_GT(grid[model].size(), column) << csv.out;
    EXPECT_EQ(grid[model][column], bytes) << labels[i] << " in\n" << csv.out;
  }
  EXPECT_NE(csv.out.find("16MiB,"), std::string::npos);
  EXPECT_NE(r.out.find("lowest method"), std::string::npos) << r.out;
  // Each row's lowest is layerwise_percentile, as calibrate.py documents for these sizes.
  std::size_t rows = 0;
  for (std::size_t p = csv.out.find('\n'); p != std::string::npos && p + 1 < csv.out.size();
       p = csv.out.find('\n', p + 1)) {
    const std::string line = csv.out.substr(p + 1, csv.out.find('\n', p + 1) - p - 1);
    if (line.empty()) continue;
    EXPECT_TRUE(line.ends_with(",layerwise_percentile")) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 2u);
  EXPECT_GT(fs::file_size(dir + "/methods.png"), 1000u);
  EXPECT_GT(fs::file_size(dir + "/methods-facet.png"), 1000u);
  EXPECT_NE(r.out.find("peak in Calibration"), std::string::npos) << r.out;
}

// The shell example: dd holds one 40 MiB block during "Copy", the other stages far less.
TEST(ShellExample, StagesOfAShellJob) {
  const std::string out = temp_dir() + "/shell.dat";
  const Result r =
      run({"prlimit", as_limit("1073741824"), qprof_bin(), "run", "-q", "-o", out, "--", "sh", example("stages.sh")});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.stages.size(), 3u);
  EXPECT_EQ(t.stages[0].name, "Generate");
  EXPECT_EQ(t.stages[1].name, "Shuffle");
  EXPECT_EQ(t.stages[2].name, "Copy");
  const double copy = stage_peak_mib(t, "Copy");
  EXPECT_GE(copy, 40.0);
  EXPECT_LT(copy, 40.0 + 8.0);
  EXPECT_LT(stage_peak_mib(t, "Generate"), 10.0);
}

// The PyTorch example: the data loader's workers are in the tree, and the pages they share with
// the trainer make PSS far lower than Σ RSS.
TEST(TorchDataLoaderExample, WorkersAreInTheTreeAndPssIsBelowTheSumOfRss) {
  if (run({debian_python(), "-c", "import torch"}).status != 0) {
    GTEST_SKIP() << "torch is not installed for " << debian_python()
                 << " (Debian python3-torch, scripts/install-deps --tests)";
  }
  const std::string out = temp_dir() + "/torch.dat";
  const Result r = run_python(out, {example("torch_dataloader.py"), "--epochs", "2"}, {"-M", "--metric", "all"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.stages.size(), 2u);
  EXPECT_EQ(t.stages[0].name, "Epoch 1");
  EXPECT_EQ(t.stages[1].name, "Epoch 2");
  std::set<int> pids;
  for (const auto& c : t.children) pids.insert(c.pid);
  // Two workers per epoch below the trainer (the loader forks them anew each epoch).
  EXPECT_GE(pids.size(), 4u);
  const auto rss = find_peak(t, Metric::rss);
  const auto pss = find_peak(t, Metric::pss);
  ASSERT_TRUE(rss && pss);
  EXPECT_LT(static_cast<double>(pss->bytes), 0.8 * static_cast<double>(rss->bytes))
      << "PSS " << pss->bytes / kMiB << " MiB, Σ RSS " << rss->bytes / kMiB << " MiB";
  EXPECT_NE(r.err.find("epoch 2: mean loss"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qprof::test
