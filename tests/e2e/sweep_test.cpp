// SPDX-License-Identifier: Apache-2.0
// qprof sweep and compare --sweep on workloads of known memory: alloc_tree holds a + b × N MiB for
// N forked workers (a = 50, b = 30, plus what each process holds before it allocates, measured
// here); a quadratic one, 10 × N² MiB; a failing point; placeholders that a shell would split.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

// qprof under a 2 GiB address-space limit per process and a timeout: the largest run holds
// 50 + 8 × 30 MiB in 9 processes.
Result bounded_qprof(const std::vector<std::string>& args, int timeout_s = 120) {
  std::vector<std::string> argv{"prlimit", as_limit("2147483648"), "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", timeout_s);
}

// The Σ RSS peak of alloc_tree with nothing allocated: each process's own baseline.
double baseline_mib(int workers) {
  const std::string out = temp_dir() + "/base_" + std::to_string(workers) + ".dat";
  const Result r =
      bounded_qprof({"run", "-q", "-o", out, "--", workload("alloc_tree"), "0", std::to_string(workers), "0", "300"});
  EXPECT_EQ(r.status, 0) << r.err;
  return mib(max_mem(trace::read_trace(out)));
}

const nlohmann::json* model_row(const nlohmann::json& j, const std::string& figure) {
  for (const auto& row : j["sweep_model"]) {
    if (row["figure"] == figure) return &row;
  }
  return nullptr;
}

