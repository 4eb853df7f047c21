// SPDX-License-Identifier: Apache-2.0
// Ranks from the launchers' environments, -o placeholders, and a job's traces summed as one.
#include "qprof/analysis/job.hpp"

#include <gtest/gtest.h>

#include <map>

#include "qprof/analysis/peaks.hpp"
#include "qprof/record/job.hpp"

namespace qprof {
using analysis::Align;
using analysis::clock_skew_note;
using analysis::group_by_host;
using analysis::job_peak;
using analysis::job_stages;
using analysis::job_trace;
using analysis::Metric;
using analysis::rank_label;
using analysis::summed_series;
using record::detect_job;
using record::EnvLookup;
using record::expand_output;
using record::JobIdentity;
using trace::GpuDevice;
using trace::GpuSample;
using trace::Stage;
using trace::Trace;

namespace {

constexpr Bytes MiB = 1024 * 1024;

EnvLookup env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    const auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST(DetectJob, TorchrunWinsOverTheSlurmAllocationAroundIt) {
  const JobIdentity id = detect_job(env_of({{"RANK", "3"},
                                            {"LOCAL_RANK", "1"},
                                            {"WORLD_SIZE", "8"},
                                            {"TORCHELASTIC_RUN_ID", "abc"},
                                            {"SLURM_PROCID", "0"},
                                            {"SLURM_LOCALID", "0"},
                                            {"SLURM_NTASKS", "2"},
                                            {"SLURM_JOB_ID", "4242"},
                                            {"QPROF_HOSTNAME", "node7"}}));
  EXPECT_EQ(id.host, "node7");
  EXPECT_EQ(id.job.rank, 3);
  EXPECT_EQ(id.job.local_rank, 1);
  EXPECT_EQ(id.job.world_size, 8);
  EXPECT_EQ(id.job.launcher, "torchrun");
  EXPECT_EQ(id.job.job_id, "4242");  // the allocation's id names the job across hosts
}

TEST(DetectJob, OpenMpiPmixPmiAndSlurmEachOnTheirOwn) {
  JobIdentity ompi = detect_job(env_of({{"OMPI_COMM_WORLD_RANK", "2"},
                                        {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                        {"OMPI_COMM_WORLD_SIZE", "4"},
                                        {"OMPI_MCA_ess_base_jobid", "1234567"},
                                        {"PMIX_RANK", "2"}}));
  EXPECT_EQ(ompi.job.launcher, "openmpi");
  EXPECT_EQ(ompi.job.rank, 2);
  EXPECT_EQ(ompi.job.world_size, 4);
  EXPECT_EQ(ompi.job.job_id, "1234567");
  JobIdentity pmix = detect_job(env_of({{"PMIX_RANK", "5"}, {"SLURM_NTASKS", "6"}}));
  EXPECT_EQ(pmix.job.launcher, "pmix");
  EXPECT_EQ(pmix.job.rank, 5);
  EXPECT_EQ(pmix.job.world_size, 6);
  JobIdentity pmi = detect_job(env_of({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}}));
  EXPECT_EQ(pmi.job.launcher, "pmi");
  EXPECT_EQ(pmi.job.local_rank, 1);
  JobIdentity slurm = detect_job(
      env_of({{"SLURM_PROCID", "9"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "16"}, {"SLURM_JOB_ID", "77"}}));
  EXPECT_EQ(slurm.job.launcher, "slurm");
  EXPECT_EQ(slurm.job.rank, 9);
  EXPECT_EQ(slurm.job.local_rank, 1);
  EXPECT_EQ(slurm.job.world_size, 16);
  EXPECT_EQ(slurm.job.job_id, "77");
}

TEST(DetectJob, NothingSetIsNoJobAndBadValuesAreWarnedAbout) {
  JobIdentity none = detect_job(env_of({}), "given-host");
  EXPECT_EQ(none.host, "given-host");
  EXPECT_FALSE(none.job.any());
  JobIdentity bad = detect_job(env_of({{"RANK", "x1"}, {"SLURM_PROCID", "4"}, {"TORCHELASTIC_RUN_ID", "none"}}));
  EXPECT_EQ(bad.job.rank, 4);  // the next source
  EXPECT_EQ(bad.job.launcher, "slurm");
  EXPECT_EQ(bad.job.job_id, "");  // torchrun's default id is shared by every job
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_NE(bad.warnings[0].find("RANK='x1'"), std::string::npos);
}

TEST(ExpandOutput, EveryPlaceholder) {
  JobIdentity id;
  id.host = "gpu/node 1";
  id.job.rank = 12;
  id.job.local_rank = 4;
  id.job.world_size = 16;
  id.job.job_id = "77";
  // 2026-11-23 01:47:13.25 UTC
  EXPECT_EQ(*expand_output("job.%h.%r.%l-of-%w.%j.%p.%t.100%%.dat", id, 4321, 1795398433.25),
            "job.gpu_node 1.12.4-of-16.77.4321.20261123T014713.250Z.100%.dat");
  EXPECT_EQ(*expand_output("plain.dat", id, 1, 0), "plain.dat");
}

TEST(ExpandOutput, UnknownValuesAndPlaceholdersAreErrors) {
  JobIdentity id;
  id.host = "h";
  const auto why = [&](std::string_view pattern) {
    const auto expanded = expand_output(pattern, id, 1, 0);
    EXPECT_FALSE(expanded) << pattern;
    EXPECT_EQ(expanded ? 0 : expanded.failure().status, kFailureStatus) << pattern;
    return expanded ? std::string() : expanded.failure().message;
  };
  EXPECT_NE(why("job.%r.dat").find("%r (the rank) but no launcher set it"), std::string::npos);
  EXPECT_NE(why("job.%j.dat").find("SLURM_JOB_ID"), std::string::npos);
  EXPECT_NE(why("job.%q.dat").find("unknown placeholder %q"), std::string::npos);
  EXPECT_NE(why("job%").find("lone '%'"), std::string::npos);
}

Trace rank_trace(std::string host, std::int64_t rank, Seconds start, std::vector<std::pair<Seconds, Bytes>> mem) {
  Trace t;
  t.meta.format_version = 1;
  t.meta.host = std::move(host);
  t.meta.start = start;
  t.meta.job.rank = rank;
  t.meta.job.job_id = "j1";
  for (const auto& [dt, b] : mem) t.mem.push_back({start + dt, b});
  return t;
}

TEST(JobSum, RanksAddUpWhileTheyOverlapOnTheWallClock) {
  // Rank 0 from t=100: 10, 30, 20 MiB at +0, +1, +2; rank 1 from t=100.5: 5, 40 MiB at +0, +1.
  const Trace a = rank_trace("h", 0, 100.0, {{0, 10 * MiB}, {1, 30 * MiB}, {2, 20 * MiB}});
  const Trace b = rank_trace("h", 1, 100.5, {{0, 5 * MiB}, {1, 40 * MiB}});
  const std::vector<const Trace*> job{&a, &b};
  const auto s = summed_series(job, Metric::rss, Align::wall);
  // 0: 10; 0.5: 10+5; 1: 30+5; 1.5: 30+40; 1.5+: rank 1 ended → 30; 2: 20; 2+: 0.
  ASSERT_GE(s.size(), 6u);
  EXPECT_DOUBLE_EQ(s[0].t, 0.0);
  EXPECT_EQ(s[0].bytes, 10 * MiB);
  EXPECT_EQ(s[1].bytes, 15 * MiB);
  EXPECT_EQ(s[2].bytes, 35 * MiB);
  EXPECT_EQ(s[3].bytes, 70 * MiB);
  EXPECT_EQ(s[4].bytes, 30 * MiB);
  EXPECT_EQ(s.back().bytes, 0u);
  const auto peak = job_peak(job, Metric::rss, Align::wall);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->bytes, 70 * MiB);
  EXPECT_NEAR(peak->t, 1.5, 1e-9);
  EXPECT_EQ(peak->each, (std::vector<Bytes>{30 * MiB, 40 * MiB}));
}

TEST(JobSum, AlignStartLaysEachTraceFromItsOwnStart) {
  // The same ranks with a host clock 1000 s off: wall-clock alignment sees no overlap.
  const Trace a = rank_trace("h1", 0, 100.0, {{0, 10 * MiB}, {1, 30 * MiB}});
  const Trace b = rank_trace("h2", 1, 1100.0, {{0, 5 * MiB}, {1, 40 * MiB}});
  const std::vector<const Trace*> job{&a, &b};
  EXPECT_EQ(job_peak(job, Metric::rss, Align::wall)->bytes, 40 * MiB);
  EXPECT_EQ(job_peak(job, Metric::rss, Align::start)->bytes, 70 * MiB);
  const auto note = clock_skew_note(job);
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("host h2 started 1000.0 s after host h1"), std::string::npos) << *note;
  EXPECT_FALSE(clock_skew_note({&a}));
}

