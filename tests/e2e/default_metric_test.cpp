// SPDX-License-Identifier: Apache-2.0
// The footprint is the default of every decision: the stage tables of run and report, --max-peak,
// peak --sum/--by-host and -- CMD, compare, list and the chart's annotation all give the forked
// workers' footprint (shared pages once), and --metric rss gives Σ RSS, mprof's figure. Run as an
// ordinary user (no cgroup: the footprint is Σ PSS) and as root with --cgroup off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e_util.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

using nlohmann::json;

enum class As { nobody, root_without_cgroup };

// shared_workers 200 4 50: the parent's 200 MiB once and each worker's own 50 MiB; Σ RSS counts
// the parent's pages again in each worker. Both above the same processes with nothing touched.
constexpr double kTruthMiB = 200 + 4 * 50, kRssMiB = 200 + 4 * (200 + 50);

// A directory the other user may write, with copies of qprof and the workload it may run.
struct OtherUserFiles {
  std::string dir, qprof, workers;
};

const OtherUserFiles& other_user_files() {
  static const OtherUserFiles files = [] {
    OtherUserFiles f{"", copy_for_other_users(qprof_bin()), copy_for_other_users(workload("shared_workers"))};
    f.dir = std::filesystem::path(f.qprof).parent_path().string();
    return f;
  }();
  return files;
}

std::string suffix(As as) { return as == As::nobody ? "_nobody" : "_root"; }

// qprof ARGS as the user `as` says (root: with --cgroup off where it runs a command).
Result qprof_as(As as, std::vector<std::string> args) {
  if (as == As::nobody) {
    args.insert(args.begin(), {"runuser", "-u", "nobody", "--", other_user_files().qprof});
    return run(args);
  }
  if (args.front() == "run" || args.front() == "peak") args.insert(args.begin() + 1, {"--cgroup", "off"});
  args.insert(args.begin(), qprof_bin());
  return run(args);
}

// The workload with its stages Load and Workers, and the same processes holding nothing.
std::vector<std::string> workers_job(const std::string& parent, const std::string& own) {
  return {other_user_files().workers, parent, "4", own, "1500", "marks"};
}

struct Recorded {
  std::string path;
  Result result;
};

Recorded record(As as, const std::string& name, const std::vector<std::string>& job,
                const std::vector<std::string>& options = {}) {
  Recorded r{other_user_files().dir + "/" + name + suffix(as) + ".dat", {}};
  std::vector<std::string> args{"run", "-o", r.path};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.insert(args.end(), job.begin(), job.end());
  r.result = qprof_as(as, args);
  return r;
}

// The two runs each test compares: the job, and the same processes holding nothing.
struct Workers {
  Recorded full, base;
  double base_footprint = 0, base_rss = 0;  // MiB
  double truth() const { return base_footprint + kTruthMiB; }
  double rss() const { return base_rss + kRssMiB; }
};

const Workers& workers(As as) {
  static std::map<As, Workers> cache;
  if (const auto it = cache.find(as); it != cache.end()) return it->second;
  Workers w{record(as, "workers", workers_job("200", "50")), record(as, "base", workers_job("0", "0")), 0, 0};
  EXPECT_EQ(w.full.result.status, 0) << w.full.result.err;
  const trace::Trace base = trace::read_trace(w.base.path);
  const auto f = trace::footprint_of(base);
  EXPECT_TRUE(f && f->basis == trace::Footprint::Basis::pss) << w.base.result.err;
  w.base_footprint = f ? mib(f->peak) : 0;
  w.base_rss = mib(max_mem(base));
  return cache.emplace(as, std::move(w)).first->second;
}

// Within 3 % of the truth by construction: the kernel's PSS splits the shared pages exactly.
void expect_mib(double got, double want, const std::string& what) { EXPECT_NEAR(got, want, want * 0.03) << what; }