TEST(Sweep, WorkersModelRecoversInterceptSlopeAndTheSolvedCount) {
  // Truth: Σ RSS = (50 + parent's baseline) + N × (30 + a worker's baseline).
  const double one = baseline_mib(1), two = baseline_mib(2);
  const double worker_base = two - one, parent_base = one - worker_base;
  const double a = 50 + parent_base, b = 30 + worker_base;
  const std::string dir = temp_dir() + "/workers";
  // Σ RSS alone (no PSS, no cgroup): the model falls back to it for the limit.
  const Result r = bounded_qprof(
      {"sweep", "-d",        dir,    "-p",       "workers=1,2,4,8", "--limit", "500MiB", "--at",
       "16",    "--format",  "json", "--no-pss", "--cgroup",        "off",     "--",     workload("alloc_tree"),
       "50",    "{workers}", "30",   "300"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* n : {"1", "2", "4", "8"}) {
    EXPECT_TRUE(fs::exists(dir + "/workers=" + n + ".dat")) << n;
    EXPECT_NE(joined(r.err).find("workers=" + std::string(n) + ": ok"), std::string::npos) << r.err;
  }
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sweep_runs"].size(), 4u);
  EXPECT_EQ(j["sweep_runs"][2]["workers"], 4) << "a number, as in sweep_points";
  EXPECT_EQ(j["sweep_points"][2]["workers"], 4);
  const auto* rss = model_row(j, "peak_rss");
  ASSERT_TRUE(rss) << r.out;
  EXPECT_EQ((*rss)["model"], "linear");
  const double slope = (*rss)["slope"].get<double>() / (1 << 20),
               intercept = (*rss)["intercept"].get<double>() / (1 << 20);
  EXPECT_NEAR(slope, b, 0.03 * b);
  EXPECT_NEAR(intercept, a, 0.05 * a);
  EXPECT_NEAR((*rss)["predicted"].get<double>() / (1 << 20), a + 16 * b, 0.03 * (a + 16 * b));
  // Without PSS, the limit is solved on Σ RSS: the largest N with a + b N ≤ 500.
  EXPECT_EQ(j["solved_figure"], "peak_rss");
  EXPECT_EQ(j["solved_value"].get<double>(), std::floor((500 - a) / b)) << "a " << a << ", b " << b;
  EXPECT_NE(j["solved"].get<std::string>().find("workers \u2264 "), std::string::npos);

  // The same traces read back by compare --sweep give the same model.
  // Its chart: the runs, the fit, the limit and the solved value.
  std::vector<std::string> args{"compare",  "--sweep", "workers", "--limit",         "500MiB",
                                "--format", "json",    "--plot",  dir + "/model.svg"};
  for (const char* n : {"1", "2", "4", "8"}) args.push_back(dir + "/workers=" + n + ".dat");
  const Result c = qprof(args);
  ASSERT_EQ(c.status, 0) << c.err;
  const auto k = nlohmann::json::parse(c.out);
  EXPECT_EQ(k["solved_value"], j["solved_value"]);
  EXPECT_DOUBLE_EQ((*model_row(k, "peak_rss"))["slope"].get<double>(), (*rss)["slope"].get<double>());
  const std::string svg = read_file(dir + "/model.svg");
  EXPECT_NE(svg.find("limit 500.0 MiB"), std::string::npos);
  EXPECT_NE(svg.find("linear fit, R\u00b2 "), std::string::npos);
  EXPECT_NE(svg.find("workers \u2264 " + std::to_string(static_cast<int>(std::floor((500 - a) / b)))),
            std::string::npos);
}

TEST(Sweep, AQuadraticWorkloadGetsThePowerLaw) {
  // N workers of 10 × N MiB each: 10 N² MiB, "{n}0" filled inside an argument.
  const std::string dir = temp_dir() + "/quadratic";
  const Result r = bounded_qprof({"sweep", "-d", dir, "-p", "n=1,2,4,6", "--format", "json", "--",
                                  workload("alloc_tree"), "0", "{n}", "{n}0", "300"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto* rss = model_row(j, "peak_rss");
  ASSERT_TRUE(rss) << r.out;
  EXPECT_EQ((*rss)["model"], "power law");
  EXPECT_NEAR((*rss)["exponent"].get<double>(), 2.0, 0.1);
}

TEST(Sweep, AFailingPointIsRecordedAndTheSweepGoesOn) {
  const std::string dir = temp_dir() + "/failing";
  // The value reaches the script as $1, an argument: never part of the shell's code.
  const std::vector<std::string> cmd{"--", "sh", "-c", "test \"$1\" != 2 || exit 3", "sh", "{v}"};
  std::vector<std::string> args{"sweep", "-d", dir, "-p", "v=1,2,3", "--format", "json"};
  args.insert(args.end(), cmd.begin(), cmd.end());
  const Result r = bounded_qprof(args);
  EXPECT_EQ(r.status, 3) << r.err;  // the first failed run's own status
  EXPECT_NE(joined(r.err).find("[2/3] v=2: FAILED, exit status 3"), std::string::npos) << r.err;
  for (const char* v : {"1", "2", "3"}) EXPECT_TRUE(fs::exists(dir + "/v=" + std::string(v) + ".dat")) << v;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sweep_runs"].size(), 3u);
  EXPECT_EQ(j["sweep_runs"][1]["exit_status"], 3);
  EXPECT_EQ(j["sweep_runs"][2]["exit_status"], 0);

  // --stop-on-failure: nothing runs after the failure.
  const std::string stop_dir = temp_dir() + "/stop";
  args = {"sweep", "-d", stop_dir, "--stop-on-failure", "-p", "v=1,2,3"};
  args.insert(args.end(), cmd.begin(), cmd.end());
  const Result s = bounded_qprof(args);
  EXPECT_EQ(s.status, 3) << s.err;
  EXPECT_TRUE(fs::exists(stop_dir + "/v=2.dat"));
  EXPECT_FALSE(fs::exists(stop_dir + "/v=3.dat"));
}

TEST(Sweep, PlaceholdersWithSpacesAndQuotesStayOneArgument) {
  const std::string dir = temp_dir() + "/quoted";
  const std::string seen = temp_dir() + "/seen";
  fs::create_directories(seen);
  // Each run writes its arguments, one a line, and $V from --env, to a file of its own.
  const Result r =
      bounded_qprof({"sweep", "-d", dir, "-p", "name=a b,it's \"q\";$(x)", "--env", "V=<{name}>", "--", "sh", "-c",
                     "printf '%s\\n' \"$@\" \"$V\" > \"$0\"", seen + "/{name}.txt", "{name}", "x{name}y"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(seen + "/a b.txt"), "a b\nxa by\n<a b>\n");
  EXPECT_EQ(read_file(seen + "/it's \"q\";$(x).txt"), "it's \"q\";$(x)\nxit's \"q\";$(x)y\n<it's \"q\";$(x)>\n");
  // The trace names keep only safe bytes of the values.
  EXPECT_TRUE(fs::exists(dir + "/name=a_b.dat"));
  EXPECT_TRUE(fs::exists(dir + "/name=it_s__q____x_.dat"));
}

TEST(Sweep, AGridOfTwoByThreeMakesSixTraces) {
  const std::string dir = temp_dir() + "/grid";
  const Result r = bounded_qprof({"sweep", "-d", dir, "-p", "a=1,2", "-p", "b=x,y,z", "--", "true", "{a}", "{b}"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::size_t traces = 0;
  for (const auto& e : fs::directory_iterator(dir)) traces += e.path().extension() == ".dat" ? 1 : 0;
  EXPECT_EQ(traces, 6u);
  for (const char* a : {"1", "2"}) {
    for (const char* b : {"x", "y", "z"}) {
      EXPECT_TRUE(fs::exists(dir + "/a=" + std::string(a) + ",b=" + b + ".dat")) << a << b;
    }
  }
  EXPECT_NE(joined(r.err).find("[6/6] a=2 b=z: ok"), std::string::npos) << r.err;
}

// --fit: qprof fit at each point. alloc_tree's anonymous memory cannot be dropped, so the smallest
// limit it runs in is at least a + b N MiB and at most that, the processes' baselines and one step
// of fit's resolution (8 MiB or 2 %) above; the slope fitted over N = 1, 2, 4 is b within twice
// the resolution over the span of N.
TEST(Sweep, FitGivesEachPointItsLimitsAndTheModelSolvesOnThem) {
  if (sanitized()) GTEST_SKIP() << "fit's probes run the job under memory limits that AddressSanitizer's shadow breaks";
  const std::string dir = temp_dir() + "/fitted";
  const Result r =
      bounded_qprof({"sweep", "-d", dir, "-p", "workers=1,2,4", "--fit", "--fit-runs-max", "10", "--limit", "400MiB",
                     "--format", "json", "--", workload("alloc_tree"), "50", "{workers}", "30", "300"},
                    400);
  if (r.status == 2 && joined(r.err).find("may not create one here") != std::string::npos) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const double a = 50, b = 30, step = 8;
  for (const auto& run : j["sweep_runs"]) {
    const double n = run["workers"].get<double>();  // a number, as in sweep_points
    const double runs_in = run["fit_runs_in_bytes"].get<double>() / (1 << 20);
    EXPECT_GE(runs_in, a + b * n) << r.err;
    EXPECT_LE(runs_in, run["footprint_bytes"].get<double>() / (1 << 20) + std::max(step, 0.02 * runs_in)) << r.err;
    EXPECT_GE(run["fit_full_speed_bytes"].get<double>(), run["fit_runs_in_bytes"].get<double>());
    const std::string json = dir + "/workers=" + std::to_string(run["workers"].get<int>()) + ".fit.json";
    ASSERT_TRUE(fs::exists(json)) << json;
    EXPECT_EQ(nlohmann::json::parse(read_file(json))["findings"]["smallest_running"]["limit_bytes"],
              run["fit_runs_in_bytes"]);
  }
  const auto* fit = model_row(j, "fit_runs_in");
  ASSERT_TRUE(fit) << r.out;
  EXPECT_NEAR((*fit)["slope"].get<double>() / (1 << 20), b, 2 * step / (4 - 1)) << r.out;
  // The limit is solved on what the job needs at full speed, not on what it touches.
  EXPECT_EQ(j["solved_figure"], "fit_full_speed");
  EXPECT_NE(joined(r.err).find("workers=4: fit: runs in "), std::string::npos) << r.err;

  // compare --sweep finds fit's JSON beside each trace: the same model.
  std::vector<std::string> args{"compare", "--sweep", "workers", "--limit", "400MiB", "--format", "json"};
  for (const char* n : {"1", "2", "4"}) args.push_back(dir + "/workers=" + std::string(n) + ".dat");
  const Result c = qprof(args);
  ASSERT_EQ(c.status, 0) << c.err;
  const auto k = nlohmann::json::parse(c.out);
  ASSERT_TRUE(model_row(k, "fit_runs_in")) << c.out;
  EXPECT_DOUBLE_EQ((*model_row(k, "fit_runs_in"))["slope"].get<double>(), (*fit)["slope"].get<double>());
  EXPECT_EQ(k["solved_value"], j["solved_value"]);
  // A damaged JSON beside a trace is said, and its limits left out; the rest is modelled.
  std::ofstream(dir + "/workers=1.fit.json") << "{\"findings\": 3";
  const Result d = qprof(args);
  EXPECT_EQ(d.status, 0) << d.err;
  EXPECT_NE(joined(d.err).find("workers=1.fit.json: "), std::string::npos) << d.err;
}

// n=abc fails (the shell refuses a value that is not digits): left out, the model is made of the
// runs that entered it, n = 10 and 30, which are numbers.
TEST(Sweep, AFailedValueThatIsNoNumberLeavesTheOthersModelled) {
  const std::string dir = temp_dir() + "/failed_word";
  const std::string job = "case $1 in *[!0-9]*) exit 3;; esac; exec " + workload("spike") + " \"$1\" 100 0";
  const Result r =
      bounded_qprof({"sweep", "-d", dir, "-p", "n=10,abc,30", "--format", "json", "--", "sh", "-c", job, "sh", "{n}"});
  EXPECT_EQ(r.status, 3) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(model_row(j, "peak_rss")) << r.out;
  EXPECT_NEAR((*model_row(j, "peak_rss"))["slope"].get<double>() / (1 << 20), 1.0, 0.1) << r.out;
}

// A point run again into the same directory is named n=20~2.dat (the next free name): compare
// --sweep reads it as n=20 again, and a forgotten NAME is said as such.
TEST(Sweep, ARunAgainIntoItsDirectoryIsARepeatForCompare) {
  const std::string dir = temp_dir() + "/again";
  const std::vector<std::string> cmd{"--", workload("spike"), "{n}", "100", "0"};
  std::vector<std::string> args{"sweep", "-d", dir, "-p", "n=20,40"};
  args.insert(args.end(), cmd.begin(), cmd.end());
  ASSERT_EQ(bounded_qprof(args).status, 0);
  args = {"sweep", "-d", dir, "-p", "n=20"};
  args.insert(args.end(), cmd.begin(), cmd.end());
  ASSERT_EQ(bounded_qprof(args).status, 0);
  ASSERT_TRUE(fs::exists(dir + "/n=20~2.dat"));
  std::vector<std::string> traces;
  for (const char* name : {"n=20.dat", "n=20~2.dat", "n=40.dat"}) traces.push_back(dir + "/" + name);
  std::vector<std::string> compare{"compare", "--sweep", "n", "--format", "json"};
  compare.insert(compare.end(), traces.begin(), traces.end());
  const Result c = qprof(compare);
  ASSERT_EQ(c.status, 0) << c.err;
  const auto j = nlohmann::json::parse(c.out);
  ASSERT_TRUE(model_row(j, "peak_rss")) << c.out;
  EXPECT_NEAR((*model_row(j, "peak_rss"))["slope"].get<double>() / (1 << 20), 1.0, 0.1) << c.out;
  compare = {"compare", "--sweep"};
  compare.insert(compare.end(), traces.begin(), traces.end());
  const Result forgot = qprof(compare);
  EXPECT_EQ(forgot.status, 2);
  EXPECT_NE(joined(forgot.err).find("--sweep takes the parameter's NAME before the traces"), std::string::npos)
      << forgot.err;
}

// sweep --fit's table of runs fits 80 columns (stdout is not a terminal): fit's two limits with it.
TEST(Sweep, FitsRunsTableFitsEightyColumns) {
  if (sanitized()) GTEST_SKIP() << "fit's probes run the job under memory limits that AddressSanitizer's shadow breaks";
  // Run where the traces' names are short (fit80/n=20.dat), as the user's are: a long path alone
  // leaves fit's columns out (and names them).
  const Result r = run({"env", "-C", temp_dir(), "prlimit", as_limit("2147483648"), "--", qprof_bin(), "sweep", "-d",
                        "fit80", "-p", "n=20,40", "--fit", "--", workload("spike"), "{n}", "100", "0"},
                       "", 200);
  if (r.status == 2 && joined(r.err).find("may not create one here") != std::string::npos) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    std::size_t columns = 0;
    for (unsigned char ch : l) columns += (ch & 0xC0) != 0x80;
    EXPECT_LE(columns, 80u) << l;
  }
  EXPECT_NE(r.out.find("runs in MiB  full speed MiB"), std::string::npos) << r.out;
}

TEST(Sweep, UsageErrors) {
  EXPECT_EQ(qprof({"sweep", "-p", "n=1,2", "--", "true"}).status, 2);          // {n} used nowhere
  EXPECT_EQ(qprof({"sweep", "-p", "1n=1", "--", "true", "{1n}"}).status, 2);   // not a name
  EXPECT_EQ(qprof({"sweep", "-p", "n=1,,2", "--", "true", "{n}"}).status, 2);  // an empty value
  const Result twice = qprof({"sweep", "-p", "n=1,1", "--", "true", "{n}"});   // a value twice
  EXPECT_EQ(twice.status, 2);
  EXPECT_NE(joined(twice.err).find("the value 1 is given twice (--repeat N runs each point N times)"),
            std::string::npos)
      << twice.err;
  EXPECT_EQ(qprof({"sweep", "-p", "n=1"}).status, 2);  // no command
  // A text chart is refused before any run: the command would write the file.
  const std::string ran = temp_dir() + "/sweep_text_chart_ran";
  const Result text =
      qprof({"sweep", "-d", temp_dir() + "/text_chart", "-p", "n=1,2", "--plot", "-", "--", "touch", ran + "{n}"});
  EXPECT_EQ(text.status, 2);
  EXPECT_EQ(text.out, "");
  EXPECT_NE(joined(text.err).find("a sweep's chart is a .png, .svg or .pdf file"), std::string::npos) << text.err;
  EXPECT_FALSE(fs::exists(ran + "1"));
  // A grid has no model to draw: refused before its first run too.
  const Result grid = qprof({"sweep", "-d", temp_dir() + "/grid_chart", "-p", "a=1,2", "-p", "b=1,2", "--plot",
                             temp_dir() + "/grid.svg", "--", "touch", ran + "{a}{b}"});
  EXPECT_EQ(grid.status, 2);
  EXPECT_NE(joined(grid.err).find("--plot draws the model of one parameter; a grid (2 -p) has none"), std::string::npos)
      << grid.err;
  EXPECT_FALSE(fs::exists(ran + "11"));
  // A command that cannot be started: its 127 (as run's), and no more runs.
  const Result missing =
      qprof({"sweep", "-d", temp_dir() + "/missing_command", "-p", "n=1,2", "--", "/nonexistent/command", "{n}"});
  EXPECT_EQ(missing.status, 127) << missing.err;
  EXPECT_NE(joined(missing.err).find("the command could not be started; no more runs"), std::string::npos)
      << missing.err;
}

}  // namespace
}  // namespace qprof::test
