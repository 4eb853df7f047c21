// SPDX-License-Identifier: Apache-2.0
// A marker's checkpoint alone, over a synthetic /proc: its sample, stats pass, MARK line and
// stage, in the order the markers arrived; the hook told; the stages left open said at the end.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fake_proc.hpp"
#include "session/checkpoints.hpp"
#include "temp_files.hpp"

namespace qprof::record::session {
using trace::Marker;

namespace {

constexpr pid_t kSelf = 1000;
constexpr pid_t kRoot = 100;

struct FakeRun {
  test::FakeProc proc;
  ProcTree tree{proc.root(), kSelf};
  WallAnchor clock;
  std::string path = test::unit_temp_file("checkpoints.dat");
  TraceSink trace{TraceOutput{::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), path, true}, {}};
  std::unique_ptr<Sampler> sampler;
  GpuSampling gpu;
  LiveView live{nullptr, 0};
  std::vector<std::string> said;
  Notices notices{said};
  RunHooks hooks;
  std::vector<Marker> told;
  int stats_passes = 0;
  MarkerInbox inbox{[] {}};

  FakeRun() {
    proc.add(kRoot, kSelf, 10, 25);
    proc.set_last_pid(kRoot);
    tree.add_root(kRoot);
    SamplerConfig config;
    config.page_size = 4096;
    config.proc_root = proc.root();
    sampler = std::make_unique<Sampler>(tree, trace.writer(), clock, std::move(config));
    hooks.on_checkpoint = [this](const Marker& m) { told.push_back(m); };
    inbox.end_loop();
  }
  ~FakeRun() { std::filesystem::remove(path); }
  Checkpoints checkpoints() {
    return Checkpoints(Checkpoints::Parts{*sampler, clock, tree, gpu, trace, live}, hooks,
                       [this](std::int64_t) { ++stats_passes; });
  }
};

TEST(SessionCheckpoints, EachMarkerIsSampledWrittenAndToldInTheOrderTheyArrived) {
  FakeRun run;
  Checkpoints checkpoints = run.checkpoints();
  run.inbox.post(PendingMarker{"Load Start", {}, {}});
  run.inbox.post(PendingMarker{"Load End", {{0, 1000, 2000}}, {}});
  run.inbox.post(PendingMarker{"Train Start", {}, {}});
  checkpoints.take(run.inbox, run.notices);
  EXPECT_FALSE(run.inbox.waiting());
  EXPECT_EQ(run.stats_passes, 3);
  ASSERT_EQ(run.told.size(), 3u);
  EXPECT_EQ(run.told[0].label, "Load Start");
  EXPECT_EQ(run.told[1].label, "Load End");
  EXPECT_EQ(run.told[2].label, "Train Start");
  EXPECT_EQ(run.told[0].at.rss, Bytes{25 * 4096});
  EXPECT_FALSE(run.told[0].at.gpu_tree);  // no GPU sampling

  // Flushed at each checkpoint: the lines are in the file already.
  const std::string text = test::whole_file(run.path);
  const auto load = text.find("MARK "), torch = text.find("TORCH "), func = text.find("FUNC ");
  ASSERT_NE(func, std::string::npos) << text;
  EXPECT_LT(load, torch);
  EXPECT_LT(torch, func);

  EXPECT_EQ(checkpoints.samples(), 3u);
  const std::vector<trace::Stage> stages = checkpoints.finish(run.notices);
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].name, "Load");
  EXPECT_EQ(stages[1].name, "Train");  // never ended: closed at the last sample, and said
  ASSERT_EQ(run.said.size(), 1u);
  EXPECT_EQ(run.said[0], "stage 'Train' was started but never ended");
}

TEST(SessionCheckpoints, OnceTheTreeIsGoneAMarkerIsWrittenWithoutASample) {
  FakeRun run;
  Checkpoints checkpoints = run.checkpoints();
  run.inbox.post(PendingMarker{"first", {}, {}});
  checkpoints.take(run.inbox, run.notices);
  run.proc.reap(kRoot);
  for (Member& m : run.tree.members()) m.gone = true;
  run.sampler->prune();
  run.inbox.post(PendingMarker{"after", {}, {}});
  checkpoints.take(run.inbox, run.notices);
  ASSERT_EQ(run.told.size(), 2u);
  EXPECT_EQ(run.told[1].at.rss, run.told[0].at.rss);  // the last sample's
  EXPECT_EQ(checkpoints.samples(), 1u);
}

}  // namespace
}  // namespace qprof::record::session
