// SPDX-License-Identifier: Apache-2.0
// The limits a job is started in stay its limits: a closed stderr, a descriptor limit, absurd
// option values, a memory cgroup around qprof. Every qprof here runs inside an address-space
// limit and a timeout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "e2e_util.hpp"
#include "../support/own_cgroup.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

namespace fs = std::filesystem;

const std::string kBound = "timeout -s KILL 120 prlimit " + as_limit("1073741824") + " ";

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(RunLimits, WithStderrClosedTheJobCannotWriteIntoTheTrace) {
  const std::string out = temp_dir() + "/closed_stderr.dat";
  const std::string job = "echo 'MEM 99999.000000 1.0000' >&2; echo 'MARK 1.0 forged' >&2; sleep 0.3";
  const Result r = run({"sh", "-c", kBound + qprof_bin() + " run -o " + out + " -- sh -c \"" + job + "\" 2>&-"});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string text = read_file(out);
  // The CMDLINE line quotes the job; no line of the trace is the job's.
  EXPECT_FALSE(contains(text, "\nMEM 99999")) << text;
  EXPECT_FALSE(contains(text, "\nMARK 1.0 forged")) << text;
  const Trace t = trace::read_trace(out);
  EXPECT_LT(mib(max_mem(t)), 100.0);
  EXPECT_TRUE(t.markers.empty());
}

TEST(RunLimits, TheJobKeepsTheDescriptorLimitItWasGiven) {
  // Soft 256, hard as it is: qprof raises its own soft limit, the job gets 256.
  const Result r = run(
      {"sh", "-c",
       "ulimit -Sn 256 && " + kBound + qprof_bin() + " run -q -o " + temp_dir() + "/nofile.dat -- sh -c 'ulimit -Sn'"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "256\n");
}

TEST(RunLimits, ProcessesThatCannotBeReadForLackOfDescriptorsAreCountedAndSaid) {
  // 256 descriptors, soft and hard: about 60 members' files fit, the other of 401 processes do not.
  const std::string out = temp_dir() + "/emfile.dat";
  // UndefinedBehaviorSanitizer checks a vptr it has not seen yet through a pipe of its own: with
  // every descriptor taken it reports valid objects (std::thread's state, the stderr copy's guard)
  // as ones with an invalid vptr, and a suppression cannot name a type it could not read. The
  // release build runs this test.
  if (sanitized()) GTEST_SKIP() << "UBSan's vptr check needs descriptors this test takes away";
  const std::string sanitizer_env;
  const Result r = run({"sh", "-c",
                        "ulimit -n 256 && " + sanitizer_env + kBound + qprof_bin() + " run -v -o " + out + " -- " +
                            workload("alloc_tree") + " 1 400 1 1500"},
                       "", 150);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "out of file descriptors (limit 256)")) << r.err;
  EXPECT_EQ(joined(r.err).find("out of file descriptors (limit"), joined(r.err).rfind("out of file descriptors (limit"))
      << "said once";
  EXPECT_TRUE(contains(joined(r.err), "qprof:   INCOMPLETE")) << r.err;
  const Trace t = trace::read_trace(out);
  bool counted = false;
  for (const std::string& n : t.notes) {
    if (n.find("could not be read (out of file descriptors)") == std::string::npos) continue;
    counted = true;
    // How many are left unread depends on how many live at once when qprof runs out: alone,
    // 150 and more of 401 (about 60 fit into 256 descriptors); beside a parallel test suite that
    // slows the forks, as few as 23 were. Some are, never more than the tree.
    const long unread = std::stol(n);
    EXPECT_GT(unread, 0) << n;
    EXPECT_LE(unread, 401) << n;
  }
  EXPECT_TRUE(counted) << "a NOTE in the trace counts them";
  // Read back, every reader says the figures miss them; Σ VmHWM is not called a bound.
  EXPECT_GT(t.unread_processes, 0u);
  EXPECT_FALSE(t.peaks.count("hwm_sum")) << "hwm_sum_partial only";
  const Result peak = qprof({"peak", out});
  EXPECT_EQ(peak.status, 0) << peak.err;
  EXPECT_TRUE(contains(joined(peak.err), "is INCOMPLETE: its figures miss " + std::to_string(t.unread_processes)))
      << peak.err;
  const Result json = qprof({"report", "--format", "json", out});
  EXPECT_TRUE(contains(json.out, "\"unread_processes\": " + std::to_string(t.unread_processes))) << json.out;
  EXPECT_TRUE(contains(json.out, "not a bound; INCOMPLETE")) << json.out;
}