TEST(JobSum, HostsGroupInOrderOfAppearance) {
  const Trace a = rank_trace("h1", 0, 0, {{0, 1}});
  const Trace b = rank_trace("h2", 1, 0, {{0, 1}});
  const Trace c = rank_trace("h1", 2, 0, {{0, 1}});
  const auto groups = group_by_host({&a, &b, &c});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].host, "h1");
  EXPECT_EQ(groups[0].traces, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(groups[1].traces, (std::vector<std::size_t>{1}));
}

TEST(JobStages, EarliestStartLatestEndAndTheSlowestRank) {
  Trace a = rank_trace("h", 0, 100.0, {{0, 1}, {10, 1}});
  Trace b = rank_trace("h", 1, 100.0, {{0, 1}, {10, 1}});
  a.stages.push_back(Stage{"Train", 101.0, 104.0});
  b.stages.push_back(Stage{"Train", 101.5, 106.0});
  b.stages.push_back(Stage{"Save", 106.0, 107.0});
  const auto stages = job_stages({&a, &b}, Align::wall);
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].name, "Train");
  EXPECT_DOUBLE_EQ(stages[0].start, 1.0);
  EXPECT_DOUBLE_EQ(stages[0].end, 6.0);
  EXPECT_EQ(stages[0].ranks, 2u);
  EXPECT_EQ(stages[0].slowest, 1u);
  EXPECT_DOUBLE_EQ(stages[0].slowest_duration, 4.5);
  EXPECT_EQ(stages[1].name, "Save");
  EXPECT_EQ(stages[1].ranks, 1u);
  EXPECT_EQ(rank_label(b), "rank 1 (h)");
}

