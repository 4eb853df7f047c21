// SPDX-License-Identifier: Apache-2.0
// The footprint of a job started through wrappers that exec (sh -c 'exec …', a pyenv-style shim,
// env, an exec of an exec, a worker that execs): Σ PSS must follow each process through its exec.
// Run as an ordinary user (no cgroup: the footprint is Σ PSS) and as root with --cgroup off.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "e2e_util.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

// alloc_tree touches this much in its one process and holds it; it shares none of it.
constexpr double kHeldMiB = 100;

enum class As { nobody, root_without_cgroup };

// A directory the other user may write, with copies of qprof and the workload it may run.
struct OtherUserFiles {
  std::string dir, qprof, alloc;
};

const OtherUserFiles& other_user_files() {
  static const OtherUserFiles files = [] {
    OtherUserFiles f{"", copy_for_other_users(qprof_bin()), copy_for_other_users(workload("alloc_tree"))};
    f.dir = std::filesystem::path(f.qprof).parent_path().string();
    return f;
  }();
  return files;
}

// A script that execs what it is given, as pyenv's and conda's shims do.
std::string shim(const std::string& dir) {
  const std::string path = dir + "/shim";
  std::ofstream(path) << "#!/bin/sh\n# a shim: finds the real program, then becomes it\nexec \"$@\"\n";
  std::filesystem::permissions(
      path, std::filesystem::perms::all & ~std::filesystem::perms::others_write & ~std::filesystem::perms::group_write);
  return path;
}

struct Recorded {
  Result result;
  trace::Trace trace;
};

Recorded record(As as, const std::string& name, const std::vector<std::string>& job) {
  const OtherUserFiles& f = other_user_files();
  const std::string out = f.dir + "/" + name + (as == As::nobody ? "_nobody" : "_root") + ".dat";
  std::vector<std::string> argv;
  if (as == As::nobody) {
    argv = {"runuser", "-u", "nobody", "--", f.qprof, "run", "-o", out, "--"};
  } else {
    argv = {qprof_bin(), "run", "--cgroup", "off", "-o", out, "--"};
  }
  argv.insert(argv.end(), job.begin(), job.end());
  Recorded r{run(argv), {}};
  EXPECT_EQ(r.result.status, 0) << r.result.err;
  r.trace = trace::read_trace(out);
  return r;
}

void expect_footprint_of_what_the_job_holds(As as, const std::string& name, const std::vector<std::string>& job) {
  if (as == As::nobody && geteuid() != 0) GTEST_SKIP() << "switching to the user nobody needs root";
  const Recorded r = record(as, name, job);
  const auto f = trace::footprint_of(r.trace);
  ASSERT_TRUE(f) << r.result.err;
  EXPECT_EQ(f->basis, trace::Footprint::Basis::pss) << "no cgroup on this path";
  // What it holds, plus the wrappers' and the process's own pages (each a few MiB at most).
  EXPECT_GE(mib(f->peak), kHeldMiB) << r.result.err;
  EXPECT_LE(mib(f->peak), kHeldMiB * 1.05) << r.result.err;
  EXPECT_EQ(unwrapped(r.result.err).find("below the largest process"), std::string::npos) << r.result.err;
}

// alloc_tree PARENT_MIB 0 0 HOLD_MS: one process holding kHeldMiB for 1.5 s.
std::vector<std::string> holder(const std::string& alloc) { return {alloc, "100", "0", "0", "1500"}; }

class FootprintAcrossExec : public ::testing::TestWithParam<As> {};

TEST_P(FootprintAcrossExec, ShellThatExecs) {
  const auto& f = other_user_files();
  expect_footprint_of_what_the_job_holds(GetParam(), "sh_exec",
                                         {"sh", "-c", "sleep 0.2; exec " + f.alloc + " 100 0 0 1500"});
}

TEST_P(FootprintAcrossExec, ShimScript) {
  const auto& f = other_user_files();
  std::vector<std::string> job{shim(f.dir)};
  for (const auto& a : holder(f.alloc)) job.push_back(a);
  expect_footprint_of_what_the_job_holds(GetParam(), "shim", job);
}

TEST_P(FootprintAcrossExec, Env) {
  const auto& f = other_user_files();
  std::vector<std::string> job{"env", "QPROF_TEST=1"};
  for (const auto& a : holder(f.alloc)) job.push_back(a);
  expect_footprint_of_what_the_job_holds(GetParam(), "env", job);
}

TEST_P(FootprintAcrossExec, ExecOfAnExec) {
  const auto& f = other_user_files();
  expect_footprint_of_what_the_job_holds(
      GetParam(), "double_exec", {"sh", "-c", "sleep 0.1; exec sh -c 'sleep 0.2; exec " + f.alloc + " 100 0 0 1500'"});
}

TEST_P(FootprintAcrossExec, WorkerThatExecs) {
  // A Python parent forks a worker that becomes the holder through os.execv; the parent waits.
  const auto& f = other_user_files();
  const std::string script =
      "import os, time\n"
      "pid = os.fork()\n"
      "if pid == 0:\n"
      "    time.sleep(0.2)\n"
      "    os.execv('" +
      f.alloc +
      "', ['alloc_tree', '100', '0', '0', '1500'])\n"
      "os.waitpid(pid, 0)\n";
  if (GetParam() == As::nobody && geteuid() != 0) GTEST_SKIP() << "switching to the user nobody needs root";
  const Recorded r = record(GetParam(), "worker_exec", {debian_python(), "-c", script});
  const auto fp = trace::footprint_of(r.trace);
  ASSERT_TRUE(fp) << r.result.err;
  // The Python parent holds its interpreter (≈ 10 MiB) beside the worker's 100 MiB.
  EXPECT_GE(mib(fp->peak), kHeldMiB) << r.result.err;
  EXPECT_LE(mib(fp->peak), kHeldMiB * 1.05 + 16) << r.result.err;
}

INSTANTIATE_TEST_SUITE_P(Both, FootprintAcrossExec, ::testing::Values(As::nobody, As::root_without_cgroup),
                         [](const auto& info) { return info.param == As::nobody ? "Nobody" : "RootCgroupOff"; });

}  // namespace
}  // namespace qprof::test
