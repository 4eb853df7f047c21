// SPDX-License-Identifier: Apache-2.0
// The README's recipes (examples/ci/) run as the scripts they are: the budget gate as a shell
// step and as the GitHub Actions step (taken out of the workflow by PyYAML), the Slurm batch
// script under a stand-in srun (this machine has no Slurm), the CSV one-liner; and the README or
// a page of docs/ shows each file as it is, so that a recipe cannot rot.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "e2e_util.hpp"
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using analysis::find_peak;
using analysis::Metric;
using trace::Trace;

namespace {

namespace fs = std::filesystem;

const std::string kExamples = QPROF_TEST_EXAMPLES;

// A working directory as a user's checkout has it: examples/ beside the files, qprof and
// Debian's python3 first on PATH.
struct Checkout {
  std::string dir;
  std::string path;
  Checkout() {
    dir = temp_dir() + "/checkout";
    fs::create_directories(dir + "/bin");
    fs::create_directory_symlink(kExamples, dir + "/examples");
    fs::create_symlink(qprof_bin(), dir + "/bin/qprof");
    fs::create_symlink(debian_python(), dir + "/bin/python3");
    path = dir + "/bin:/usr/bin:/bin";
  }
  Result sh(const std::string& shell, const std::string& script, const std::vector<std::string>& env = {}) const {
    std::vector<std::string> argv{"prlimit", as_limit("4294967296"), "env", "PATH=" + path};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {shell, "-c", "cd \"$1\" && " + script, "recipe", dir});
    return run(argv, "", 600);
  }
};

std::string file_text(const std::string& path) { return read_file(path); }

double peak_mib(const std::string& trace) {
  return static_cast<double>(find_peak(trace::read_trace(trace), Metric::rss)->bytes) / (1024.0 * 1024.0);
}

TEST(Recipes, BudgetGateAsAShellStep) {
  const Checkout c;
  const std::string gate = "sh examples/ci/budget_gate.sh ";
  const std::string job = " python3 examples/calibrate.py --method minmax";
  // main's trace of a smaller model: the pull request's peak grows by far more than 5 %.
  ASSERT_EQ(c.sh("sh", "qprof run -q -o small.dat -- python3 examples/calibrate.py --model 16").status, 0);
  const Result grown = c.sh("sh", gate + "small.dat" + job);
  EXPECT_EQ(grown.status, 3) << grown.err;
  EXPECT_NE(joined(grown.err).find("memory budget exceeded"), std::string::npos) << grown.err;
  // main's trace of the same job: within 5 %.
  ASSERT_EQ(c.sh("sh", "cp pr.dat same.dat").status, 0);
  const Result same = c.sh("sh", gate + "same.dat" + job);
  EXPECT_EQ(same.status, 0) << same.err;
  // A fixed budget below the job's peak (about 140 MiB).
  const Result over = c.sh("sh", gate + "same.dat" + job, {"MEMORY_BUDGET=100MiB"});
  EXPECT_EQ(over.status, 3) << over.err;
  EXPECT_NE(joined(over.err).find("exceeds the budget of 100.0 MiB"), std::string::npos) << over.err;
}

TEST(Recipes, BudgetGateAsAGitHubActionsStep) {
  const Checkout c;
  // The step's own text, out of the workflow file.
  const Result step = run({debian_python(), "-c",
                           "import sys, yaml\n"
                           "flow = yaml.safe_load(open(sys.argv[1]))\n"
                           "steps = flow['jobs']['memory-budget']['steps']\n"
                           "print(next(s['run'] for s in steps if s.get('name') == 'Memory budget'), end='')\n",
                           kExamples + "/ci/github_actions.yml"});
  ASSERT_EQ(step.status, 0) << step.err;
  ASSERT_NE(step.out.find("qprof run --max-peak"), std::string::npos) << step.out;
  // GitHub runs a step as a file, with `bash -e {0}`. The first run of main has no baseline.
  std::ofstream(c.dir + "/step.sh") << step.out;
  const Result main_run = c.sh("bash", "bash -e step.sh");
  ASSERT_EQ(main_run.status, 0) << main_run.err;
  ASSERT_TRUE(fs::exists(c.dir + "/pr.dat"));
  // A pull request against main's artifact: the same job passes ...
  fs::create_directories(c.dir + "/baseline");
  fs::copy_file(c.dir + "/pr.dat", c.dir + "/baseline/pr.dat");
  const Result same = c.sh("bash", "bash -e step.sh");
  EXPECT_EQ(same.status, 0) << same.err;
  // ... and one whose main was smaller fails the step.
  ASSERT_EQ(c.sh("sh", "qprof run -q -o baseline/pr.dat -- python3 examples/calibrate.py --model 16").status, 0);
  const Result grown = c.sh("bash", "bash -e step.sh");
  EXPECT_EQ(grown.status, 3) << grown.err;
}