// Ranks that each ran in a cgroup of their own: each one's footprint is its charge, and so is the
// job's, summed as peak --sum sums it; never their PSS, which here is 1.5x the charge.
TEST(JobTrace, TheFootprintOfRanksInCgroupsIsTheirChargesSummed) {
  auto in_cgroup = [](Trace t, std::vector<Bytes> charges) {
    const Seconds start = *t.meta.start;
    for (std::size_t i = 0; i < charges.size(); ++i) {
      const Seconds at = start + static_cast<Seconds>(i);
      t.cgroup.push_back({at, charges[i], charges[i], std::nullopt, std::nullopt, std::nullopt});
      t.pss.push_back({at, charges[i] * 3 / 2, charges[i], std::nullopt});
    }
    return t;
  };
  const Trace r0 = in_cgroup(rank_trace("a", 0, 100, {{0, MiB}, {1, MiB}, {2, MiB}}), {10 * MiB, 30 * MiB, 20 * MiB});
  const Trace r1 = in_cgroup(rank_trace("a", 1, 100, {{0, MiB}, {1, MiB}}), {5 * MiB, 40 * MiB});
  const std::vector<const Trace*> ranks{&r0, &r1};
  const Trace job = job_trace(ranks, Align::wall);
  const auto summed = job_peak(ranks, Metric::footprint, Align::wall);
  ASSERT_TRUE(summed);
  EXPECT_EQ(summed->bytes, 70 * MiB);
  const auto peak = analysis::find_peak(job, Metric::footprint);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->bytes, 70 * MiB) << "the charges summed (30 + 40), not the PSS (105)";
  EXPECT_EQ(analysis::find_peak(job, Metric::cgroup)->bytes, 70 * MiB);
  EXPECT_EQ(analysis::find_peak(job, Metric::pss)->bytes, 105 * MiB);
  // A rank without a cgroup: no charge to sum, and the job's footprint is its ranks' PSS.
  const Trace r2 = rank_trace("b", 2, 100, {{0, MiB}});
  const Trace mixed = job_trace({&r0, &r1, &r2}, Align::wall);
  EXPECT_TRUE(mixed.cgroup.empty());
  // Nor one with the charge's PEAK line alone: it would add nothing to the sum.
  Trace peak_only = rank_trace("b", 2, 100, {{0, MiB}});
  peak_only.peaks["cgroup"] = 50 * MiB;
  EXPECT_TRUE(job_trace({&r0, &r1, &peak_only}, Align::wall).cgroup.empty());
}

