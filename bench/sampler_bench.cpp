// SPDX-License-Identifier: Apache-2.0
// Per-sample cost of qprof's sampler and its parts (Google Benchmark). bench/run_benchmarks
// runs this and records medians in bench/RESULTS.md.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "qprof/common/clock.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/record/probes.hpp"
#include "qprof/record/proc_events.hpp"
#include "qprof/record/proc_tree.hpp"
#include "qprof/record/sampler.hpp"

namespace {

// A tree of `n` sleeping processes under one root, all in their own process group.
class SleepingTree {
 public:
  explicit SleepingTree(int n) {
    root_ = fork();
    if (root_ == 0) {
      setpgid(0, 0);
      for (int i = 1; i < n; ++i) {
        if (fork() == 0) {
          pause();
          _exit(0);
        }
      }
      pause();
      _exit(0);
    }
    setpgid(root_, root_);
    usleep(100000);  // let the children exist
  }
  ~SleepingTree() {
    kill(-root_, SIGKILL);
    waitpid(root_, nullptr, 0);
  }
  pid_t root() const { return root_; }

 private:
  pid_t root_;
};

// The tree of `n` sleeping processes, known to a sampler that writes to /dev/null.
struct SampledTree {
  explicit SampledTree(int n) : procs(n), out("/dev/null"), tree("/proc", getpid()), sampler(tree, out, clock, {}) {
    tree.add_root(procs.root());
    while (static_cast<int>(tree.members().size()) < n) sampler.sample(qprof::monotonic_ns());
  }
  SleepingTree procs;
  qprof::trace::Writer out;
  qprof::WallAnchor clock;
  qprof::record::ProcTree tree;
  qprof::record::Sampler sampler;
};

void BM_SampleTree(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  SampledTree t(n);
  for (auto _ : state) benchmark::DoNotOptimize(t.sampler.sample(qprof::monotonic_ns()));
  t.out.flush();
  state.counters["members"] = static_cast<double>(t.tree.members().size());
  state.counters["per_member_ns"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SampleTree)->Arg(1)->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);

// The stats path: CPU time, I/O and VmHWM of every member (every --stats-interval).
void BM_StatsTree(benchmark::State& state) {
  SampledTree t(static_cast<int>(state.range(0)));
  for (auto _ : state) t.sampler.sample_stats(qprof::monotonic_ns());
  t.out.flush();
}
BENCHMARK(BM_StatsTree)->Arg(1)->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);

// One smaps_rollup read of a process holding `MiB` of touched memory: what a PSS pass costs.
void BM_SmapsRollup(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0)) << 20;
  std::vector<char> held(bytes, 1);
  qprof::ProcFile rollup("/proc/self/smaps_rollup");
  char buf[4096];
  for (auto _ : state) benchmark::DoNotOptimize(rollup.read(buf, sizeof buf));
  // Time per read per GiB held (shown as a time).
  state.counters["per_GiB"] =
      benchmark::Counter(static_cast<double>(state.range(0)) / 1024.0,
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SmapsRollup)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_ReadRssKeptDescriptor(benchmark::State& state) {
  qprof::record::ProcTree tree("/proc", getpid());
  tree.add_root(getpid());
  qprof::record::Member& self = tree.members().front();
  for (auto _ : state) {
    qprof::record::read_rss(self, 4096);
    benchmark::DoNotOptimize(self.rss);
  }
}
BENCHMARK(BM_ReadRssKeptDescriptor);

// One listing of /proc, as prime() makes it (and the scan path whenever a PID was allocated
// on the machine, where the process-event connector is refused). The subscription prime()
// also makes is opened once, before the loop: it stands for the rest (BM_SubscribeProcEvents).
void BM_ListProc(benchmark::State& state) {
  qprof::record::ProcTree tree("/proc", getpid());
  tree.prime();
  for (auto _ : state) tree.prime();
}
BENCHMARK(BM_ListProc)->Unit(benchmark::kMicrosecond);

