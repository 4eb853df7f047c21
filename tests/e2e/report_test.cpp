// SPDX-License-Identifier: Apache-2.0
// qprof report, and what qprof run adds after the run: the stage table, --yaml (read back by
// Python's yaml), --yaml-stream (read while the job runs), --max-peak.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return data_file("report/" + name); }

// Runs Debian's python3 (it has python3-yaml) on a script that checks a YAML file (d, loaded from
// sys.argv[1]; `args` follow it) and exits 0.
Result python_checks(const std::string& yaml_path, const std::string& checks,
                     const std::vector<std::string>& args = {}) {
  const std::string script = "import sys, yaml\nd = yaml.safe_load(open(sys.argv[1]))\n" + checks;
  std::vector<std::string> argv{debian_python(), "-c", script, yaml_path};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

TEST(ReportCli, RequestInJsonHasTheFiguresOfTheTextForm) {
  const Result text = qprof({"report", "--request", fixture("quark.dat")});
  const Result json = qprof({"report", "--request", "--format", "json", fixture("quark.dat")});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  // The text form's lines, each form's value the JSON's, keyed as the report's JSON keys them.
  for (const char* form : {"slurm", "kubernetes", "docker", "systemd"}) {
    const std::string value = j["request_" + std::string(form)].get<std::string>();
    EXPECT_NE(text.out.find(form + std::string(std::max<std::size_t>(12 - std::strlen(form), 1), ' ') + value + "\n"),
              std::string::npos)
        << form << "\n"
        << text.out;
  }
  EXPECT_EQ(j["request_bytes"].get<std::uint64_t>() >> 20, 1093u) << "--mem=1093M: " << json.out;
  const auto full = nlohmann::json::parse(qprof({"report", "--format", "json", fixture("quark.dat")}).out);
  for (const auto& [key, value] : j.items()) EXPECT_EQ(full[key], value) << key;
  // Another format is refused, naming the combination, rather than given the text form.
  const Result md = qprof({"report", "--request", "--format", "md", fixture("quark.dat")});
  EXPECT_EQ(md.status, 2);
  EXPECT_EQ(md.out, "");
  EXPECT_NE(joined(md.err).find("--request writes text or json; --format md does not combine with it"),
            std::string::npos)
      << md.err;  // --request sizes one trace: with --sum it is refused, not left unsaid while the job's report prints.
  const Result sum = qprof({"report", "--sum", "--request", fixture("quark.dat"), fixture("quark.dat")});
  EXPECT_EQ(sum.status, 2);
  EXPECT_EQ(sum.out, "");
  EXPECT_NE(joined(sum.err).find("--request sizes one run from its footprint; it does not combine with --sum"),
            std::string::npos)
      << sum.err;
}

// Two outputs for one stdout, or a figure a command does not use, are usage errors that write
// nothing: not one of them dropped unasked, nor a YAML file left behind by a later refusal.
TEST(ReportCli, RequestAndMarginCombinationsAreRefusedBeforeAnyOutput) {
  const std::string yaml = temp_dir() + "/request_combinations.yaml";
  const Result both = qprof({"report", "--request", "--yaml", "-", fixture("quark.dat")});
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.out, "");
  EXPECT_NE(joined(both.err).find("--request and --yaml - both write to stdout; give --yaml a file"), std::string::npos)
      << both.err;
  const Result bad_margin = qprof({"report", "--margin", "lots", "--yaml", yaml, fixture("quark.dat")});
  EXPECT_EQ(bad_margin.status, 2);
  EXPECT_NE(joined(bad_margin.err).find("--margin: 'lots' is not a percentage"), std::string::npos) << bad_margin.err;
  EXPECT_FALSE(std::filesystem::exists(yaml));
  const Result margin_sum = qprof({"report", "--sum", "--margin", "20%", fixture("quark.dat"), fixture("quark.dat")});
  EXPECT_EQ(margin_sum.status, 2);
  EXPECT_EQ(margin_sum.out, "");
  EXPECT_NE(joined(margin_sum.err).find("--margin sizes one run from its footprint; it does not combine with --sum"),
            std::string::npos)
      << margin_sum.err;
  // A file for the YAML and the request on stdout: both written, the request as asked alone.
  const Result file_and_request = qprof({"report", "--request", "--yaml", yaml, fixture("quark.dat")});
  ASSERT_EQ(file_and_request.status, 0) << file_and_request.err;
  EXPECT_EQ(file_and_request.out, qprof({"report", "--request", fixture("quark.dat")}).out);
  EXPECT_EQ(read_file(yaml), qprof({"report", "--yaml", "-", fixture("quark.dat")}).out);
}

