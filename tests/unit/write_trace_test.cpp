// SPDX-License-Identifier: Apache-2.0
// write_trace: an in-memory Trace back to lines (a job's sum for the plot) carries every series
// the Trace holds, in an order every reader takes, so reading it back gives the same Trace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof::trace {
namespace {

using test::unit_temp_file;
using test::whole_file;

// A recorded trace with a line of every kind, two samples of each series (times 1 and 2).
std::string record_everything() {
  const std::string path = unit_temp_file("everything.dat");
  Writer w(path);
  TraceMeta meta;
  meta.format_version = 1;
  meta.qprof_version = "0.1.0";
  meta.host = "node1";
  meta.metric = "all";
  meta.interval = 0.01;
  meta.root_pid = 42;
  meta.start = 1.0;
  w.header(meta);
  w.cmdline("python3 train.py --epochs 2");
  w.gpu_device(GpuDevice{0, "GPU-0123", "A100", 80ull << 30});
  w.dir_def(WatchedDir{0, "/tmp/cache dir"});
  for (int i = 1; i <= 2; ++i) {
    const double t = i;
    const Bytes m = Bytes(i) << 20;
    w.mem(t, 100 * m);
    w.child(43, t, 40 * m);
    w.child(44, t, 30 * m);
    w.pss(PssSample{t, 90 * m, 60 * m, std::nullopt});
    w.io(IoSample{t, 1 * m, 2 * m, 3 * m, 4 * m});
    w.cpu(CpuSample{t, 0.5 * i});
    w.hwm(t, 120 * m);
    w.cgroup(CgroupSample{t, 110 * m, 115 * m, 80 * m, 30 * m, 20 * m});
    w.gpu(GpuSample{t, 0, 500 * m, 600 * m, 0.0});
    w.torch(TorchSample{t, 0, 300 * m, 400 * m});
    w.kinds(MemKindsSample{t, 70 * m, 25 * m, 5 * m, 1 * m});
    w.tasks(TasksSample{t, 3, Bytes(7 + i), 900 * m});
    w.gpu_util(GpuUtilSample{t, 0, 55, 20, 40.0, 1e9, 2e9});
    w.dir(DirSample{t, 0, 10 * m, 12 * m, 1000 * m});
    w.mark(t, i == 1 ? "Calibration Start" : "Calibration End");
  }
  w.peak(kPeakKernelProcess, 150ull << 20);
  w.note("a note");
  w.exit(ExitInfo{2.5, 0, 0, false, true});
  w.flush();
  return path;
}

TEST(WriteTrace, ReadingItBackGivesTheSameTrace) {
  const std::string original = record_everything();
  const Trace a = read_trace(original);
  ASSERT_EQ(a.mem.size(), 2u);
  const std::string copy = unit_temp_file("copy.dat");
  {
    Writer w(copy);
    write_trace(a, w);
  }
  const Trace b = read_trace(copy);
  EXPECT_EQ(b.meta.host, a.meta.host);
  EXPECT_EQ(b.cmdline, a.cmdline);
  auto same = [](const auto& x, const auto& y, const char* what) {
    ASSERT_EQ(x.size(), y.size()) << what;
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].t, y[i].t) << what << " " << i;
  };
  same(b.mem, a.mem, "MEM");
  ASSERT_EQ(b.children.size(), 2u);
  for (std::size_t c = 0; c < 2; ++c) {
    EXPECT_EQ(b.children[c].pid, a.children[c].pid);
    same(b.children[c].samples, a.children[c].samples, "CHLD");
    EXPECT_EQ(b.children[c].samples[1].bytes, a.children[c].samples[1].bytes);
  }
  same(b.pss, a.pss, "PSS");
  same(b.io, a.io, "IO");
  same(b.cpu, a.cpu, "CPU");
  same(b.hwm, a.hwm, "HWM");
  same(b.cgroup, a.cgroup, "CGROUP");
  same(b.gpu, a.gpu, "GPU");
  same(b.torch, a.torch, "TORCH");
  same(b.kinds, a.kinds, "KINDS");
  same(b.tasks, a.tasks, "TASKS");
  same(b.gpu_util, a.gpu_util, "GPUUTIL");
  same(b.dir_samples, a.dir_samples, "DIR");
  same(b.markers, a.markers, "MARK");
  EXPECT_EQ(b.mem[1].bytes, a.mem[1].bytes);
  EXPECT_EQ(b.cgroup[1].anon, a.cgroup[1].anon);
  EXPECT_EQ(b.cgroup[1].shmem, a.cgroup[1].shmem);
  EXPECT_EQ(b.cgroup[1].shmem, 40u << 20);
  EXPECT_EQ(b.kinds[1].shmem, a.kinds[1].shmem);
  EXPECT_EQ(b.tasks[1].threads, a.tasks[1].threads);
  EXPECT_EQ(b.gpu_util[1].pcie_tx_bytes_per_s, a.gpu_util[1].pcie_tx_bytes_per_s);
  EXPECT_EQ(b.dir_samples[1].fs_free, a.dir_samples[1].fs_free);
  ASSERT_EQ(b.dirs.size(), 1u);
  EXPECT_EQ(b.dirs[0].path, "/tmp/cache dir");
  ASSERT_EQ(b.gpu_devices.size(), 1u);
  EXPECT_EQ(b.gpu_devices[0].uuid, "GPU-0123");
  // The checkpoints see the same values: the samples of their time come before them.
  EXPECT_EQ(b.markers[1].at.rss, a.markers[1].at.rss);
  EXPECT_EQ(b.markers[1].at.pss, a.markers[1].at.pss);
  EXPECT_EQ(b.markers[1].at.cpu_seconds, a.markers[1].at.cpu_seconds);
  ASSERT_EQ(b.stages.size(), 1u);
  EXPECT_EQ(b.stages[0].mem_end, a.stages[0].mem_end);
  EXPECT_EQ(b.peaks, a.peaks);
  EXPECT_EQ(b.notes, a.notes);
  ASSERT_TRUE(b.exit.has_value());
  EXPECT_EQ(b.exit->status, 0);

  // And writing what was read back writes the same bytes: nothing drifts through a round trip.
  const std::string again = unit_temp_file("again.dat");
  {
    Writer w(again);
    write_trace(b, w);
  }
  EXPECT_EQ(whole_file(again), whole_file(copy));
  for (const std::string& p : {original, copy, again}) std::filesystem::remove(p);
}

}  // namespace
}  // namespace qprof::trace
