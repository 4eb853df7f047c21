// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/sampler.hpp"

#include <algorithm>
#include <iterator>

#include "qprof/record/probes.hpp"
#include "qprof/common/proc_parse.hpp"

namespace qprof::record {
using trace::CgroupSample;
using trace::IoSample;
using trace::MemSample;
using trace::PssSample;

namespace {
// Samples after its first naming at which a member's name is read again: an exec comes within
// the first of them as a rule (a shell's fork then exec), a slow one (a Python launcher) later.
constexpr std::uint32_t kNameRecheckAt[] = {1, 10, 100};
}  // namespace

Sampler::Sampler(ProcTree& tree, trace::Writer& out, const WallAnchor& clock, SamplerConfig config, TreeCgroup* cgroup)
    : tree_(tree),
      out_(out),
      clock_(clock),
      config_(std::move(config)),
      cgroup_(cgroup),
      accounting_(config_.ticks_per_second) {
  if (config_.pss_interval)
    pss_ = std::make_unique<PssSampler>(config_.proc_root, *config_.pss_interval, clock_, config_.own_tree);
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
  // A live process always holds pages; members that read 0 are zombies whose memory is gone.
  // Such a sample would be taken after the tree exited: none rather than a false zero — unless
  // it would be the first, since a trace needs one sample to be read at all.
  if (total == 0 && count_ > 0) return std::nullopt;

  const MemSample s{clock_.unix_at(mono_ns), total};
  out_.mem(s.t, s.bytes);
  if (pss_) pss_->note_rss(total);
  if (config_.multiprocess) {
    for (Member& m : tree_.members()) {
      if (!m.named)
        name_member(m);
      else if (m.name_rechecks < std::size(kNameRecheckAt) &&
               ++m.samples_since_named >= kNameRecheckAt[m.name_rechecks]) {
        ++m.name_rechecks;
        name_member(m);
      }
      if (!m.is_root) out_.child(m.pid, s.t, m.rss);
    }
  }
  sample_charge(s.t);
  ++count_;
  if (count_ == 1 || s.bytes > peak_.bytes) {
    // Σ PSS can only peak where Σ RSS rises: a new high, by at least 1 MiB or 1 % over the last
    // one that asked, asks the PSS thread for a pass now (a page more is not worth a walk).
    if (pss_ && count_ > 1 && s.bytes >= rise_floor_) {
      sync_pss_members();
      pss_->rise();
      rise_floor_ = s.bytes + std::max<Bytes>(Bytes{1} << 20, s.bytes / 100);
    }
    peak_ = s;
  }
  last_ = s;
  return s;
}

void Sampler::sample_charge(Seconds t) {
  if (!cgroup_ || !cgroup_->has_memory()) return;
  const auto usage = cgroup_->usage();
  const auto peak = cgroup_->peak();
  if (!usage || !peak) return;
  // The parts come with the stats, and at each new high of the charge too: a job that fills
  // shared memory and is killed for it between two stats passes (the OOM killer within the
  // first 100 ms) still has its unreclaimable part, and the largest reading its split.
  if (*usage >= parts_rise_floor_) {
    cgroup_with_parts(t, *usage, *peak);
  } else {
    out_.cgroup({t, *usage, *peak, std::nullopt, std::nullopt, std::nullopt});
  }
  footprint_reading(*usage);
}

void Sampler::cgroup_with_parts(Seconds t, Bytes usage, Bytes peak) {
  const TreeCgroup::Parts parts = cgroup_->parts();
  const CgroupSample sample{t, usage, peak, parts.anon, parts.file, parts.shmem};
  out_.cgroup(sample);
  if (!largest_cgroup_ || usage > largest_cgroup_->usage) largest_cgroup_ = sample;
  if (const auto u = sample.unreclaimable())
    peak_cgroup_unreclaimable_ = std::max(peak_cgroup_unreclaimable_.value_or(0), *u);
  // A rise of a page is not worth a read: by at least 1 MiB or 1 %, as the PSS passes.
  parts_rise_floor_ = std::max(parts_rise_floor_, usage + std::max<Bytes>(Bytes{1} << 20, usage / 100));
}

void Sampler::footprint_reading(Bytes bytes) {
  footprint_now_ = bytes;
  footprint_peak_ = std::max(footprint_peak_, bytes);
}

void Sampler::close_cgroup_window(Seconds t) {
  if (!cgroup_ || !cgroup_->has_memory()) return;
  if (const auto window = cgroup_->close_window()) out_.cgroup_window(t, *window);
}

void Sampler::sync_pss_members() {
  if (tree_.generation() == pss_generation_) return;
  pss_generation_ = tree_.generation();
  pss_->set_members(tree_.members());
}

void Sampler::fresh_pss(Seconds budget) {
  if (!pss_) return;
  sync_pss_members();
  pss_->pass_now(budget);
}

void Sampler::sample_stats(std::int64_t mono_ns) {
  const Seconds t = clock_.unix_at(mono_ns);
  if (pss_) {
    sync_pss_members();
    pss_->drain([this](const PssSample& p) {
      out_.pss(p);
      latest_pss_ = p;
      if (!peak_pss_ || p.pss > peak_pss_->pss) peak_pss_ = p;
      peak_uss_ = std::max(peak_uss_, p.uss);
      if (p.unreclaimable) peak_pss_unreclaimable_ = std::max(peak_pss_unreclaimable_.value_or(0), *p.unreclaimable);
      if (!cgroup_ || !cgroup_->has_memory()) footprint_reading(p.pss);
    });
  }
  const TreeAccounting::Totals& totals = accounting_.read(tree_.members());
  IoSample io = totals.io;
  io.t = t;
  out_.io(io);
  out_.cpu({t, totals.cpu_seconds});
  out_.hwm(t, totals.hwm_sum);
  usage_.record(tree_.members(), t, out_);  // parsed by accounting_.read from the same status text
  if (cgroup_ && cgroup_->has_memory()) {
    const auto usage = cgroup_->usage();
    const auto peak = cgroup_->peak();
    if (usage && peak) {
      cgroup_with_parts(t, *usage, *peak);
      footprint_reading(*usage);
    }
  }
}

void Sampler::prune() {
  // A member may have forked just before it exited: find newcomers before judging the tree gone.
  tree_.refresh();
  for (Member& m : tree_.members()) read_rss(m, config_.page_size);
  tree_.prune([this](const Member& m) { accounting_.left(m); });
}

void Sampler::count_from_now() {
  tree_.refresh();
  accounting_.count_from_now(tree_.members());
}

void Sampler::name_member(Member& m) {
  // When it joins and at kNameRecheckAt samples after (not in the steady state): its name for
  // charts' legends, written again only when it changed (an exec after the join).
  m.named = true;
  std::string comm;
  if (!read_small_file(config_.proc_root + "/" + std::to_string(m.pid) + "/comm", comm, 64)) return;
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  comm.resize(std::min(comm.size(), sizeof m.comm - 1));
  if (comm.empty() || comm == m.comm) return;
  std::copy(comm.begin(), comm.end(), m.comm);
  m.comm[comm.size()] = '\0';
  out_.process_name(m.pid, comm);
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
  if (Member* m = find(pid))
    accounting_.after_reap(*m, usage);
  else
    accounting_.reaped_unseen(unseen_io_, usage);
}

}  // namespace qprof::record