TEST(Recipes, SlurmBatchScriptNamesOneTracePerRank) {
  const Checkout c;
  // srun as Slurm runs a step of 2 nodes × 2 tasks: the variables it sets, the tasks at once.
  std::ofstream(c.dir + "/bin/srun")
      << "#!/bin/sh\n"
         "# A stand-in for Slurm's srun: 4 tasks on 2 nodes, at once.\n"
         "for rank in 0 1 2 3; do\n"
         "  SLURM_PROCID=$rank SLURM_LOCALID=$((rank % 2)) SLURM_NODEID=$((rank / 2)) \\\n"
         "  SLURM_NTASKS=4 QPROF_HOSTNAME=node$((rank / 2)) \"$@\" &\n"
         "done\n"
         "status=0\n"
         "for rank in 0 1 2 3; do wait %$((rank + 1)) || status=$?; done\n"
         "exit $status\n";
  fs::permissions(c.dir + "/bin/srun", fs::perms::owner_all);
  const Result r = c.sh("bash", "bash examples/ci/slurm_job.sbatch", {"SLURM_JOB_ID=4243"});
  ASSERT_EQ(r.status, 0) << r.err;
  double sum_of_peaks = 0, highest = 0;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string trace = c.dir + "/mem.4243.node" + std::to_string(rank / 2) + "." + std::to_string(rank) + ".dat";
    ASSERT_TRUE(fs::exists(trace)) << trace << "\n" << r.err;
    const Trace t = trace::read_trace(trace);
    EXPECT_EQ(t.meta.job.rank, rank);
    EXPECT_EQ(t.meta.job.launcher, "slurm");
    sum_of_peaks += peak_mib(trace);
    highest = std::max(highest, peak_mib(trace));
  }
  // `peak --sum`: one line, the job's peak in time: at most the sum of the ranks' peaks, at least
  // the highest of them; then one line per node, then a row per rank and the job's.
  std::istringstream out(r.out);
  std::string line;
  ASSERT_TRUE(std::getline(out, line));
  const std::smatch m = [&] {
    std::smatch s;
    std::regex_search(line, s, std::regex("([0-9.]+) MiB"));
    return s;
  }();
  ASSERT_FALSE(m.empty()) << r.out;
  const double job = std::stod(m[1]);
  EXPECT_LE(job, sum_of_peaks + 0.1);
  EXPECT_GE(job, highest - 0.1);
  EXPECT_NE(r.out.find("node0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("job (4 ranks)"), std::string::npos) << r.out;
}

TEST(Recipes, PeaksIntoACsvOverManyRuns) {
  const Checkout c;
  const Result r = c.sh("sh", file_text(kExamples + "/ci/peaks_csv.sh"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream csv(file_text(c.dir + "/peaks.csv"));
  int rows = 0;
  for (std::string line; std::getline(csv, line);) {
    ++rows;
    ASSERT_EQ(line.find(std::to_string(rows) + ","), 0u) << line;
    // calibrate.py's defaults: a 64 MiB model and 64 MiB of activations in Calibration, beside
    // the interpreter's 10-20 MiB.
    const double mib = std::stod(line.substr(line.find(',') + 1));
    EXPECT_GT(mib, 128.0) << line;
    EXPECT_LT(mib, 128.0 + 25.0) << line;
  }
  EXPECT_EQ(rows, 5);
}

// Every file of examples/ci/ is shown in the README or a page of docs/ under `<!-- recipe: PATH -->`,
// as it is.
TEST(Recipes, TheDocsShowEachRecipeAsItIs) {
  std::vector<std::string> pages{QPROF_TEST_README};
  for (const auto& entry : fs::directory_iterator(fs::path(QPROF_TEST_README).parent_path() / "docs")) {
    if (entry.path().extension() == ".md") pages.push_back(entry.path().string());
  }
  std::size_t shown = 0;
  for (const auto& entry : fs::directory_iterator(kExamples + "/ci")) {
    const std::string rel = "examples/ci/" + entry.path().filename().string();
    const std::string tag = "<!-- recipe: " + rel + " -->\n";
    bool found = false;
    for (const std::string& page : pages) {
      const std::string text = file_text(page);
      const std::size_t at = text.find(tag);
      if (at == std::string::npos) continue;
      found = true;
      const std::size_t open = text.find('\n', at + tag.size());
      ASSERT_TRUE(text.compare(at + tag.size(), 3, "```") == 0)
          << rel << " in " << page << ": no code block after the tag";
      const std::size_t close = text.find("\n```\n", open);
      ASSERT_NE(close, std::string::npos) << rel << " in " << page;
      EXPECT_EQ(text.substr(open + 1, close - open), file_text(entry.path())) << rel << " in " << page;
    }
    EXPECT_TRUE(found) << rel << " is shown neither in the README nor in docs/";
    shown += found;
  }
  EXPECT_GE(shown, 4u);
}

}  // namespace
}  // namespace qprof::test
