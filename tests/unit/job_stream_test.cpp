// SPDX-License-Identifier: Apache-2.0
// A job's sum from ranks read reduced (each rank's series streamed from its file and merged) is
// the sum from the ranks read whole, bit for bit, and so is the job's trace written from it.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "qprof/analysis/job.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof::test {
namespace {
using analysis::Align;
using analysis::Metric;
using trace::Trace;

// A rank's trace: `n` samples every `dt` from `start`, MEM and CGROUP each, PSS every third,
// a stage over its middle; values that differ per rank and per sample. Every tenth MEM line has
// its MiB in exponent form, which only the reader's general path takes.
std::string rank_trace(int rank, int n, double start, double dt) {
  const std::string path = unit_temp_file("job_stream_" + std::to_string(rank) + ".dat");
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fprintf(f, "QPROF 1 version=0.1 interval=0.01 host=h%d root_pid=1 start=%.6f metric=all rank=%d job=5\n",
               rank % 2, start, rank);
  std::fprintf(f, "CMDLINE x\n");
  for (int i = 0; i < n; ++i) {
    const double t = start + i * dt;
    const double mib = 10 + rank * 3 + (i * 37 + rank * 11) % 23 * 0.25;
    const auto bytes = static_cast<unsigned long long>(mib * 1048576);
    std::fprintf(f, i % 10 == 5 ? "MEM %e %.4f\n" : "MEM %.6f %.4f\n", mib, t);
    std::fprintf(f, "CGROUP %.6f %llu %llu\n", t, bytes + 4096, bytes + 8192);
    if (i % 3 == 0) std::fprintf(f, "PSS %.6f %llu %llu\n", t, bytes - 4096 * i % 7, bytes / 2 + i);
    if (i == n / 4) std::fprintf(f, "MARK %.6f train Start\n", t);
    if (i == 3 * n / 4) std::fprintf(f, "MARK %.6f train End\n", t);
  }
  std::fprintf(f, "EXIT %.6f status=0\n", start + n * dt);
  std::fclose(f);
  return path;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every summed series, job peak and job trace from the ranks in `files` read reduced equals the
// one from them read whole.
void expect_reduced_sum_as_whole(const std::vector<std::string>& files, std::size_t more_than) {
  struct RemovedAtEnd {
    const std::vector<std::string>& files;
    ~RemovedAtEnd() {
      for (const std::string& f : files) std::remove(f.c_str());
    }
  } const remove_ranks{files};
  std::vector<Trace> whole, reduced;
  for (const std::string& f : files) {
    whole.push_back(trace::read_trace(f));
    auto r = trace::read_trace_reduced(f, analysis::kTimeSlack);
    ASSERT_TRUE(r.has_value()) << f;
    reduced.push_back(std::move(*r));
  }
  std::vector<const Trace*> w, r;
  for (std::size_t i = 0; i < files.size(); ++i) {
    w.push_back(&whole[i]);
    r.push_back(&reduced[i]);
  }
  ASSERT_TRUE(analysis::job_streams(r));
  ASSERT_FALSE(analysis::job_streams(w));
  for (Align align : {Align::wall, Align::start}) {
    for (Metric m : {Metric::rss, Metric::pss, Metric::uss, Metric::cgroup}) {
      const auto expected = analysis::summed_series(w, m, align), got = analysis::summed_series(r, m, align);
      ASSERT_EQ(got.size(), expected.size());
      ASSERT_GT(got.size(), more_than);  // more than a rank alone has
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].t, expected[i].t) << i;
        ASSERT_EQ(got[i].bytes, expected[i].bytes) << i;
      }
      const auto peak_w = analysis::job_peak(w, m, align), peak_r = analysis::job_peak(r, m, align);
      ASSERT_TRUE(peak_w && peak_r);
      EXPECT_EQ(peak_r->bytes, peak_w->bytes);
      EXPECT_EQ(peak_r->t, peak_w->t);
      EXPECT_EQ(peak_r->each, peak_w->each);
    }
    // The job's trace as it streams is the one written from job_trace, byte for byte.
    const RemovedTempFile streamed_file("job_stream_streamed.dat"), held_file("job_stream_held.dat");
    const std::string &streamed = streamed_file.path(), &held = held_file.path();
    {
      trace::Writer out(streamed);
      analysis::write_job_trace(r, align, out);
      ASSERT_TRUE(out.close()) << out.error();
      trace::Writer in_memory(held);
      trace::write_trace(analysis::job_trace(w, align), in_memory);
      ASSERT_TRUE(in_memory.close()) << in_memory.error();
    }
    const std::string expected = file_text(held);
    EXPECT_GT(expected.size(), 100000u);
    EXPECT_EQ(file_text(streamed), expected);
  }
}