TEST(JobTrace, GpuIsSummedPerDeviceOfEachHost) {
  // Ranks 0 and 1 share host a's device U; rank 2 is on host b, whose device has the same UUID
  // string but is another card. Each trace names its devices with its own indices.
  auto with_gpu = [](Trace t, int index, std::vector<std::pair<Seconds, Bytes>> tree, Bytes used) {
    t.gpu_devices.push_back(GpuDevice{index, "GPU-U", "H100", 80 * 1024 * MiB});
    for (const auto& [at, bytes] : tree) t.gpu.push_back({at, index, bytes, used, std::nullopt});
    return t;
  };
  const Trace r0 = with_gpu(rank_trace("a", 0, 100, {{0, MiB}, {1, MiB}, {2, MiB}}), 0,
                            {{100, 10 * MiB}, {101, 30 * MiB}}, 50 * MiB);
  const Trace r1 = with_gpu(rank_trace("a", 1, 100, {{0, MiB}, {1, MiB}, {2, MiB}}), 3,
                            {{100, 20 * MiB}, {101, 20 * MiB}}, 60 * MiB);
  const Trace r2 =
      with_gpu(rank_trace("b", 2, 100, {{0, MiB}, {1, MiB}, {2, MiB}}), 0, {{100, 7 * MiB}, {101, 7 * MiB}}, 9 * MiB);
  const Trace job = job_trace({&r0, &r1, &r2}, Align::wall);
  ASSERT_EQ(job.gpu_devices.size(), 2u);
  EXPECT_EQ(job.gpu_devices[0].name, "a: H100");
  EXPECT_EQ(job.gpu_devices[1].name, "b: H100");
  Bytes a_peak = 0, b_peak = 0, a_used = 0;
  for (const GpuSample& g : job.gpu) {
    if (g.device == 0) a_peak = std::max(a_peak, g.tree), a_used = std::max(a_used, g.used);
    if (g.device == 1) b_peak = std::max(b_peak, g.tree);
  }
  EXPECT_EQ(a_peak, 50 * MiB);  // 30 + 20 at t = 101
  EXPECT_EQ(a_used, 60 * MiB);  // the device's own use, not summed over the ranks that share it
  EXPECT_EQ(b_peak, 7 * MiB);
  EXPECT_TRUE(job.notes.empty());
}

// Rank 1's samples read 5 MiB, but its cgroup's high-water mark rose to 100 MiB between its first
// and second record: a spike no sample read. Rank 0 held 10 MiB throughout. The job held at least
// 110 MiB; every view (job_peak, the job's trace) says so, with no moment.
TEST(JobPeak, ARanksKernelMarkBetweenSamplesIsAFloorOfTheJob) {
  auto charged = [](Trace t, std::vector<std::pair<Bytes, Bytes>> usage_and_mark) {
    for (std::size_t i = 0; i < usage_and_mark.size(); ++i) {
      const auto [usage, mark] = usage_and_mark[i];
      t.cgroup.push_back(
          {*t.meta.start + static_cast<Seconds>(i), usage, mark, std::nullopt, std::nullopt, std::nullopt});
    }
    t.meta.interval = 1;
    return t;
  };
  const Trace r0 = charged(rank_trace("a", 0, 100, {{0, MiB}, {1, MiB}, {2, MiB}}),
                           {{10 * MiB, 10 * MiB}, {10 * MiB, 10 * MiB}, {10 * MiB, 10 * MiB}});
  const Trace r1 = charged(rank_trace("a", 1, 100, {{0, MiB}, {1, MiB}, {2, MiB}}),
                           {{5 * MiB, 5 * MiB}, {5 * MiB, 100 * MiB}, {5 * MiB, 100 * MiB}});
  const std::vector<const Trace*> ranks{&r0, &r1};
  const auto peak = job_peak(ranks, Metric::footprint, Align::wall);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->bytes, 110 * MiB) << "the mark plus rank 0's 10 MiB, not the samples' 15";
  ASSERT_TRUE(peak->kernel_rank);
  EXPECT_EQ(*peak->kernel_rank, 1u);
  EXPECT_EQ(peak->each, (std::vector<Bytes>{10 * MiB, 100 * MiB}));
  EXPECT_EQ(analysis::find_peak(job_trace(ranks, Align::wall), Metric::footprint)->bytes, 110 * MiB)
      << "compare's job row and the chart read the job's trace";
  EXPECT_EQ(job_peak({&r0, &r1}, Metric::cgroup, Align::wall)->bytes, 110 * MiB);
  EXPECT_EQ(job_peak({&r1}, Metric::footprint, Align::wall)->bytes, 100 * MiB) << "a host of one rank: its own mark";

  // Where rank 0 had ended before the mark could have come, it adds nothing: the floor is the mark.
  const Trace early =
      charged(rank_trace("a", 0, 96, {{0, MiB}, {1, MiB}}), {{10 * MiB, 10 * MiB}, {10 * MiB, 10 * MiB}});
  EXPECT_EQ(job_peak({&early, &r1}, Metric::footprint, Align::wall)->bytes, 100 * MiB);
  // A mark a sample read is in the sum already: no floor.
  const Trace read = charged(rank_trace("a", 1, 100, {{0, MiB}, {1, MiB}}), {{5 * MiB, 5 * MiB}, {60 * MiB, 60 * MiB}});
  const auto summed = job_peak({&r0, &read}, Metric::footprint, Align::wall);
  EXPECT_EQ(summed->bytes, 70 * MiB);
  EXPECT_FALSE(summed->kernel_rank);
  EXPECT_EQ(job_trace({&r0, &read}, Align::wall).peaks.count("cgroup"), 0u);

  // The span starts at the record before the mark (t = 1): rank 0 grew to 10 MiB at that very
  // moment, and its 2 MiB before it held before the span; the floor is 100 + 10, not 100 + 2.
  const Trace grew = charged(rank_trace("a", 0, 100, {{0, MiB}, {1, MiB}, {2, MiB}}),
                             {{2 * MiB, 2 * MiB}, {10 * MiB, 10 * MiB}, {10 * MiB, 10 * MiB}});
  const Trace late = charged(rank_trace("a", 1, 100, {{0, MiB}, {1, MiB}, {2, MiB}}),
                             {{5 * MiB, 5 * MiB}, {5 * MiB, 5 * MiB}, {5 * MiB, 100 * MiB}});
  EXPECT_EQ(job_peak({&grew, &late}, Metric::footprint, Align::wall)->bytes, 110 * MiB);
}

