// SPDX-License-Identifier: Apache-2.0
// Shared memory in the tree's cgroup: the kernel charges it as page cache (v1 cache, v2 file) and
// counts it again as shmem, yet only swap could free it. Each figure read from a cgroup counts it
// as unreclaimable and leaves it out of the page cache it calls droppable: memory.stat's parts
// (recorded texts in tests/data/cgroup), the CGROUP line and its older form, the footprint, the
// unreclaimable metric and the report's facts (the recording's own: tests/e2e/shm_footprint_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/record/cgroup.hpp"
#include "qprof/report/report.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof {
namespace {

constexpr Bytes kMiB = 1024 * 1024;

std::string recorded(const std::string& name) {
  std::ifstream in(std::string(QPROF_TEST_DATA) + "/cgroup/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The job of both recordings: 20 MiB written to a MAP_SHARED anonymous mapping, read by a child.
TEST(MemoryStatParts, V1RecordedTextGivesTheGroupsOwnShmem) {
  const std::string text = recorded("v1-shared-20MiB.memory.stat");
  ASSERT_FALSE(text.empty());
  const auto p = record::memory_stat_parts(text, true);
  EXPECT_EQ(p.anon, 4136960u);
  EXPECT_EQ(p.file, 21000192u);
  EXPECT_EQ(p.shmem, 20 * kMiB) << "shmem, not total_shmem nor a prefix of another key";
}

TEST(MemoryStatParts, V2RecordedTextGivesShmemNotShmemThp) {
  const std::string text = recorded("v2-shared-20MiB.memory.stat");
  ASSERT_FALSE(text.empty());
  const auto p = record::memory_stat_parts(text, false);
  EXPECT_EQ(p.anon, 4136960u);
  EXPECT_EQ(p.file, 21000192u) << "file, not file_mapped";
  EXPECT_EQ(p.shmem, 20 * kMiB);
  // The v1 keys are not read from a v2 text, nor the v2 keys from a v1 text.
  EXPECT_EQ(record::memory_stat_parts(text, true).anon, std::nullopt);
  EXPECT_EQ(record::memory_stat_parts(recorded("v1-shared-20MiB.memory.stat"), false).anon, std::nullopt);
}

TEST(MemoryStatParts, AKernelWithoutShmemGivesTheOtherParts) {
  const auto p = record::memory_stat_parts("cache 500\nrss 100\nshmem_thp 7\ntotal_shmem 9\n", true);
  EXPECT_EQ(p.anon, 100u);
  EXPECT_EQ(p.file, 500u);
  EXPECT_EQ(p.shmem, std::nullopt);
}

TEST(CgroupSampleParts, SharedMemoryIsUnreclaimableAndNotDroppableCache) {
  const trace::CgroupSample s{1.0, 110 * kMiB, 111 * kMiB, 4 * kMiB, 105 * kMiB, 100 * kMiB};
  EXPECT_EQ(s.unreclaimable(), 104 * kMiB);
  EXPECT_EQ(s.droppable_cache(), 5 * kMiB);
  // Read apart (file, then shmem a moment later), shmem may pass file: no cache, not a wrap.
  const trace::CgroupSample apart{1.0, 10, 10, 1, 5, 6};
  EXPECT_EQ(apart.droppable_cache(), 0u);
  // An older trace has no shmem: anon and file as they are.
  const trace::CgroupSample old{1.0, 110 * kMiB, 111 * kMiB, 4 * kMiB, 105 * kMiB, std::nullopt};
  EXPECT_EQ(old.unreclaimable(), 4 * kMiB);
  EXPECT_EQ(old.droppable_cache(), 105 * kMiB);
  EXPECT_EQ((trace::CgroupSample{1.0, 1, 1, std::nullopt, std::nullopt, std::nullopt}.unreclaimable()), std::nullopt);
}

constexpr const char* kHeader =
    "QPROF 1 version=0.1.0 interval=0.010000 host=h root_pid=1 start=1000.000000 metric=all\nCMDLINE shm\n";

// A run whose group held 100 MiB of shared memory at its peak (`cgroup`: its CGROUP lines).
trace::Trace shm_trace(const std::string& cgroup) {
  const std::string text = std::string(kHeader) + "MEM 10.000000 1000.0100\n" + cgroup + "MEM 120.000000 1000.0200\n";
  return trace::read_trace_text(text, "shm.dat");
}

TEST(CgroupLine, ShmemRoundTripsAndAnOlderLineStillReads) {
  const test::RemovedTempFile file("cgroup-shmem.dat");
  {
    trace::Writer w(file.path());
    trace::TraceMeta meta;
    meta.format_version = 1;
    meta.start = 1000.0;
    w.header(meta);
    w.mem(1000.01, 10 * kMiB);
    w.cgroup({1000.01, 110 * kMiB, 111 * kMiB, 4 * kMiB, 105 * kMiB, 100 * kMiB});
    w.cgroup({1000.02, 120 * kMiB, 121 * kMiB, 5 * kMiB, 106 * kMiB, std::nullopt});
    w.cgroup({1000.03, 130 * kMiB, 131 * kMiB, std::nullopt, std::nullopt, std::nullopt});
  }
  const std::string text = test::whole_file(file.path());
  EXPECT_NE(text.find(" 4194304 110100480 104857600\n"), std::string::npos) << text;
  const trace::Trace t = trace::read_trace(file.path());
  ASSERT_EQ(t.cgroup.size(), 3u);
  EXPECT_EQ(t.cgroup[0].shmem, 100 * kMiB);
  EXPECT_EQ(t.cgroup[0].anon, 4 * kMiB);
  EXPECT_EQ(t.cgroup[1].shmem, std::nullopt) << "no shmem read: none written";
  EXPECT_EQ(t.cgroup[1].file, 106 * kMiB);
  EXPECT_EQ(t.cgroup[2].anon, std::nullopt);
  EXPECT_EQ(t.cgroup[2].shmem, std::nullopt);

  // A line of an older qprof ends at file.
  const trace::Trace old = shm_trace("CGROUP 1000.010000 115343360 116391936 4194304 110100480\n");
  ASSERT_EQ(old.cgroup.size(), 1u);
  EXPECT_EQ(old.cgroup[0].file, 105 * kMiB);
  EXPECT_EQ(old.cgroup[0].shmem, std::nullopt);
  EXPECT_EQ(trace::footprint_of(old)->unreclaimable, 4 * kMiB);
}

TEST(CgroupFootprint, SharedMemoryIsUnreclaimableInEveryFigure) {
  const trace::Trace t = shm_trace(
      "CGROUP 1000.010000 115343360 116391936 4194304 110100480 104857600\n"
      "CGROUP 1000.015000 117440512 117440512\n");  // a charge-only sample between the stats
  const auto f = trace::footprint_of(t);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->basis, trace::Footprint::Basis::cgroup);
  EXPECT_EQ(f->unreclaimable, 104 * kMiB);
  EXPECT_EQ(f->reclaimable, 5 * kMiB) << "the page cache less the shared memory";
  const auto peak = analysis::find_peak(t, analysis::Metric::unreclaimable);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->bytes, 104 * kMiB);
  const auto series = analysis::metric_series(t, analysis::Metric::unreclaimable);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].bytes, 104 * kMiB);
}

TEST(CgroupFootprint, TheReportSaysTheSplit) {
  const trace::Trace t = shm_trace("CGROUP 1000.010000 115343360 116391936 4194304 110100480 104857600\n");
  const report::Document d = report::trace_report(t);
  auto fact = [&](const std::string& key) -> std::optional<double> {
    for (const auto& f : d.facts)
      if (f.column.key == key) return f.cell.value;
    return std::nullopt;
  };
  EXPECT_EQ(fact("unreclaimable_peak"), static_cast<double>(104 * kMiB));
  EXPECT_EQ(fact("reclaimable_at_peak"), static_cast<double>(5 * kMiB));
  EXPECT_EQ(fact("cgroup_anon"), static_cast<double>(4 * kMiB));
  EXPECT_EQ(fact("cgroup_file"), static_cast<double>(105 * kMiB));
  EXPECT_EQ(fact("cgroup_shmem"), static_cast<double>(100 * kMiB));
}

}  // namespace
}  // namespace qprof