TEST(RunLimits, NanInfinitiesAndAbsurdValuesAreUsageErrors) {
  const std::string marker = temp_dir() + "/absurd_ran";
  const std::vector<std::vector<std::string>> bad = {{"-i", "nan"},
                                                     {"-i", "inf"},
                                                     {"-i", "-1"},
                                                     {"-i", "0"},
                                                     {"--timeout", "nan"},
                                                     {"--timeout", "inf"},
                                                     {"--timeout", "0"},
                                                     {"--timeout", "1e300"},
                                                     {"--kill-after", "nan"},
                                                     {"--kill-after", "-1"},
                                                     {"--pss-interval", "nan"},
                                                     {"--stats-interval", "inf"},
                                                     {"--gpu-interval", "nan"},
                                                     {"--timeout", "0.2", "--kill-after", "nan"}};
  for (const auto& opts : bad) {
    for (const std::string sub : {"run", "peak", "compare"}) {
      // `--kill-after nan` once looped for ever, growing the trace: bounded in time and memory.
      std::vector<std::string> argv{"timeout", "-s",        "KILL", "20", "prlimit", as_limit("1073741824"),
                                    "--",      qprof_bin(), sub};
      argv.insert(argv.end(), opts.begin(), opts.end());
      if (sub == "compare") {
        argv.insert(argv.end(), {"--run", "touch " + marker});
      } else {
        argv.insert(argv.end(), {"--", "touch", marker});
      }
      const Result r = run(argv);
      EXPECT_EQ(r.status, 2) << sub << " " << opts.front() << " " << opts.back() << ": " << r.err;
      EXPECT_FALSE(fs::exists(marker)) << sub << " " << opts.front() << " " << opts.back();
    }
  }
  // Large but finite values are fine.
  const Result ok = run({"timeout", "-s", "KILL", "20", qprof_bin(), "run", "-q", "-o", temp_dir() + "/ok.dat",
                         "--timeout", "1e7", "--kill-after", "0", "--", "true"});
  EXPECT_EQ(ok.status, 0) << ok.err;
}

// qprof's own cgroup v1 memory path, "" if none.
bool write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

TEST(RunLimits, AJobInsideALimitedCgroupStaysInsideWithAndWithoutCgroup) {
  if (sanitized()) {
    GTEST_SKIP() << "the sanitized qprof (ASan's shadow memory and quarantine) shares the 200 MB group with the job, "
                    "and the OOM killer may take it instead of the job";
  }
  const std::string own = test::own_v1_memory_group();
  const std::string base = "/sys/fs/cgroup/memory" + (own == "/" ? "" : own);
  const std::string limited = base + "/qprof-e2e-limit-" + std::to_string(getpid());
  if (geteuid() != 0 || own.empty() || !fs::create_directory(limited)) {
    GTEST_SKIP() << "cannot create a cgroup v1 memory group under " << base << " (needs root and cgroup v1 memory)";
  }
  // 200 MB, swap included where the kernel counts it: the job cannot escape into swap.
  ASSERT_TRUE(write_text(limited + "/memory.limit_in_bytes", "200M"));
  if (fs::exists(limited + "/memory.memsw.limit_in_bytes"))
    write_text(limited + "/memory.memsw.limit_in_bytes", "200M");
  for (const bool with_cgroup : {false, true}) {
    const std::string out = temp_dir() + (with_cgroup ? "/oom_cgroup.dat" : "/oom_plain.dat");
    // No prlimit --as here: the job inherits it and would fail to allocate rather than meet the
    // cgroup's limit, which bounds this test's memory instead.
    const std::string qprof_cmd = "timeout -s KILL 120 " + qprof_bin() + " run " +
                                  (with_cgroup ? "--cgroup on " : "--cgroup off ") + "-o " + out + " -- " +
                                  workload("spike") + " 1024 1000 0";
    const Result r = run({"sh", "-c", "echo $$ > " + limited + "/cgroup.procs && exec " + qprof_cmd}, "", 150);
    EXPECT_EQ(r.status, 128 + 9) << (with_cgroup ? "--cgroup: " : "") << r.err;
    EXPECT_TRUE(contains(joined(r.err), "was killed by SIGKILL")) << r.err;
    // The kernel counted the kill (oom_kill of the tree's group: qprof's own without --cgroup).
    EXPECT_TRUE(contains(joined(r.err), "the OOM killer killed it")) << (with_cgroup ? "--cgroup: " : "") << r.err;
    if (with_cgroup) {
      EXPECT_FALSE(contains(joined(r.err), "cannot create a cgroup")) << r.err;
      const Trace t = trace::read_trace(out);
      ASSERT_TRUE(t.meta.other.count("cgroup")) << r.err;
      EXPECT_EQ(t.meta.other.at("cgroup").rfind(limited + "/qprof-", 0), 0u) << "nested: " << t.meta.other.at("cgroup");
      EXPECT_FALSE(fs::exists(t.meta.other.at("cgroup"))) << "removed at the end";
    }
  }
  rmdir(limited.c_str());
}

}  // namespace
}  // namespace qprof::test