// Rank 0 ran in a cgroup (a 200 MiB charge of page cache, 4 MiB of PSS), rank 1 without one (150
// MiB of PSS): the job's footprint adds their PSS, like for like, in every view, and says so.
TEST(JobPeak, FootprintsOfTwoKindsAreSummedLikeForLike) {
  Trace r0 = rank_trace("a", 0, 100, {{0, MiB}, {1, MiB}});
  for (Seconds dt : {0.0, 1.0}) {
    r0.cgroup.push_back({100 + dt, 200 * MiB, 200 * MiB, std::nullopt, std::nullopt, std::nullopt});
    r0.pss.push_back({100 + dt, 4 * MiB, 4 * MiB, std::nullopt});
  }
  Trace r1 = rank_trace("a", 1, 100, {{0, MiB}, {1, MiB}});
  for (Seconds dt : {0.0, 1.0}) r1.pss.push_back({100 + dt, 150 * MiB, 150 * MiB, std::nullopt});
  const std::vector<const Trace*> ranks{&r0, &r1};
  EXPECT_EQ(analysis::job_footprint_metric(ranks, Metric::footprint), Metric::pss);
  EXPECT_EQ(job_peak(ranks, Metric::footprint, Align::wall)->bytes, 154 * MiB);
  EXPECT_EQ(analysis::find_peak(job_trace(ranks, Align::wall), Metric::footprint)->bytes, 154 * MiB);
  const auto note = analysis::mixed_footprint_note(ranks);
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("rank 0 (a): a cgroup's charge"), std::string::npos) << *note;
  EXPECT_FALSE(analysis::mixed_footprint_note({&r1}));
}

TEST(JobRanks, ARankTwiceAnotherJobAndTheWorldSizeAreSaid) {
  Trace a = rank_trace("h", 0, 100, {{0, MiB}});
  a.source = "a.dat";
  Trace copy = a;
  copy.source = "copy.dat";
  Trace b = rank_trace("h", 1, 100, {{0, MiB}});
  b.source = "b.dat";
  EXPECT_FALSE(analysis::repeated_rank({&a, &b}));
  const auto twice = analysis::repeated_rank({&a, &b, &copy});
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->rfind("rank 0 (h) is given twice (a.dat and copy.dat)", 0), 0u) << *twice;
  Trace other = b;
  other.meta.host = "g";  // the same rank number on another host is another rank of another launch
  EXPECT_FALSE(analysis::repeated_rank({&a, &b, &other}));

  EXPECT_FALSE(analysis::several_jobs_note({&a, &b}));
  Trace next = b;
  next.meta.job.job_id = "j2";
  EXPECT_EQ(analysis::several_jobs_note({&a, &next}).value_or("").rfind("traces of 2 jobs (ids j1, j2)", 0), 0u);

  a.meta.job.world_size = 2;
  EXPECT_FALSE(analysis::world_size_note({&a, &b}));
  EXPECT_EQ(analysis::world_size_note({&a}).value_or(""),
            "the world size is 2 but 1 trace was given: the sum misses ranks");
  EXPECT_NE(analysis::world_size_note({&a, &b, &other}).value_or("").find("more than the job's ranks"),
            std::string::npos);
}

}  // namespace
}  // namespace qprof