TEST(ReportCli, TablesInEveryFormat) {
  const Result text = qprof({"report", fixture("open_stage.dat")});
  ASSERT_EQ(text.status, 0) << text.err;
  // Into a pipe, the table fits 80 columns and names what it left out; Markdown keeps all.
  EXPECT_NE(text.out.find("Train (never ended)    0.400  0.800       0.400  50.0%     400.0     +150.0\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("left out to fit 80 columns: at start, at end, slope"), std::string::npos) << text.out;
  EXPECT_NE(qprof({"report", "--format", "md", fixture("open_stage.dat")}).out.find("| slope"), std::string::npos);
  // Its few readings (under five) give no slope: "-".
  const Result whole = qprof({"report", "--format", "md", "--metric", "rss", fixture("open_stage.dat")});
  EXPECT_NE(
      whole.out.find("| Train (never ended) |   0.400 | 0.800 |      0.400 | 50.0% |    400.0 |        110.0 |      "
                     "260.0 |    +150.0 | -     |"),
      std::string::npos)
      << whole.out;
  const Result csv = qprof({"report", "--format", "csv", fixture("open_stage.dat")});
  EXPECT_EQ(
      csv.out.substr(0, csv.out.find('\n')),
      "stage,start_s,end_s,duration_s,share,peak_bytes,peak_at_s,mem_start_bytes,mem_end_bytes,mem_delta_bytes,closed,"
      "slope_bytes_per_s,slope_r2,slope_significant");
  const auto j =
      nlohmann::json::parse(qprof({"report", "--format", "json", "--metric", "gpu", fixture("quark.dat")}).out);
  EXPECT_EQ(j["stages"][1]["peak_bytes"], static_cast<Bytes>(2048.5 * (1 << 20)));
  const Result md = qprof({"report", "--format", "md", "--unit", "GiB", "--metric", "rss", fixture("quark.dat")});
  EXPECT_NE(md.out.find("| Calibration           |   4.000 | 20.500 |     16.500 | 46.3% |    0.684 |"),
            std::string::npos)
      << md.out;
}

TEST(ReportCli, CsvTablesOfTheRunsFiguresAndPeaks) {
  // --table facts: every run-level figure JSON has, as one CSV row with the same keys and values.
  const Result csv = qprof({"report", "--format", "csv", "--table", "facts", fixture("quark.dat")});
  ASSERT_EQ(csv.status, 0) << csv.err;
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  const std::string row = csv.out.substr(header.size() + 1);
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 2) << csv.out;
  const auto j = nlohmann::json::parse(qprof({"report", "--format", "json", fixture("quark.dat")}).out);
  auto field = [&](const std::string& key) {
    std::vector<std::string> keys, values;
    std::stringstream hs(header), rs(row);
    for (std::string k; std::getline(hs, k, ',');) keys.push_back(k);
    for (std::string v; std::getline(rs, v, ',');) values.push_back(v);
    const auto at = std::find(keys.begin(), keys.end(), key);
    return at == keys.end() || static_cast<std::size_t>(at - keys.begin()) >= values.size() ? std::string("(none)")
                                                                                            : values[at - keys.begin()];
  };
  EXPECT_EQ(field("cpu_s"), "30.25") << header;
  EXPECT_EQ(field("cpu_peak_percent"), "89") << header;
  EXPECT_EQ(field("syscall_read_bytes"), std::to_string(j["syscall_read_bytes"].get<Bytes>())) << header;
  EXPECT_EQ(field("disk_write_bytes"), std::to_string(j["disk_write_bytes"].get<Bytes>())) << header;
  const Result peaks = qprof({"report", "--format", "csv", "--table", "peaks", fixture("quark.dat")});
  ASSERT_EQ(peaks.status, 0) << peaks.err;
  EXPECT_EQ(peaks.out.rfind("metric,peak_bytes,", 0), 0u) << peaks.out;
  EXPECT_NE(peaks.out.find("\nrss,943718400,"), std::string::npos) << peaks.out;
  const Result none = qprof({"report", "--format", "csv", "--table", "nonesuch", fixture("quark.dat")});
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(joined(none.err).find("(it has: facts, peaks, stages"), std::string::npos) << none.err;
}

TEST(ReportCli, UsageErrors) {
  EXPECT_EQ(qprof({"report"}).status, 2);
  EXPECT_EQ(qprof({"report", temp_dir() + "/none.dat"}).status, 2);
  EXPECT_EQ(qprof({"report", "--format", "xml", fixture("quark.dat")}).status, 2);
  const Result pss = qprof({"report", "--metric", "pss", fixture("open_stage.dat")});
  EXPECT_EQ(pss.status, 2);
  EXPECT_NE(joined(pss.err).find("open_stage.dat has no pss (it has: rss)"), std::string::npos) << pss.err;
  EXPECT_EQ(qprof({"report", "--metric", "kernel_process", fixture("quark.dat")}).status, 2);
  EXPECT_EQ(qprof({"report", "--yaml", temp_dir() + "/no/dir/x.yaml", fixture("quark.dat")}).status, 2);
}

TEST(ReportCli, YamlThatPythonReads) {
  const std::string yaml = temp_dir() + "/quark.yaml";
  const Result r = qprof({"report", fixture("quark.dat"), "--yaml", yaml});
  ASSERT_EQ(r.status, 0) << r.err;
  const Result py = python_checks(
      yaml,
      "steps = [r['step'] for r in d['memory_usage']]\n"
      "assert steps == ['Start', 'Pre-process Start', 'Pre-process End', 'Calibration Start',\n"
      "  'Calibration End', 'Quantization (Static) Start', 'Checkpoint saved',\n"
      "  'Quantization (Static) End', 'End'], steps\n"
      "keys = ['step', 'timestamp', 'relative_time_secs', 'cpu_memory_mb', 'gpu_memory_mb',\n"
      "  'disk_read_mb', 'disk_write_mb']\n"
      "assert all(list(r) == keys for r in d['memory_usage'])\n"
      "assert all(type(r[k]) is float for r in d['memory_usage'] for k in keys[1:])\n"
      "e = d['memory_usage'][4]\n"
      "assert (e['relative_time_secs'], e['cpu_memory_mb'], e['gpu_memory_mb'], e['disk_read_mb'],\n"
      "  e['disk_write_mb']) == (20.5, 520.0, 2048.5, 890.5, 2.75), e\n"
      "assert d['total_quantization_time_seconds'] == 35.6\n"
      "assert d['peak_memory_mb'] == 700.0 and d['tree_peak_memory_mb'] == 900.0\n"
      "assert d['gpu_peak_memory_mb'] == 2050.0 and d['peak_gpu_memory_mb'] == 2050.0\n"
      "assert d['total_disk_read_mb'] == 906.0 and d['total_disk_write_mb'] == 159.25\n"
      "assert d['missing'] == []\n"
      "q = d['qprof']\n"
      "assert q['peaks']['kernel_process']['mb'] == 700.0\n"
      "assert q['peaks']['rss']['stage'] == 'Quantization (Static)'\n"
      "assert [s['name'] for s in q['stages']] == ['Pre-process', 'Calibration', 'Quantization (Static)']\n"
      "assert q['stages'][0]['peak_memory_mb'] == 520.0\n");
  EXPECT_EQ(py.status, 0) << py.err;
  // "-" is stdout, the same document.
  EXPECT_EQ(qprof({"report", fixture("quark.dat"), "--yaml", "-"}).out, read_file(yaml));
}

TEST(RunReport, StageTableYamlAndBudgetAfterTheRun) {
  const std::string out = temp_dir() + "/run_report.dat", yaml = temp_dir() + "/run_report.yaml";
  const Result r = qprof({"run", "-o", out, "--yaml", yaml, "--max-peak", "4GiB", "--", workload("markers")});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string err = joined(r.err);  // each message on a line of its own
  // After the summary: the stage table, then the budget's verdict.
  const std::size_t table = err.find("\nqprof: stage    ");
  ASSERT_NE(table, std::string::npos) << r.err;
  const std::string header = err.substr(table + 1, err.find('\n', table + 1) - table - 1);
  // Narrowed to the summary's 80 columns: the levels at start and end, and the slope, are left
  // out and named (qprof report prints them).
  for (const char* column : {"start s", "end s", "duration s", "share", "peak MiB", "delta MiB"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column << " in " << header;
  }
  EXPECT_NE(err.find("left out to fit 80 columns: at start, at end, slope", table), std::string::npos) << r.err;
  // Every line as printed (messages wrapped) fits.
  for (std::size_t from = r.err.find("\nqprof: stage    ") + 1; from < r.err.size();) {
    const std::size_t end = std::min(r.err.find('\n', from), r.err.size());
    std::size_t width = 0;
    for (std::size_t i = from; i < end; ++i) width += (static_cast<unsigned char>(r.err[i]) & 0xC0) != 0x80;
    EXPECT_LE(width, 80u) << r.err.substr(from, end - from);
    from = end + 1;
  }
  EXPECT_GT(table, err.find("qprof:   trace"));
  EXPECT_NE(err.find("\nqprof: Load     ", table), std::string::npos) << r.err;
  EXPECT_NE(err.find("\nqprof: Calibration  ", table), std::string::npos) << r.err;
  EXPECT_NE(err.find("is within the budget of 4.00 GiB"), std::string::npos) << r.err;

  const Trace t = trace::read_trace(out);
  const double base = mib(*t.markers[0].at.rss);
  const Result py =
      python_checks(yaml,
                    "steps = [r['step'] for r in d['memory_usage']]\n"
                    "assert steps == ['Start', 'Load Start', 'Load End', 'Calibration Start', 'Calibration End', "
                    "'Export', 'End'], steps\n"
                    "base = float(sys.argv[2])\n"
                    "cal = d['memory_usage'][4]['cpu_memory_mb']\n"
                    "assert abs(cal - base - 120) < 3, (cal, base)\n"
                    // The kernel's figure of the largest process: a sanitized qprof is larger than the job
                    // (ASan's shadow), and its pre-exec copy's figure is not taken for the job's peak.
                    "assert sys.argv[4] == '1' or abs(d['peak_memory_mb'] - base - 120) < 3, d['peak_memory_mb']\n"
                    "assert abs(d['tree_peak_memory_mb'] - base - 120) < 3, d['tree_peak_memory_mb']\n"
                    "missing = [k for k in d['missing'] if sys.argv[4] == '0' or k != 'peak_memory_mb']\n"
                    "assert missing == ['gpu_memory_mb', 'peak_gpu_memory_mb', 'gpu_peak_memory_mb'], d['missing']\n"
                    "assert d['total_disk_write_mb'] >= 0.0 and 'disk_read_mb' in d['memory_usage'][1]\n"
                    "assert d['qprof']['in_progress'] is False and d['qprof']['exit']['status'] == 0\n"
                    "assert d['qprof']['trace'] == sys.argv[3]\n",
                    {std::to_string(base), out, sanitized() ? "1" : "0"});
  EXPECT_EQ(py.status, 0) << py.err;
}

TEST(RunReport, QuietLeavesOutTheTable) {
  const Result r = qprof({"run", "-q", "-o", temp_dir() + "/quiet.dat", "--", workload("markers")});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(joined(r.err).find("qprof: "), std::string::npos) << r.err;
}

TEST(RunBudget, OverUnderAndTheCommandsFailureWins) {
  const std::string out = temp_dir() + "/budget.dat";
  // markers holds 120 MiB in its Calibration stage.
  const Result over = qprof({"run", "-q", "-o", out, "--max-peak", "100MiB", "--", workload("markers")});
  EXPECT_EQ(over.status, 3);
  EXPECT_NE(joined(over.err).find("qprof: memory budget exceeded: peak footprint ("), std::string::npos) << over.err;
  EXPECT_NE(joined(over.err).find("exceeds the budget of 100.0 MiB by "), std::string::npos) << over.err;
  // Σ RSS is sampled every 10 ms: its peak's moment names the stage.
  const Result over_rss =
      qprof({"run", "-q", "-o", out, "--max-peak", "100MiB", "--metric", "rss", "--", workload("markers")});
  EXPECT_EQ(over_rss.status, 3);
  EXPECT_NE(joined(over_rss.err).find("qprof: memory budget exceeded: peak RSS "), std::string::npos) << over_rss.err;
  EXPECT_NE(joined(over_rss.err).find("in stage 'Calibration'"), std::string::npos) << over_rss.err;
  const Result under = qprof({"run", "-q", "-o", out, "--max-peak", "200MB", "--", workload("markers")});
  EXPECT_EQ(under.status, 0) << under.err;
  EXPECT_EQ(joined(under.err).find("budget"), std::string::npos) << "quiet: " << under.err;
  EXPECT_EQ(qprof({"run", "-q", "-o", out, "--max-peak", "1KiB", "--", workload("exit_with"), "7"}).status, 7);
  // A metric the trace cannot have (no cgroup) is an error, not a pass, and said before the run.
  const Result cgroup =
      qprof({"run", "-q", "-o", out, "--cgroup", "off", "--metric", "cgroup", "--max-peak", "1GiB", "--", "true"});
  EXPECT_EQ(cgroup.status, 2);
  EXPECT_NE(joined(cgroup.err).find("--metric cgroup: --cgroup off records no cgroup charge"), std::string::npos)
      << cgroup.err;
  // A trace without the budget's metric, read after the run: what it has is listed.
  const Result missing = qprof({"report", "--metric", "cgroup", data_file("mprof/func.dat")});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(joined(missing.err).find("has no cgroup (it has: rss"), std::string::npos) << missing.err;
}

TEST(RunBudget, PssBudgetSeesThroughCopyOnWrite) {
  // 200 MiB shared by four processes: Σ RSS ≈ 800 MiB, PSS ≈ 200 MiB; --metric pss records it.
  const std::string out = temp_dir() + "/budget_pss.dat";
  const std::vector<std::string> job{"--", workload("cow_tree"), "200", "3", "600"};
  std::vector<std::string> rss{"run", "-q", "-o", out, "--max-peak", "300MiB", "--metric", "rss"};
  rss.insert(rss.end(), job.begin(), job.end());
  EXPECT_EQ(qprof(rss).status, 3);
  std::vector<std::string> pss{"run", "-q", "-o", out, "--metric", "pss", "--max-peak", "300MiB"};
  pss.insert(pss.end(), job.begin(), job.end());
  const Result r = qprof(pss);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(trace::read_trace(out).pss.empty());
}

TEST(RunBudget, BadSizesAndBadYamlPathsStopBeforeTheRun) {
  const std::string flag = temp_dir() + "/budget_ran";
  for (const std::vector<std::string>& bad : {
           std::vector<std::string>{"--max-peak", "4gb"},
           {"--max-peak", "four"},
           {"--max-peak", ""},
           {"--metric", "vram"},
           {"--yaml", temp_dir() + "/no/such/dir/x.yaml"},
           {"--yaml-stream"},
       }) {
    std::vector<std::string> args{"run", "-q", "-o", temp_dir() + "/bad.dat"};
    args.insert(args.end(), bad.begin(), bad.end());
    args.insert(args.end(), {"--", "touch", flag});
    EXPECT_EQ(qprof(args).status, 2) << bad[0];
  }
  EXPECT_FALSE(fs::exists(flag));
}

// Waits for `path` to hold text that `ok` accepts (a loaded machine is slow).
std::string wait_for(const std::string& path, const std::function<bool(const std::string&)>& ok) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string text;
  while (std::chrono::steady_clock::now() < deadline) {
    text = read_file(path);
    if (ok(text)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return text;
}

TEST(RunYamlStream, TheFileIsCurrentWhileTheJobRuns) {
  const std::string dir = temp_dir() + "/stream";
  fs::create_directories(dir);
  const std::string yaml = dir + "/live.yaml", go = dir + "/go";
  // The job marks a stage start, then waits for the test to have read the YAML.
  const std::string job = "echo 'QPROF_MARK: Calibration Start' >&2; while [ ! -e " + go +
                          " ]; do sleep 0.02; done; echo 'QPROF_MARK: Calibration End' >&2";
  Process p(
      {qprof_bin(), "run", "-q", "-o", dir + "/live.dat", "--yaml", yaml, "--yaml-stream", "--", "sh", "-c", job});
  const std::string live =
      wait_for(yaml, [](const std::string& t) { return t.find("Calibration Start") != std::string::npos; });
  std::ofstream(go).put('x');
  const Result r = p.wait();
  ASSERT_EQ(r.status, 0) << r.err;

  const YAML::Node y = YAML::Load(live);
  ASSERT_TRUE(y["qprof"]["in_progress"].as<bool>()) << live;
  const YAML::Node records = y["memory_usage"];
  ASSERT_EQ(records.size(), 2u) << live;  // Start and the checkpoint; no End yet
  EXPECT_EQ(records[1]["step"].as<std::string>(), "Calibration Start");
  EXPECT_FALSE(y["qprof"]["stages"][0]["closed"].as<bool>());
  EXPECT_FALSE(y["qprof"]["exit"]);

  const YAML::Node done = YAML::LoadFile(yaml);
  EXPECT_FALSE(done["qprof"]["in_progress"].as<bool>());
  EXPECT_EQ(done["memory_usage"].size(), 4u);
  EXPECT_EQ(done["memory_usage"][3]["step"].as<std::string>(), "End");
  // Only the YAML and the trace are left: every rewrite replaced the file whole.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"go", "live.dat", "live.yaml"}));
}

// report --format yaml was refused; it is --yaml -: the same Quark-layout YAML on stdout.
TEST(ReportYaml, FormatYamlIsTheYamlOfYamlDash) {
  const std::string q = fixture("quark.dat");
  const Result dash = qprof({"report", "--yaml", "-", q});
  ASSERT_EQ(dash.status, 0) << dash.err;
  const Result format = qprof({"report", "--format", "yaml", q});
  ASSERT_EQ(format.status, 0) << format.err;
  EXPECT_EQ(format.out, dash.out);
  EXPECT_NE(format.out.find("memory_usage:"), std::string::npos);
  const Result bad = qprof({"report", "--format", "yml", q});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(joined(bad.err).find("text, md, csv, json, yaml"), std::string::npos) << bad.err;
  EXPECT_EQ(qprof({"report", "--sum", "--format", "yaml", q, q}).status, 2);
}

}  // namespace
}  // namespace qprof::test
