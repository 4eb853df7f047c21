// SPDX-License-Identifier: Apache-2.0
// A command line longer than a trace's line may be (a data job's shard list) is stored elided in
// the middle, its length said: the trace stays readable, and the run's exit status is the job's.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

// `true` with 45 000 shard paths as its arguments: 1.3 MB, past the reader's 1 MiB line limit.
std::vector<std::string> shard_job(const std::string& exe) {
  std::vector<std::string> argv{exe};
  char path[64];
  for (int i = 1; i <= 45000; ++i) {
    std::snprintf(path, sizeof path, "/data/set/shard_%09d.bin", i);
    argv.emplace_back(path);
  }
  return argv;
}

TEST(LongCommand, TheTraceStoresItElidedAndTheStatusIsTheJobs) {
  for (const auto& [exe, status] : {std::pair<std::string, int>{"true", 0}, {"false", 1}}) {
    const std::string out = temp_dir() + "/long_" + exe + ".dat";
    std::vector<std::string> args{"run", "-q", "-o", out, "--"};
    const std::vector<std::string> job = shard_job(exe);
    args.insert(args.end(), job.begin(), job.end());
    const Result r = qprof(args, "", 60);
    EXPECT_EQ(r.status, status) << r.err;
    const Trace t = trace::read_trace(out);  // throws on a line past 1 MiB
    EXPECT_LE(t.cmdline.size(), trace::kMaxCommandBytes + 100);
    EXPECT_EQ(t.cmdline.rfind(exe + " /data/set/shard_000000001.bin", 0), 0u) << t.cmdline.substr(0, 80);
    EXPECT_NE(t.cmdline.find("bytes elided ...]"), std::string::npos);
    EXPECT_NE(t.cmdline.find("shard_000045000.bin"), std::string::npos) << "the end of the command is kept";
  }
}

TEST(LongCommand, ShortCommandsAreStoredWhole) {
  EXPECT_EQ(trace::bounded_command("true a b"), "true a b");
  const std::string exact(trace::kMaxCommandBytes, 'x');
  EXPECT_EQ(trace::bounded_command(exact), exact);
  // A cut never splits a UTF-8 character: é is two bytes everywhere here.
  std::string accents;
  while (accents.size() < 3 * trace::kMaxCommandBytes) accents += "\xC3\xA9";
  const std::string b = trace::bounded_command(accents);
  EXPECT_LT(b.size(), trace::kMaxCommandBytes);
  const std::size_t mark = b.find(" [... ");
  ASSERT_NE(mark, std::string::npos);
  EXPECT_EQ(mark % 2, 0u);
  EXPECT_EQ((b.size() - b.find("...] ") - 5) % 2, 0u);
}

}  // namespace
}  // namespace qprof::test
