// SPDX-License-Identifier: Apache-2.0
// The kernel log's OOM lines, the OOM trace line, and the request to paste.
#include <gtest/gtest.h>

#include "qprof/common/request.hpp"
#include "qprof/record/oom_log.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/trace/oom.hpp"
#include "temp_files.hpp"

namespace qprof {
namespace {

constexpr Bytes kMiB = Bytes{1} << 20;

// As /dev/kmsg gives them on Linux 6.x (cgroup v1, a Slurm step).
constexpr const char* kConstraint =
    "3,1342,252241707,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
    "oom_memcg=/slurm_vm/uid_0/job_5/step_0,task_memcg=/slurm_vm/uid_0/job_5/step_0/task_0,task=python3,"
    "pid=13569,uid=0";
constexpr const char* kKilled =
    "3,1343,252241746,-;Memory cgroup out of memory: Killed process 13569 (python3) total-vm:321276kB, "
    "anon-rss:250364kB, file-rss:4684kB, shmem-rss:16kB, UID:0 pgtables:260kB oom_score_adj:0\n"
    " SUBSYSTEM=memory\n";

TEST(KernelOomLog, TheConstraintLineNamesTheCgroupWhoseLimitWasHit) {
  const auto l = record::parse_kmsg_oom(kConstraint);
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->is_constraint);
  EXPECT_EQ(l->pid, 13569);
  EXPECT_EQ(l->usec, 252241707);
  EXPECT_EQ(l->name, "python3");
  EXPECT_EQ(l->constraint, "CONSTRAINT_MEMCG");
  EXPECT_EQ(l->oom_memcg, "/slurm_vm/uid_0/job_5/step_0");
}

TEST(KernelOomLog, TheKilledLineSaysWhatTheVictimHeld) {
  const auto l = record::parse_kmsg_oom(kKilled);
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->is_constraint);
  EXPECT_EQ(l->pid, 13569);
  EXPECT_EQ(l->name, "python3");
  ASSERT_TRUE(l->rss);
  EXPECT_EQ(*l->rss, (250364u + 4684u + 16u) * 1024u);
}

TEST(KernelOomLog, ANameWithSpacesAndParenthesesIsKept) {
  const auto l = record::parse_kmsg_oom(
      "3,9,100,-;Out of memory: Killed process 7 (a (b) c) total-vm:10kB, anon-rss:4kB, file-rss:0kB, shmem-rss:0kB");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->name, "a (b) c");
  EXPECT_EQ(*l->rss, 4096u);
}

TEST(KernelOomLog, OtherRecordsAreNotOomLines) {
  EXPECT_FALSE(record::parse_kmsg_oom("6,1,5,-;EXT4-fs (vda): mounted filesystem"));
  EXPECT_FALSE(record::parse_kmsg_oom("no semicolon"));
  EXPECT_FALSE(record::parse_kmsg_oom("3,1,x,-;Killed process 1 (a) total-vm:1kB"));           // no time
  EXPECT_FALSE(record::parse_kmsg_oom("3,1,5,-;oom-kill:constraint=CONSTRAINT_NONE,task=a"));  // no pid
  EXPECT_FALSE(record::parse_kmsg_oom("3,1,5,-;Killed process x (a) total-vm:1kB"));
}

TEST(OomRecord, WrittenAndReadBack) {
  trace::OomKill k;
  k.t = 1795744560.25;
  k.pid = 42;
  k.name = "py thon\n3";  // escaped: a space and a newline in a key=value value
  k.role = "worker";
  k.source = "kernel-log";
  k.scope = "/slurm/job 5";
  k.limit = 300 * kMiB;
  k.held = 250 * kMiB;
  k.tree = 299 * kMiB;
  k.stage = "Load";
  const std::string text = "QPROF 1 version=0.1.0 interval=0.01\nMEM 1.0 1795744560.0\nOOM 1795744560.250000 " +
                           std::string("pid=42 name=py\\x20thon\\n3 role=worker source=kernel-log ") +
                           "scope=/slurm/job\\x205 limit=314572800 held=262144000 tree=313524224 stage=Load future=1\n";
  const trace::Trace t = trace::read_trace_text(text, "oom.dat");
  ASSERT_EQ(t.oom_kills.size(), 1u);
  const trace::OomKill& r = t.oom_kills.front();
  EXPECT_DOUBLE_EQ(r.t, k.t);
  EXPECT_EQ(r.pid, 42);
  EXPECT_EQ(r.name, k.name);
  EXPECT_EQ(r.scope, k.scope);
  EXPECT_EQ(r.limit, k.limit);
  EXPECT_EQ(r.held, k.held);
  EXPECT_EQ(r.tree, k.tree);
  EXPECT_EQ(r.stage, "Load");
  // And the writer writes what the reader read.
  const test::RemovedTempFile file("oom_written.dat");
  const std::string& path = file.path();
  {
    trace::Writer w(path);
    w.mem(1795744560.0, kMiB);
    w.oom_kill(k);
    w.close();
  }
  const trace::Trace back = trace::read_trace(path);
  ASSERT_EQ(back.oom_kills.size(), 1u);
  EXPECT_EQ(back.oom_kills.front().name, k.name);
  EXPECT_EQ(back.oom_kills.front().limit, k.limit);
}