// The process-event subscription of a start: socket, bind, the kernel's acknowledgement, and
// the unsubscription and close at the end.
void BM_SubscribeProcEvents(benchmark::State& state) {
  for (auto _ : state) {
    qprof::record::ProcEvents events;
    benchmark::DoNotOptimize(events.open());
  }
}
BENCHMARK(BM_SubscribeProcEvents)->Unit(benchmark::kMicrosecond);

// Membership, the three ways issue 17 weighed (per refresh, whenever a PID was allocated on the
// machine): the tree's own children files (one per thread of every member), the cgroup's
// cgroup.procs (opened anew: cgroup v1 caches a kept descriptor's list), and the process-event
// connector (one recvmmsg; nothing queued here, the cost with no fork in between).
void BM_ReadChildrenFiles(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  SampledTree t(n);
  std::vector<qprof::ProcFile> files;
  for (const qprof::record::Member& m : t.tree.members()) {
    files.emplace_back("/proc/" + std::to_string(m.pid) + "/task/" + std::to_string(m.pid) + "/children");
  }
  char buf[4096];
  for (auto _ : state) {
    for (const qprof::ProcFile& f : files) benchmark::DoNotOptimize(f.read(buf, sizeof buf));
  }
}
BENCHMARK(BM_ReadChildrenFiles)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);

void BM_ReadCgroupProcs(benchmark::State& state) {
  std::string self;
  qprof::read_small_file("/proc/self/cgroup", self);
  // Our own group's list (v2 "0::/PATH", else v1's memory controller).
  std::string path, v1;
  for (std::size_t at = 0; at < self.size();) {
    const std::size_t nl = self.find('\n', at);
    const std::string line = self.substr(at, nl - at);
    at = nl == std::string::npos ? self.size() : nl + 1;
    if (line.rfind("0::", 0) == 0)
      path = "/sys/fs/cgroup" + line.substr(3);
    else if (line.find(":memory:") != std::string::npos)
      v1 = "/sys/fs/cgroup/memory" + line.substr(line.find(":memory:") + 8);
  }
  path = (v1.empty() ? path : v1) + "/cgroup.procs";
  std::string text;
  if (!qprof::read_small_file(path, text, 1 << 20)) {
    state.SkipWithError(("cannot read " + path).c_str());
    return;
  }
  std::vector<char> buf(1 << 20);
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    benchmark::DoNotOptimize(::read(fd, buf.data(), buf.size()));
    ::close(fd);
  }
  state.counters["pids"] = static_cast<double>(std::count(text.begin(), text.end(), '\n'));
}
BENCHMARK(BM_ReadCgroupProcs)->Unit(benchmark::kMicrosecond);

void BM_DrainProcessEvents(benchmark::State& state) {
  qprof::record::ProcEvents events;
  if (!events.open()) {
    state.SkipWithError("no process events here (needs CAP_NET_ADMIN in the initial namespaces)");
    return;
  }
  std::size_t forks = 0;
  for (auto _ : state) events.drain([&](const qprof::record::ProcEvents::Fork&) { ++forks; });
  state.counters["forks_seen"] = static_cast<double>(forks);
}
BENCHMARK(BM_DrainProcessEvents);

void BM_WriteMemLine(benchmark::State& state) {
  qprof::trace::Writer out("/dev/null");
  double t = 1.7e9;
  for (auto _ : state) {
    out.mem(t, 123456789);
    t += 0.01;
  }
  out.flush();
}
BENCHMARK(BM_WriteMemLine);

void BM_ParseMemLines(benchmark::State& state) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "MEM 1234.567890 1732181234.1235\n";
  struct Count : qprof::trace::Visitor {
    std::size_t n = 0;
    void mem(const qprof::trace::MemSample&) override { ++n; }
  } count;
  for (auto _ : state) qprof::trace::parse_text(text, "bench", count);
  state.SetItemsProcessed(state.iterations() * 100000);
}
BENCHMARK(BM_ParseMemLines)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
