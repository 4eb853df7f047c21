#include "qprof/record/sampler.hpp"

#include <algorithm>

#include "qprof/record/probes.hpp"
#include "qprof/common/proc_parse.hpp"

namespace qprof {

Sampler::Sampler(ProcTree& tree, dat::Writer& out, const WallAnchor& clock, SamplerConfig config,
                 const TreeCgroup* cgroup)
    : tree_(tree), out_(out), clock_(clock), config_(std::move(config)), cgroup_(cgroup),
      accounting_(config_.ticks_per_second) {
  if (config_.pss_interval) pss_ = std::make_unique<PssSampler>(config_.proc_root, *config_.pss_interval, clock_);
}

std::optional<MemSample> Sampler::sample(std::int64_t mono_ns) {
  tree_.refresh();
  Bytes total = 0;
  for (Member& m : tree_.members()) {
    read_rss(m, config_.page_size);
    total += m.rss;
  }
  tree_.prune([this](const Member& m) { accounting_.left(m); });
  if (tree_.empty()) return std::nullopt;

  const MemSample s{clock_.unix_at(mono_ns), total};
  out_.mem(s.t, s.bytes);
  if (config_.multiprocess) {
    for (const Member& m : tree_.members()) {
      if (!m.is_root) out_.child(m.pid, s.t, m.rss);
    }
  }
  ++count_;
  if (count_ == 1 || s.bytes > peak_.bytes) peak_ = s;
  last_ = s;
  return s;
}

void Sampler::sample_stats(std::int64_t mono_ns) {
  const Seconds t = clock_.unix_at(mono_ns);
  if (pss_) {
    if (tree_.generation() != pss_generation_) {
      pss_generation_ = tree_.generation();
      pss_->set_members(tree_.members());
    }
    pss_->drain([this](const PssSample& p) {
      out_.pss(p);
      latest_pss_ = p;
      if (!peak_pss_ || p.pss > peak_pss_->pss) peak_pss_ = p;
      peak_uss_ = std::max(peak_uss_, p.uss);
    });
  }
  const TreeAccounting::Totals& totals = accounting_.read(tree_.members());
  IoSample io = totals.io;
  io.t = t;
  out_.io(io);
  out_.cpu({t, totals.cpu_seconds});
  out_.hwm(t, totals.hwm_sum);
  if (cgroup_ && cgroup_->has_memory()) {
    const auto usage = cgroup_->usage();
    const auto peak = cgroup_->peak();
    if (usage && peak) {
      latest_cgroup_ = CgroupSample{t, *usage, *peak};
      out_.cgroup(*latest_cgroup_);
    }
  }
}

void Sampler::prune() {
  // A member may have forked just before it exited: find newcomers before judging the tree gone.
  tree_.refresh();
  for (Member& m : tree_.members()) read_rss(m, config_.page_size);
  tree_.prune([this](const Member& m) { accounting_.left(m); });
}

Member* Sampler::find(pid_t pid) {
  for (Member& m : tree_.members()) {
    if (m.pid == pid) return &m;
  }
  return nullptr;
}

void Sampler::before_reap(pid_t pid) {
  if (Member* m = find(pid)) {
    accounting_.before_reap(*m);
    return;
  }
  // Every child qprof reaps belongs to the tree (the command, or an orphan of it).
  unseen_io_ = IoSample{};
  std::string text;
  if (read_small_file(config_.proc_root + "/" + std::to_string(pid) + "/io", text)) {
    if (const auto io = proc::parse_io(text)) {
      unseen_io_ = {0, io->read_bytes, io->write_bytes, io->rchar, io->wchar};
    }
  }
}

void Sampler::after_reap(pid_t pid, const rusage& usage) {
  if (Member* m = find(pid)) accounting_.after_reap(*m, usage);
  else accounting_.reaped_unseen(unseen_io_, usage);
}

}  // namespace qprof
