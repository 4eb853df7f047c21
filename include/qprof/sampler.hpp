// One sample of the tree: membership, every member's RSS, the trace lines. Called on the run
// loop's fixed-deadline schedule and at every marker; allocation-free once the tree is known.
#pragma once

#include <cstdint>
#include <optional>

#include "qprof/clock.hpp"
#include "qprof/dat_format.hpp"
#include "qprof/proc_tree.hpp"

namespace qprof {

struct SamplerConfig {
  Bytes page_size = 4096;
  bool multiprocess = false;  // CHLD lines per member, as mprof -M
};

class Sampler {
 public:
  Sampler(ProcTree& tree, dat::Writer& out, const WallAnchor& clock, SamplerConfig config);

  // Samples the tree now and writes its lines. Returns nullopt (and writes nothing) once the
  // tree is empty.
  std::optional<MemSample> sample(std::int64_t mono_ns);
  // Updates membership without writing a sample (after a reap): newcomers join, the gone leave.
  void prune();

  std::uint64_t count() const { return count_; }
  const MemSample& peak() const { return peak_; }
  const MemSample& last() const { return last_; }

 private:
  ProcTree& tree_;
  dat::Writer& out_;
  const WallAnchor& clock_;
  SamplerConfig config_;
  std::uint64_t count_ = 0;
  MemSample peak_;
  MemSample last_;
};

}  // namespace qprof
