// SPDX-License-Identifier: Apache-2.0
// The upper bound (Σ VmHWM) of a job whose first process reaps its children: a `sh -c` wrapper
// around a Python that touches 100 MiB, and a Python that touches 50 MiB, forks a child that
// touches 80 MiB more, and waits for it. wait4's ru_maxrss of such a process is the larger of its
// own peak and its reaped children's: the bound counts the largest child once, not twice. On
// both privilege paths: root without a cgroup, and an ordinary user in a directory it may not
// write.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

constexpr Bytes kMiB = 1 << 20;
// MEM lines hold MiB with 6 decimals: the sampled Σ RSS read back may be a byte above the truth.
constexpr Bytes kMemRounding = 1024;

enum class Path { root, nobody };

trace::Trace record(Path path, const std::vector<std::string>& job, const std::string& name) {
  std::vector<std::string> argv;
  std::string dir = temp_dir();
  if (path == Path::nobody) {
    dir = std::filesystem::path(copy_for_other_users(qprof_bin())).parent_path().string();
    // From / (not writable by nobody): qprof writes only where -o says.
    argv = {"runuser", "-u", "nobody", "--", "env", "-C", "/", dir + "/qprof", "run"};
  } else {
    argv = {qprof_bin(), "run", "--cgroup", "off"};
  }
  const std::string out = dir + "/" + name + ".dat";
  for (const std::string& a : {std::string("-q"), std::string("-o"), out, std::string("--")}) argv.push_back(a);
  argv.insert(argv.end(), job.begin(), job.end());
  const Result r = run(argv);
  EXPECT_EQ(r.status, 0) << r.err;
  return trace::read_trace(out);
}

const char* const kTouch =
    "import os, sys, time\n"
    "def touch(n):\n"
    "    b = bytearray(n << 20)\n"
    "    for i in range(0, len(b), 4096): b[i] = 1\n"
    "    return b\n";

void expect_wrapper_counted_once(Path path) {
  if (path == Path::nobody && geteuid() != 0) GTEST_SKIP() << "runuser needs root";
  // As bounds_test: an AddressSanitizer qprof is larger at the fork than these jobs grow, and the
  // command's wait4 figure counts its pre-exec copy of qprof, so the bounds of its figure are left out.
  if (sanitized()) GTEST_SKIP() << "the kernel's single-process figure is undefined under an AddressSanitizer qprof";
  const std::string python = std::string(kTouch) + "b = touch(100)\ntime.sleep(0.3)\n";
  const std::string script = debian_python() + " -c '" + python + "'; true";
  for (int i = 0; i < 3; ++i) {
    const trace::Trace t = record(path, {"sh", "-c", script}, "wrapper_" + std::to_string(i));
    ASSERT_TRUE(t.peaks.count("hwm_sum") && t.peaks.count("kernel_process")) << "run " << i;
    const Bytes upper = t.peaks.at("hwm_sum");
    const Bytes python_peak = t.peaks.at("kernel_process");  // the largest process: Python
    EXPECT_GE(python_peak, 100 * kMiB) << "run " << i;
    EXPECT_LE(python_peak, 120 * kMiB) << "run " << i;
    EXPECT_GE(upper + kMemRounding, max_mem(t)) << "run " << i;
    // Python and the shell's own few MiB; counting Python's peak for the shell too made it 2×.
    EXPECT_LE(upper, python_peak + 8 * kMiB) << "run " << i << ": upper " << mib(upper) << " MiB";
  }
}

void expect_forking_parent_counted_once(Path path) {
  if (path == Path::nobody && geteuid() != 0) GTEST_SKIP() << "runuser needs root";
  // As bounds_test: an AddressSanitizer qprof is larger at the fork than these jobs grow, and the
  // command's wait4 figure counts its pre-exec copy of qprof, so the bounds of its figure are left out.
  if (sanitized()) GTEST_SKIP() << "the kernel's single-process figure is undefined under an AddressSanitizer qprof";
  const std::string python = std::string(kTouch) +
                             "a = touch(50)\n"
                             "pid = os.fork()\n"
                             "if pid == 0:\n"
                             "    b = touch(80)\n"
                             "    time.sleep(0.4)\n"
                             "    os._exit(0)\n"
                             "os.waitpid(pid, 0)\n";
  for (int i = 0; i < 3; ++i) {
    const trace::Trace t = record(path, {debian_python(), "-c", python}, "fork_" + std::to_string(i));
    ASSERT_TRUE(t.peaks.count("hwm_sum") && t.peaks.count("kernel_process")) << "run " << i;
    const Bytes upper = t.peaks.at("hwm_sum");
    // The child maps the parent's 50 MiB and touches 80 more: the largest process.
    const Bytes child = t.peaks.at("kernel_process");
    EXPECT_GE(child, 130 * kMiB) << "run " << i;
    EXPECT_LE(child, 150 * kMiB) << "run " << i;
    // Both alive together: the parent's 50 MiB and the child's 130, each with the interpreter.
    // The sampled Σ RSS sees that sum; the bound may add what the parent could have grown in its
    // last moments (a page a fault), not the child a second time (130 MiB more).
    EXPECT_GE(upper + kMemRounding, max_mem(t)) << "run " << i;
    EXPECT_GE(upper, 180 * kMiB) << "run " << i;
    EXPECT_LE(upper, max_mem(t) + 16 * kMiB) << "run " << i << ": upper " << mib(upper) << " MiB";
  }
}

TEST(BoundsReaper, ShellWrapperCountsItsChildOnceAsRoot) { expect_wrapper_counted_once(Path::root); }
TEST(BoundsReaper, ShellWrapperCountsItsChildOnceAsAnOrdinaryUser) { expect_wrapper_counted_once(Path::nobody); }
TEST(BoundsReaper, ForkingParentCountsItsChildOnceAsRoot) { expect_forking_parent_counted_once(Path::root); }
TEST(BoundsReaper, ForkingParentCountsItsChildOnceAsAnOrdinaryUser) {
  expect_forking_parent_counted_once(Path::nobody);
}

}  // namespace
}  // namespace qprof::test