TEST(JobStream, ReducedRanksSumAsWholeOnesDoBitForBit) {
  // Ranks 0 and 1 sample at the same times (ties go in rank order), 2 between them, 3 later and
  // shorter: it starts and ends inside the others.
  expect_reduced_sum_as_whole({rank_trace(0, 3000, 1000.0, 0.01), rank_trace(1, 3000, 1000.0, 0.01),
                               rank_trace(2, 2500, 1000.005, 0.012), rank_trace(3, 700, 1010.0, 0.02)},
                              1200);
}

// More ranks than get a reader thread each: read a piece of each file at a time, on one thread.
TEST(JobStream, ManyRanksReadAPieceAtATimeSumAsWholeOnesDo) {
  std::vector<std::string> files;
  for (int rank = 0; rank < 20; ++rank) {
    // Pairs of ranks at the same times; starts and lengths that differ from pair to pair.
    files.push_back(rank_trace(rank, 400 + rank / 2 * 90, 1000.0 + rank / 2 * 0.37, 0.01 + rank / 2 * 0.001));
  }
  expect_reduced_sum_as_whole(files, 2000);
}

// Rank 1's cgroup high-water mark rises to 100 MiB between its records 49 and 50 (a spike no
// usage reading saw); rank 0 holds 1 MiB for its first ten records, then 10 MiB. The job's floor
// is the mark plus what rank 0 held between those two records (110 MiB), read whole or reduced:
// the reduced reader keeps the record before the highest mark, which bounds when it came.
TEST(JobStream, AKernelMarkBetweenRecordsGivesOneFloorReadWholeOrReduced) {
  auto write = [](int rank, auto usage_and_mark) {
    const std::string path = unit_temp_file("job_floor_" + std::to_string(rank) + ".dat");
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fprintf(f, "QPROF 1 version=0.1 interval=0.1 host=h root_pid=1 start=1000 metric=all rank=%d job=5\n", rank);
    std::fprintf(f, "CMDLINE x\n");
    for (int i = 0; i < 100; ++i) {
      const auto [usage, mark] = usage_and_mark(i);
      std::fprintf(f, "MEM %.6f %.4f\nCGROUP %.6f %llu %llu\n", usage, 1000 + i * 0.1, 1000 + i * 0.1,
                   static_cast<unsigned long long>(usage * 1048576), static_cast<unsigned long long>(mark * 1048576));
    }
    std::fprintf(f, "EXIT %.6f status=0\n", 1010.0);
    std::fclose(f);
    return path;
  };
  const std::string r0 = write(0, [](int i) { return std::pair{i < 10 ? 1.0 : 10.0, 10.0}; });
  const std::string r1 = write(1, [](int i) { return std::pair{5.0, i < 50 ? 5.0 : 100.0}; });
  const Trace w0 = trace::read_trace(r0), w1 = trace::read_trace(r1);
  auto reduced = [](const std::string& f) { return *trace::read_trace_reduced(f, analysis::kTimeSlack); };
  const Trace d0 = reduced(r0), d1 = reduced(r1);
  EXPECT_LT(d1.cgroup.size(), w1.cgroup.size()) << "reduced";
  for (const std::vector<const Trace*>& ranks : {std::vector<const Trace*>{&w0, &w1}, {&d0, &d1}}) {
    const auto peak = analysis::job_peak(ranks, Metric::footprint, Align::wall);
    ASSERT_TRUE(peak && peak->kernel_rank);
    EXPECT_EQ(peak->bytes, 110ull << 20);
  }
  std::remove(r0.c_str());
  std::remove(r1.c_str());
}

}  // namespace
}  // namespace qprof::test