TEST(OomRecord, AMalformedOneIsFileAndLine) {
  try {
    trace::read_trace_text("MEM 1.0 1.0\nOOM 2.0 pid=abc\n", "bad.dat");
    FAIL() << "read";
  } catch (const trace::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.dat:2:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pid="), std::string::npos) << e.what();
  }
  EXPECT_THROW(trace::read_trace_text("MEM 1.0 1.0\nOOM nan pid=1\n", "bad.dat"), trace::ParseError);
  EXPECT_THROW(trace::read_trace_text("MEM 1.0 1.0\nOOM 2.0 novalue\n", "bad.dat"), trace::ParseError);
}

TEST(OomText, SaysProcessStageLimitAndHoldings) {
  trace::OomKill k;
  k.t = 12.5;
  k.pid = 42;
  k.name = "python3";
  k.role = "worker";
  k.source = "kernel-log";
  k.scope = "/slurm/job_5/step_0";
  k.limit = 300 * kMiB;
  k.held = 250 * kMiB;
  k.tree = 299 * kMiB;
  k.stage = "Load";
  EXPECT_EQ(trace::describe_oom_kill(k, 10.0),
            "process 42 (python3, a worker) killed by the kernel's OOM killer at 2.5 s, in stage Load: the memory "
            "limit of 300.0 MiB (cgroup /slurm/job_5/step_0) was reached; it held 250.0 MiB, the tree 299.0 MiB in "
            "the last sample before (kernel log)");
  k.scope = "machine";
  k.role = "command";
  EXPECT_NE(trace::describe_oom_kill(k, std::nullopt).find("(python3, the command)"), std::string::npos);
  EXPECT_NE(trace::describe_oom_kill(k, std::nullopt).find("the machine was out of memory"), std::string::npos);
}

TEST(Request, FootprintPlusMarginRoundedUpToAMiB) {
  const MemoryRequest r = memory_request(Bytes{4075} * kMiB / 10, "footprint", 0.15);  // 407.5 MiB
  EXPECT_EQ(r.bytes, 469 * kMiB);                                                      // 468.6 → 469
  EXPECT_EQ(slurm_request(r), "--mem=469M");
  EXPECT_EQ(kubernetes_request(r), "resources: {requests: {memory: 469Mi}, limits: {memory: 469Mi}}");
  EXPECT_EQ(docker_request(r), "--memory=469m");
  EXPECT_EQ(systemd_request(r), "MemoryMax=469M");
  EXPECT_EQ(request_rule(r), "footprint 407.5 MiB + 15 % margin");
  EXPECT_FALSE(r.grown_after_oom);
}

TEST(Request, AfterAnOomKillItGrowsAsVpasDoes) {
  // Killed at 300 MiB: max(300 + 100, 300 × 1.2) = 400 MiB, above the footprint's 298.7 × 1.15.
  MemoryRequest r = memory_request(Bytes{2987} * kMiB / 10, "footprint", 0.15, 300 * kMiB);
  EXPECT_EQ(r.bytes, 400 * kMiB);
  EXPECT_TRUE(r.grown_after_oom);
  EXPECT_NE(request_rule(r).find("after the OOM kill at the 300.0 MiB limit"), std::string::npos);
  // Killed at 2 GiB: × 1.2 is the larger (2457.6 → 2458 MiB).
  r = memory_request(2000 * kMiB, "footprint", 0.15, 2048 * kMiB);
  EXPECT_EQ(r.bytes, 2458 * kMiB);
  // A margin that already gives more keeps its own figure.
  r = memory_request(1000 * kMiB, "footprint", 0.5, 1000 * kMiB);
  EXPECT_EQ(r.bytes, 1500 * kMiB);
  EXPECT_FALSE(r.grown_after_oom);
}

TEST(Request, MarginParsesAsAPercentage) {
  EXPECT_DOUBLE_EQ(*parse_margin("15%"), 0.15);
  EXPECT_DOUBLE_EQ(*parse_margin("0"), 0.0);
  EXPECT_DOUBLE_EQ(*parse_margin("12.5"), 0.125);
  EXPECT_FALSE(parse_margin(""));
  EXPECT_FALSE(parse_margin("-5%"));
  EXPECT_FALSE(parse_margin("lots"));
  EXPECT_FALSE(parse_margin("2000%"));
}

}  // namespace
}  // namespace qprof
