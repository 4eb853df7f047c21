// SPDX-License-Identifier: Apache-2.0
// qprof export: the Chrome trace, CSV and JSON read back and checked against the trace itself.
// Every export runs under an address-space limit: it streams, so a regression that holds the
// whole trace (or loops) fails instead of eating the machine.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/trace/stages.hpp"

namespace qprof::test {
using trace::ChildSeries;
using trace::GpuDevice;
using trace::GpuUtilSample;
using trace::Marker;
using trace::stage_start_name;
using trace::StageTracker;
using trace::Trace;
using trace::TraceMeta;

namespace {

namespace fs = std::filesystem;

Result bounded_qprof(std::vector<std::string> args) {
  std::vector<std::string> argv = {"prlimit", as_limit("1073741824"), "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", 60);
}

std::string full() { return data_file("plot/full.dat"); }

// A qprof trace of `body` (its lines after the header), started at Unix time `start`, in the test's
// directory as `name`.
std::string synthetic_trace(const std::string& name, const std::string& start, const std::string& body) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path) << "QPROF 1 version=0.1.0 interval=0.010000 host=h root_pid=1 start=" << start << " metric=all\n"
                      << body;
  return path;
}

// Markers that are checkpoints: not the start or the end of a stage.
std::size_t checkpoints(const Trace& t) {
  std::size_t n = 0;
  StageTracker stages;
  for (const Marker& m : t.markers) {
    if (!stages.on_marker(m.label, m.t, 0) && !stage_start_name(m.label)) ++n;
  }
  return n;
}

TEST(Export, ChromeTraceHoldsEverySampleStageAndCheckpoint) {
  const Trace t = trace::read_trace(full());
  const Result r = bounded_qprof({"export", full(), "--format", "perfetto", "--unit", "B"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, std::vector<double>> counters;
  std::size_t complete = 0, instant = 0;
  std::vector<std::string> stage_names;
  for (const auto& e : j["traceEvents"]) {
    EXPECT_EQ(e["pid"], 1);
    const std::string ph = e["ph"];
    if (ph == "C") {
      ASSERT_EQ(e["args"].size(), 1u) << e;  // one value per counter event: one track each
      const std::string name = e["name"];
      if (name.starts_with("RSS") || name == "PSS" || name == "USS") {
        EXPECT_TRUE(e["args"].contains("B")) << e;
      }
      counters[name].push_back(e["args"].begin().value().get<double>());
    }
    if (ph == "X") {
      ++complete;
      stage_names.push_back(e["name"]);
    }
    if (ph == "i" && e["s"] == "t") ++instant;
    if (ph == "M" && e["name"] == "process_name") {
      EXPECT_EQ(e["args"]["name"], "full");
    }
  }
  ASSERT_EQ(counters["RSS"].size(), t.mem.size());
  for (std::size_t i = 0; i < t.mem.size(); ++i)
    EXPECT_EQ(counters["RSS"][i], static_cast<double>(t.mem[i].bytes)) << i;
  ASSERT_EQ(counters["PSS"].size(), t.pss.size());
  EXPECT_EQ(counters["PSS"].back(), static_cast<double>(t.pss.back().pss));
  for (const ChildSeries& c : t.children) {
    EXPECT_EQ(counters["RSS pid " + std::to_string(c.pid)].size(), c.samples.size()) << c.pid;
  }
  EXPECT_EQ(complete, t.stages.size());
  ASSERT_GT(checkpoints(t), 0u);
  EXPECT_EQ(instant, checkpoints(t));
  EXPECT_EQ(j["metadata"]["traces"][0]["command"], t.cmdline);
  // Times: microseconds from the start; the last RSS sample where the trace has it.
  double last_ts = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "C" && e["name"] == "RSS") last_ts = e["ts"];
  }
  EXPECT_NEAR(last_ts, (t.mem.back().t - t.t0()) * 1e6, 1.0);
}