double stage_peak(const json& report, const std::string& stage) {
  for (const json& row : report["stages"]) {
    if (row["stage"] == stage) return static_cast<double>(row["peak_bytes"].get<std::uint64_t>()) / (1024.0 * 1024.0);
  }
  ADD_FAILURE() << "no stage " << stage << " in " << report.dump();
  return 0;
}

class DefaultMetric : public ::testing::TestWithParam<As> {
 protected:
  void SetUp() override {
    if (GetParam() == As::nobody && geteuid() != 0) GTEST_SKIP() << "switching to the user nobody needs root";
  }
};

TEST_P(DefaultMetric, TheStageTablesOfRunAndReportAreTheFootprint) {
  const Workers& w = workers(GetParam());
  // run's summary: the stage table's title says the footprint, and no fallback is said.
  const std::string summary = unwrapped(w.full.result.err);
  EXPECT_NE(summary.find("Stages (footprint, shared pages once: Σ PSS)"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("no footprint"), std::string::npos) << summary;

  const Result j = qprof_as(GetParam(), {"report", "--format", "json", w.full.path});
  ASSERT_EQ(j.status, 0) << j.err;
  const json report = json::parse(j.out);
  EXPECT_EQ(report["metric"], "footprint") << j.out;
  expect_mib(stage_peak(report, "Workers"), w.truth(), j.out);

  const Result csv = qprof_as(GetParam(), {"report", "--format", "csv", "--unit", "MiB", w.full.path});
  ASSERT_EQ(csv.status, 0) << csv.err;
  // CSV: the stages, each peak in MiB in the column after share.
  const std::size_t header_end = csv.out.find('\n');
  const std::string header = csv.out.substr(0, header_end);
  const std::size_t row = csv.out.find("\nWorkers,");
  ASSERT_NE(row, std::string::npos) << csv.out;
  std::vector<std::string> keys, cells;
  std::istringstream hs(header), rs(csv.out.substr(row + 1, csv.out.find('\n', row + 1) - row - 1));
  for (std::string f; std::getline(hs, f, ',');) keys.push_back(f);
  for (std::string f; std::getline(rs, f, ',');) cells.push_back(f);
  const auto peak = std::find(keys.begin(), keys.end(), "peak_mib");
  ASSERT_NE(peak, keys.end()) << header;
  ASSERT_LT(static_cast<std::size_t>(peak - keys.begin()), cells.size()) << csv.out;
  expect_mib(std::stod(cells[peak - keys.begin()]), w.truth(), csv.out);

  const Result md = qprof_as(GetParam(), {"report", "--format", "md", w.full.path});
  EXPECT_NE(md.out.find("**Stages (footprint, shared pages once: \u03a3 PSS)**"), std::string::npos) << md.out;

  const Result rss = qprof_as(GetParam(), {"report", "--format", "json", "--metric", "rss", w.full.path});
  ASSERT_EQ(rss.status, 0) << rss.err;
  expect_mib(stage_peak(json::parse(rss.out), "Workers"), w.rss(), rss.out);
}

TEST_P(DefaultMetric, MaxPeakHoldsTheFootprintAndNamesItsBasis) {
  // 80 MiB shared and 4 × 20 MiB own: a footprint of 160 MiB within 250M, Σ RSS of 480 MiB over it.
  const Recorded fits = record(GetParam(), "budget", workers_job("80", "20"), {"--max-peak", "250M"});
  EXPECT_EQ(fits.result.status, 0) << fits.result.err;
  const std::string said = unwrapped(fits.result.err);
  EXPECT_NE(said.find("peak footprint (\u03a3 PSS) "), std::string::npos) << said;
  EXPECT_NE(said.find("is within the budget of 250.0 MiB"), std::string::npos) << said;

  const Recorded over =
      record(GetParam(), "budget_rss", workers_job("80", "20"), {"--max-peak", "250M", "--metric", "rss"});
  EXPECT_EQ(over.result.status, 3) << over.result.err;
  EXPECT_NE(unwrapped(over.result.err).find("memory budget exceeded: peak RSS "), std::string::npos) << over.result.err;

  // peak's budget on the trace: the same figure.
  const Result peak = qprof_as(GetParam(), {"peak", "--max-peak", "250M", fits.path});
  EXPECT_EQ(peak.status, 0) << peak.err;
  const Result peak_rss = qprof_as(GetParam(), {"peak", "--max-peak", "250M", "--metric", "rss", fits.path});
  EXPECT_EQ(peak_rss.status, 3) << peak_rss.err;
}

TEST_P(DefaultMetric, PeakSumAndByHostAreTheFootprintWhilePeakFileAloneStaysMprofs) {
  const Workers& w = workers(GetParam());
  const auto value = [](const std::string& line) { return std::stod(line.substr(line.find('\t') + 1)); };
  for (const char* job : {"--sum", "--by-host"}) {
    const Result r = qprof_as(GetParam(), {"peak", job, w.full.path});
    ASSERT_EQ(r.status, 0) << r.err;
    expect_mib(value(r.out), w.truth(), r.out);
    const Result rss = qprof_as(GetParam(), {"peak", job, "--metric", "rss", w.full.path});
    expect_mib(value(rss.out), w.rss(), rss.out);
  }
  // mprof's one-liner: Σ RSS, as mprof peak prints it.
  const Result plain = qprof_as(GetParam(), {"peak", w.full.path});
  ASSERT_EQ(plain.status, 0) << plain.err;
  expect_mib(value(plain.out), w.rss(), plain.out);
}

TEST_P(DefaultMetric, PeakOfACommandIsItsFootprint) {
  const Workers& w = workers(GetParam());
  std::vector<std::string> args{"peak", "--unit", "MiB", "--"};
  for (const std::string& a : workers_job("200", "50")) args.push_back(a);
  const Result r = qprof_as(GetParam(), args);
  ASSERT_EQ(r.status, 0) << r.err;
  expect_mib(std::stod(r.out), w.truth(), r.out + r.err);
}

TEST_P(DefaultMetric, CompareRatiosStagesAndGrowthAreOnTheFootprint) {
  const Workers& w = workers(GetParam());
  const Result r = qprof_as(GetParam(), {"compare", "--format", "json", "--stages", "--unit", "MiB", "--max-growth",
                                         "10%", w.full.path, w.full.path});
  ASSERT_EQ(r.status, 0) << r.err;
  const json c = json::parse(r.out);
  EXPECT_EQ(c["metric"], "footprint") << r.out;
  const json& row = c["comparison"][0];
  expect_mib(row["peak_footprint_mib"]["value"].get<double>(), w.truth(), r.out);
  // --stages: the footprint inside each stage.
  expect_mib(row["stage_peak_mib:Workers"]["value"].get<double>(), w.truth(), r.out);

  // Against the base, the footprint grows by 400 MiB and Σ RSS by 1200: both over 10 %.
  const Result grown = qprof_as(GetParam(), {"compare", "--max-growth", "500M", w.base.path, w.full.path});
  EXPECT_EQ(grown.status, 0) << grown.err;
  const Result grown_rss =
      qprof_as(GetParam(), {"compare", "--max-growth", "500M", "--metric", "rss", w.base.path, w.full.path});
  EXPECT_EQ(grown_rss.status, 3) << grown_rss.err;
  EXPECT_NE(grown_rss.err.find("peak RSS"), std::string::npos) << grown_rss.err;
}

TEST_P(DefaultMetric, ListShowsTheFootprint) {
  const Workers& w = workers(GetParam());
  const Result r = qprof_as(GetParam(), {"list", w.full.path});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_NE(r.out.find("PEAK"), std::string::npos) << r.out;
  // The row's PEAK: the size just before the command, "NNN.N MiB".
  const std::size_t mib_at = r.out.find(" MiB", r.out.find('\n'));
  ASSERT_NE(mib_at, std::string::npos) << r.out;
  const std::size_t from = r.out.rfind(' ', mib_at - 1) + 1;
  expect_mib(std::stod(r.out.substr(from, mib_at - from)), w.truth(), r.out);
  const Result rss = qprof_as(GetParam(), {"list", "--metric", "rss", w.full.path});
  EXPECT_NE(rss.out.find("PEAK RSS"), std::string::npos) << rss.out;
}

TEST_P(DefaultMetric, TheChartFillsAndAnnotatesTheFootprint) {
  const Workers& w = workers(GetParam());
  const std::string script = other_user_files().dir + "/chart" + suffix(GetParam()) + ".gp";
  const Result r = qprof_as(GetParam(), {"plot", "--unit", "MiB", "--script", script, "-o",
                                         other_user_files().dir + "/chart" + suffix(GetParam()) + ".png", w.full.path});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string gp = read_file(script);
  // The annotation: "peak NNN MiB at …" on the footprint; Σ RSS a line named as mprof's figure.
  const std::size_t label = gp.find("\"peak ");
  ASSERT_NE(label, std::string::npos) << gp;
  expect_mib(std::stod(gp.substr(label + 6)), w.truth(), gp.substr(label, 60));
  EXPECT_NE(gp.find("footprint (\u03a3 PSS), peak "), std::string::npos);
  EXPECT_NE(gp.find("\u03a3 RSS (mprof's figure), peak "), std::string::npos);

  const Result rss = qprof_as(GetParam(), {"plot", "--metric", "rss", "--unit", "MiB", "--script", script, "-o",
                                           other_user_files().dir + "/chart_rss.png", w.full.path});
  ASSERT_EQ(rss.status, 0) << rss.err;
  const std::string gp_rss = read_file(script);
  const std::size_t rss_label = gp_rss.find("\"peak ");
  ASSERT_NE(rss_label, std::string::npos) << gp_rss;
  expect_mib(std::stod(gp_rss.substr(rss_label + 6)), w.rss(), gp_rss.substr(rss_label, 60));
}

INSTANTIATE_TEST_SUITE_P(, DefaultMetric, ::testing::Values(As::nobody, As::root_without_cgroup),
                         [](const ::testing::TestParamInfo<As>& i) {
                           return i.param == As::nobody ? "AsNobody" : "AsRootWithoutCgroup";
                         });

// Without PSS and without a cgroup of its own (--no-pss, or mprof's), the default is Σ RSS,
// said once; --metric rss is then the same figure without the note.
TEST(DefaultMetricFallback, ATraceWithoutFootprintIsSumOfRssAndSaysSo) {
  const std::string out = temp_dir() + "/no_pss.dat";
  const Result rec = qprof({"run", "--cgroup", "off", "--no-pss", "-o", out, "--", workload("shared_workers"), "20",
                            "2", "10", "300", "marks"});
  ASSERT_EQ(rec.status, 0) << rec.err;
  const std::string said = "no footprint in this trace (recorded with --no-pss, or by mprof)";
  const std::string summary = unwrapped(rec.err);
  EXPECT_NE(summary.find(said), std::string::npos) << summary;
  EXPECT_EQ(summary.find(said, summary.find(said) + 1), std::string::npos) << "said once: " << summary;
  const Result text = qprof({"report", out});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(unwrapped(text.out).find(said), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Stages (RSS of the tree"), std::string::npos) << text.out;
  const Result asked = qprof({"report", "--metric", "rss", out});
  EXPECT_EQ(unwrapped(asked.out).find(said), std::string::npos) << asked.out;
  const Result sum = qprof({"peak", "--sum", out});
  EXPECT_EQ(sum.status, 0) << sum.err;
  EXPECT_NE(sum.err.find(said), std::string::npos) << sum.err;
}

}  // namespace
}  // namespace qprof::test
