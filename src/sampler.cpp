#include "qprof/sampler.hpp"

#include "qprof/probes.hpp"

namespace qprof {

Sampler::Sampler(ProcTree& tree, dat::Writer& out, const WallAnchor& clock, SamplerConfig config)
    : tree_(tree), out_(out), clock_(clock), config_(config) {}

std::optional<MemSample> Sampler::sample(std::int64_t mono_ns) {
  tree_.refresh();
  Bytes total = 0;
  for (Member& m : tree_.members()) {
    read_rss(m, config_.page_size);
    total += m.rss;
  }
  tree_.prune();
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

void Sampler::prune() {
  // A member may have forked just before it exited: find newcomers before judging the tree gone.
  tree_.refresh();
  for (Member& m : tree_.members()) read_rss(m, config_.page_size);
  tree_.prune();
}

}  // namespace qprof