// GPU busy time (GPUUTIL) is exported under its name: the device's busy % (NVML's
// utilization.gpu, copies included), and in the Chrome trace the tree's share beside it.
TEST(Export, GpuBusyTimeIsExportedAsBusyPercent) {
  const std::string path = temp_dir() + "/busy.dat";
  {
    trace::Writer w(path);
    TraceMeta meta;
    meta.qprof_version = "test";
    meta.start = 1000.0;
    w.header(meta);
    w.gpu_device(GpuDevice{0, "GPU-1", "NVIDIA H200", 1u << 30});
    w.mem(1000.0, 1 << 20);
    w.gpu_util(GpuUtilSample{1000.0, 0, 64, 20, 40.0, std::nullopt, std::nullopt});
    w.mem(1000.1, 1 << 20);
  }
  const std::string out = temp_dir() + "/busy.csv";
  Result r = bounded_qprof({"export", path, "--format", "csv", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream csv(out);
  std::string header, first, second;
  std::getline(csv, header);
  std::getline(csv, first);
  std::getline(csv, second);
  EXPECT_EQ(header, "time_s,rss_mib,gpu0_mib,gpu0_busy_percent");
  EXPECT_EQ(first, "0,1,,64") << "the GPUUTIL line of the first sample's time is in its row";
  EXPECT_EQ(second, "0.1,1,,64");
  r = bounded_qprof({"export", path, "--format", "perfetto"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::map<std::string, double> counters;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "C") counters[e["name"]] = e["args"].begin().value().get<double>();
  }
  EXPECT_EQ(counters["GPU0 busy"], 64);
  EXPECT_EQ(counters["GPU0 busy, the tree's share"], 40);
  EXPECT_EQ(counters["GPU0 memory bandwidth busy"], 20);
}

TEST(Export, SeveralTracesAreOneProcessEach) {
  const std::string mprof = data_file("mprof/func.dat");
  const Result r = bounded_qprof({"export", full(), mprof, "--label", "rank0,rank1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<int, std::string> names;
  std::map<int, std::size_t> rss;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") names[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "C" && e["name"] == "RSS") ++rss[e["pid"]];
  }
  EXPECT_EQ(names, (std::map<int, std::string>{{1, "rank0"}, {2, "rank1"}}));
  EXPECT_EQ(rss[1], trace::read_trace(full()).mem.size());
  EXPECT_EQ(rss[2], trace::read_trace(mprof).mem.size());
}

// Files of one name from two folders go by their paths, as in plot's key and compare's rows; one
// file given twice is told apart by its place. The same names in all three formats.
TEST(Export, FilesOfOneNameAreToldApart) {
  const std::string dir = fresh_dir("export_names");
  fs::create_directories(dir + "/d1");
  fs::create_directories(dir + "/d2");
  fs::copy_file(full(), dir + "/d1/x.dat");
  fs::copy_file(data_file("mprof/func.dat"), dir + "/d2/x.dat");
  const std::vector<std::string> two_folders = {dir + "/d1/x.dat", dir + "/d2/x.dat"};
  const std::vector<std::string> one_twice = {dir + "/d1/x.dat", dir + "/d1/x.dat"};
  const auto names_of = [](const std::vector<std::string>& files, const std::string& format) {
    std::vector<std::string> args = {"export", "--format", format};
    args.insert(args.end(), files.begin(), files.end());
    const Result r = bounded_qprof(args);
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<std::string> names;
    if (format == "csv") {
      std::istringstream lines(r.out);
      std::string line;
      std::getline(lines, line);  // the header
      while (std::getline(lines, line)) {
        std::string name = line.substr(0, line.find(','));
        if (names.empty() || names.back() != name) names.push_back(name);
      }
      return names;
    }
    const auto j = nlohmann::json::parse(r.out);
    if (format == "json") {
      for (const auto& t : j["traces"]) names.push_back(t["label"]);
      return names;
    }
    std::map<int, std::string> by_pid;
    for (const auto& e : j["traceEvents"])
      if (e["ph"] == "M" && e["name"] == "process_name") by_pid[e["pid"]] = e["args"]["name"];
    for (const auto& [pid, name] : by_pid) names.push_back(name);
    EXPECT_EQ(j["metadata"]["traces"][0]["label"], names.front());
    return names;
  };
  for (const std::string format : {"chrome", "csv", "json"}) {
    SCOPED_TRACE(format);
    EXPECT_EQ(names_of(two_folders, format), (std::vector<std::string>{dir + "/d1/x", dir + "/d2/x"}));
    EXPECT_EQ(names_of(one_twice, format), (std::vector<std::string>{"x #1", "x #2"}));
  }
}

// CSV parsed by Python's csv module: one row per memory sample, units in the header.
TEST(Export, CsvHasOneRowPerSampleAndOneColumnPerSeries) {
  const Trace t = trace::read_trace(full());
  const std::string out = temp_dir() + "/full.csv";
  const Result r = bounded_qprof({"export", full(), "--format", "csv", "--unit", "B", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  const Result py = run({debian_python(), "-c",
                         "import csv,sys\n"
                         "rows=list(csv.DictReader(open(sys.argv[1])))\n"
                         "print(len(rows)); print(','.join(rows[0].keys()))\n"
                         "print(max(float(r['rss_bytes']) for r in rows))\n"
                         "print(sum(1 for r in rows if r['child_4242_bytes']))\n",
                         out});
  ASSERT_EQ(py.status, 0) << py.err;
  std::istringstream lines(py.out);
  std::string count, header, peak, child_rows;
  std::getline(lines, count);
  std::getline(lines, header);
  std::getline(lines, peak);
  std::getline(lines, child_rows);
  EXPECT_EQ(std::stoul(count), t.mem.size());
  EXPECT_TRUE(
      header.starts_with("time_s,rss_bytes,pss_bytes,uss_bytes,cgroup_bytes,gpu0_bytes,gpu1_bytes,cpu_percent,"))
      << header;
  EXPECT_NE(header.find("child_4242_bytes"), std::string::npos) << header;
  EXPECT_EQ(std::stod(peak), static_cast<double>(max_mem(t)));
  for (const ChildSeries& c : t.children) {
    if (c.pid == 4242) {
      EXPECT_EQ(std::stoul(child_rows), c.samples.size());
    }
  }
}

TEST(Export, JsonIsTheTableAsArrays) {
  const Trace t = trace::read_trace(full());
  const Result csv = bounded_qprof({"export", full(), "--format", "csv"});
  const Result r = bounded_qprof({"export", full(), "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::string names;
  for (const auto& c : j["columns"]) names += (names.empty() ? "" : ",") + c["name"].get<std::string>();
  EXPECT_EQ(names, csv.out.substr(0, csv.out.find('\n')));
  EXPECT_EQ(j["columns"][1]["unit"], "MiB");
  const auto& rows = j["traces"][0]["rows"];
  ASSERT_EQ(rows.size(), t.mem.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_DOUBLE_EQ(rows[i][1].get<double>(), mib(t.mem[i].bytes)) << i;
    EXPECT_NEAR(rows[i][0].get<double>(), t.mem[i].t - t.t0(), 1e-6);
  }
  // The first PSS reading is of the first sample's time, written after it: in its row.
  ASSERT_FALSE(t.pss.empty());
  EXPECT_DOUBLE_EQ(rows[0][2].get<double>(), mib(t.pss.front().pss))
      << "the first PSS reading is of the first row's time";
}

// A row is its sample with every slower series' latest value at its time: the cgroup's line of its
// own sample follows its MEM line (the rows had carried the sample before's), and a PSS reading
// written at the next stats pass, after the samples taken meanwhile, still counts in them.
TEST(Export, ARowHoldsItsOwnSamplesSeriesAndReadingsWrittenAfterIt) {
  const std::string path = synthetic_trace("late.dat", "100",
                                           "MEM 10.000000 100.0000\nCGROUP 100.000012 10485760 10485760\n"
                                           "MEM 20.000000 100.0100\nCGROUP 100.010012 20971520 20971520\n"
                                           "MEM 30.000000 100.0200\nCGROUP 100.020030 31457280 31457280\n"
                                           "PSS 100.005000 15728640 14680064\nPSS 100.015000 26214400 25165824\n"
                                           "MEM 40.000000 100.0300\nCGROUP 100.030004 41943040 41943040\n"
                                           "EXIT 100.040000 status=0\n");
  const Result r = bounded_qprof({"export", path, "--format", "csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "time_s,rss_mib,pss_mib,uss_mib,cgroup_mib\n"
            "0,10,,,10\n"
            "0.01,20,15,14,20\n"
            "0.02,30,25,24,30\n"
            "0.03,40,25,24,40\n");
}

// The same over a real run, every row checked against the trace's own lines: the latest of each
// series at or before the row's time (its own sample's within the 0.1 ms the MEM time is rounded to).
TEST(Export, EveryRowOfARealRunMatchesTheTraceAtItsTime) {
  const std::string path = temp_dir() + "/grow.dat";
  const Result rec = run({qprof_bin(), "run", "-q", "-o", path, "--", workload("alloc_tree"), "60", "1", "40", "300"});
  ASSERT_EQ(rec.status, 0) << rec.err;
  const Result r = bounded_qprof({"export", path, "--format", "csv", "--unit", "B", "-o", path + ".csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Result py = run({debian_python(), "-c",
                         "import csv,sys\n"
                         "start=None; cols={'cgroup_bytes':'CGROUP','pss_bytes':'PSS','anon_bytes':'KINDS'}\n"
                         "seen={k:[] for k in cols}\n"
                         "for ln in open(sys.argv[1]):\n"
                         "  p=ln.split()\n"
                         "  if p and p[0]=='QPROF': start=float([x for x in p if x.startswith('start=')][0][6:])\n"
                         "  for k,kind in cols.items():\n"
                         "    if p and p[0]==kind: seen[k].append((float(p[1])-start,int(p[2])))\n"
                         "rows=list(csv.DictReader(open(sys.argv[2]))); bad=0; checked=0\n"
                         "for row in rows:\n"
                         "  t=float(row['time_s'])\n"
                         "  for k in cols:\n"
                         "    if k not in row: continue\n"
                         "    v=[b for ts,b in sorted(seen[k],key=lambda x:x[0]) if ts<=t+1e-4]\n"
                         "    got=int(float(row[k])) if row[k] else None\n"
                         "    checked+=1; bad+=(v[-1] if v else None)!=got\n"
                         "print(len(rows), checked, bad)\n",
                         path, path + ".csv"});
  ASSERT_EQ(py.status, 0) << py.err;
  std::istringstream figures(py.out);
  std::size_t rows = 0, checked = 0, bad = 1;
  figures >> rows >> checked >> bad;
  EXPECT_GT(rows, 10u) << py.out;
  EXPECT_GT(checked, rows) << py.out;
  EXPECT_EQ(bad, 0u) << py.out;
}

// Stages that overlap without nesting (A starts, B starts, A ends, B ends) cannot share a thread:
// the trace-event format needs one thread's slices nested, and Perfetto drops or cuts the others.
// B goes on a thread of its own; a stage inside another stays on the other's thread.
TEST(Export, OverlappingStagesTakeThreadsOfTheirOwn) {
  const std::string path = synthetic_trace("overlap.dat", "100",
                                           "MEM 1.0 100.0000\nMARK 100.100000 A Start\nMARK 100.200000 Inner Start\n"
                                           "MARK 100.250000 Inner End\nMARK 100.300000 B Start\nMEM 2.0 100.4000\n"
                                           "MARK 100.600000 A End\nMARK 100.900000 B End\nMARK 100.950000 C Start\n"
                                           "MARK 100.970000 C End\nMEM 1.0 101.0000\nEXIT 101.000000 status=0\n");
  const Result r = bounded_qprof({"export", path});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, std::pair<int, std::pair<double, double>>> slices;  // name → tid, [ts, ts + dur]
  std::map<int, std::string> threads;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X")
      slices[e["name"]] = {e["tid"], {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()}};
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[e["tid"]] = e["args"]["name"];
  }
  ASSERT_EQ(slices.size(), 4u) << r.out;
  EXPECT_EQ(slices["A"].first, 1);
  EXPECT_EQ(slices["Inner"].first, 1) << "inside A: on A's thread";
  EXPECT_EQ(slices["B"].first, 2);
  EXPECT_EQ(slices["C"].first, 1) << "after A: the first thread again";
  EXPECT_EQ(threads[2], "stages 2");
  // On each thread, any two slices nest or are apart.
  for (const auto& [a, sa] : slices) {
    for (const auto& [b, sb] : slices) {
      if (a >= b || sa.first != sb.first) continue;
      const auto [s1, e1] = sa.second;
      const auto [s2, e2] = sb.second;
      EXPECT_TRUE(e1 <= s2 || e2 <= s1 || (s1 <= s2 && e2 <= e1) || (s2 <= s1 && e1 <= e2)) << a << " and " << b;
    }
  }
}

// CSV and JSON read a trace twice (its columns, then its rows): from a pipe they wrote the header
// alone and said nothing, from a FIFO they waited for ever. Such a trace is copied first, and the
// export is the same as the file's.
TEST(Export, ATraceFromAPipeOrAFifoIsExportedWhole) {
  const std::string file = full();
  const Result from_file = bounded_qprof({"export", file, "--format", "csv"});
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  const Result from_pipe =
      run({"prlimit", as_limit("1073741824"), "--", qprof_bin(), "export", "/dev/stdin", "--format", "csv"},
          read_file(file), 60);
  ASSERT_EQ(from_pipe.status, 0) << from_pipe.err;
  EXPECT_EQ(from_pipe.out, from_file.out);
  const std::string fifo = temp_dir() + "/trace.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The writer waits for qprof to open the FIFO, at most 30 s: a qprof that failed first must not
  // hang the test.
  std::thread writer([&] {
    for (int i = 0; i < 3000; ++i) {
      const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      ::fcntl(fd, F_SETFL, 0);
      const std::string text = read_file(file);
      for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      ::close(fd);
      return;
    }
  });
  const Result from_fifo = bounded_qprof({"export", fifo, "--format", "json"});
  writer.join();
  ASSERT_EQ(from_fifo.status, 0) << from_fifo.err;
  const auto j = nlohmann::json::parse(from_fifo.out);
  EXPECT_EQ(j["traces"][0]["rows"].size(), trace::read_trace(file).mem.size());
  EXPECT_EQ(j["traces"][0]["file"], fifo);
  // A bad line is named by the trace as given.
  const Result bad = run({qprof_bin(), "export", "/dev/stdin", "--format", "csv"}, "MEM x 1\n", 60);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("/dev/stdin:1:"), std::string::npos) << bad.err;
}

// The same whatever order the stages come in: mprof's FUNC lines of several processes, flushed at
// their exits, are not in end order (B 0.2-0.8 before A 0.0-0.5 had shared a thread); stages left
// open all end at the trace's end and nest (Inner inside Outer had taken a thread of its own).
TEST(Export, StagesInAnyOrderNestOrTakeThreadsApart) {
  const std::string order = temp_dir() + "/order.dat";
  std::ofstream(order) << "FUNC B 1.0 1000.2000 2.0 1000.8000\nFUNC A 1.0 1000.0000 2.0 1000.5000\n"
                          "CMDLINE python x.py\nMEM 1.0 1000.0000\nMEM 1.0 1001.0000\n";
  const std::string left_open =
      synthetic_trace("open.dat", "1000",
                      "MEM 1.0 1000.0000\nMARK 1000.100000 Outer Start\nMEM 1.0 1000.2000\n"
                      "MARK 1000.300000 Inner Start\nMEM 1.0 1000.4000\nEXIT 1000.500000 status=0\n");
  const auto tids = [&](const std::string& path) {
    const Result r = bounded_qprof({"export", path});
    EXPECT_EQ(r.status, 0) << r.err;
    std::map<std::string, int> out;
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& e : j["traceEvents"]) {
      if (e["ph"] == "X") out[e["name"]] = e["tid"];
    }
    EXPECT_EQ(out.size(), 2u) << r.out;
    return out;
  };
  const auto mprof = tids(order);
  EXPECT_NE(mprof.at("A"), mprof.at("B")) << "they overlap";
  const auto nested = tids(left_open);
  EXPECT_EQ(nested.at("Outer (never ended)"), nested.at("Inner (never ended)")) << "they nest";
}

// mprof's FUNC lines wait for the trace's start (the first sample) held in memory: their names at
// most 16 MiB together, so 160 lines of 1 MB before the first sample export within 128 MiB.
TEST(Export, FunctionLinesBeforeTheFirstSampleAreHeldWithinABound) {
  const std::string path = temp_dir() + "/early.dat";
  {
    std::ofstream out(path);
    const std::string name(1000000, 'f');
    for (int i = 0; i < 160; ++i) {
      char times[64];
      std::snprintf(times, sizeof times, " 1.0 1000.%04d 2.0 1000.%04d\n", i, i + 1);
      out << "FUNC " << name << i << times;
    }
    out << "CMDLINE x\nMEM 1.0 1000.0000\nMEM 1.0 1001.0000\n";
  }
  const Result r =
      run({"prlimit", as_limit("134217728"), "--", qprof_bin(), "export", path, "-o", "/dev/null"}, "", 60);
  EXPECT_EQ(r.status, 0) << r.err;
  std::filesystem::remove(path);
}

TEST(Export, HostileLabelsStayData) {
  // A label given with --label holds no comma (that separates labels); a file name can.
  const std::string label = "a \"b\"\n\x01 {\"ph\":\"X\"}\\";
  const Result j = bounded_qprof({"export", full(), "--label", label});
  ASSERT_EQ(j.status, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["metadata"]["traces"][0]["label"], label);
  std::size_t named = 0;
  for (const auto& e : doc["traceEvents"])
    named += e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == label;
  EXPECT_EQ(named, 1u);
  const std::string dir = temp_dir() + "/hostile";
  fs::create_directories(dir);
  const std::string file = dir + "/x,\"y\".dat";
  fs::copy_file(full(), file);
  const std::string out = dir + "/two.csv";
  ASSERT_EQ(bounded_qprof({"export", file, full(), "--label", label, "--format", "csv", "-o", out}).status, 0);
  const Result py = run({debian_python(), "-c",
                         "import csv,sys\nrows=list(csv.reader(open(sys.argv[1], newline='')))\n"
                         "print(len(rows)); print(repr(rows[1][0])); print(repr(rows[-1][0]))\n",
                         out});
  ASSERT_EQ(py.status, 0) << py.err;
  std::istringstream lines(py.out);
  std::string count, first, last;
  std::getline(lines, count);
  std::getline(lines, first);
  std::getline(lines, last);
  EXPECT_EQ(count, std::to_string(2 * trace::read_trace(full()).mem.size() + 1));
  // Control characters are shown, not written raw (common/csv_cell.hpp): Python reads "\\n".
  EXPECT_EQ(first, "'a \"b\"\\\\n\\\\x01 {\"ph\":\"X\"}\\\\'") << py.out;
  EXPECT_EQ(last, "'full'");
  // The file name with a comma and quotes, as the default label of a second export.
  const Result named_csv = bounded_qprof({"export", file, full(), "--format", "csv"});
  EXPECT_NE(named_csv.out.find("\n\"x,\"\"y\"\"\",0,"), std::string::npos) << named_csv.out.substr(0, 300);
}

TEST(Export, BadTraceIsFileLineAndNoOutput) {
  const std::string out = temp_dir() + "/bad.json";
  const Result r = bounded_qprof({"export", data_file("plot/malformed.dat"), "-o", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(joined(r.err).find("malformed.dat:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(temp_dir()))
    EXPECT_EQ(e.path().string().find("bad.json"), std::string::npos);
  EXPECT_EQ(bounded_qprof({"export", full(), "--format", "xml"}).status, 2);
  EXPECT_EQ(bounded_qprof({"export"}).status, 2);
  // An empty file is no trace, in every format, as plot and compare say.
  const std::string empty = temp_dir() + "/empty.dat";
  write_file(empty, "");
  for (const char* format : {"perfetto", "csv", "json"}) {
    const Result e = bounded_qprof({"export", "--format", format, empty});
    EXPECT_EQ(e.status, 2) << format;
    EXPECT_NE(joined(e.err).find("empty.dat: no memory samples (MEM lines): the trace is empty"), std::string::npos)
        << e.err;
    EXPECT_EQ(e.out, "") << format;
  }
}

// A failed write of stdout is qprof's own error, as a failed write of -o is: status 2, said.
TEST(Export, StdoutThatCannotBeWrittenIsStatusTwo) {
  for (const char* format : {"perfetto", "csv"}) {
    const Result r =
        run({"sh", "-c", "exec \"$0\" export --format \"$1\" \"$2\" > /dev/full", qprof_bin(), format, full()});
    EXPECT_EQ(r.status, 2) << format << ": " << r.err;
    EXPECT_TRUE(r.err.starts_with("qprof export: cannot write stdout: No space left on device"))
        << format << ": " << r.err;
  }
}

}  // namespace
}  // namespace qprof::test
