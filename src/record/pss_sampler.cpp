// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/pss_sampler.hpp"

#include <linux/kcmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "qprof/common/proc_parse.hpp"
#include "qprof/common/proc_status.hpp"

namespace qprof::record {
using trace::PssSample;

PssSampler::PssSampler(std::string proc_root, Seconds interval, const WallAnchor& clock, bool own_tree)
    : proc_root_(std::move(proc_root)),
      clock_(clock),
      asked_ns_(static_cast<std::int64_t>(interval * 1e9)),
      own_tree_(own_tree),
      interval_ns_(asked_ns_),
      loadavg_(proc_root_ + "/loadavg"),
      thread_([this] { loop(); }) {}

PssSampler::~PssSampler() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void PssSampler::set_members(const std::vector<Member>& members) {
  std::lock_guard<std::mutex> lock(members_mu_);
  members_.clear();
  for (const Member& m : members) members_.push_back({m.pid, m.ppid, m.start_ticks});
  ++members_version_;
}

void PssSampler::loop() {
  // Signals belong to the sampler thread (its sleep is the one they must interrupt).
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  using Clock = std::chrono::steady_clock;
  auto next = Clock::now();
  const auto first = next;
  auto earliest = next;  // the cost budget's bound: no pass sooner, whoever asks
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stop_) {
    stop_cv_.wait_until(lock, next, [this] { return stop_ || wanted_ > done_ || rise_asked_; });
    if (stop_) break;
    if (wanted_ <= done_ && rise_asked_ && Clock::now() < next) {
      // A new Σ RSS high: read it as soon as the budget allows rather than at the next tick,
      // so that the footprint's peak is measured near the peak.
      stop_cv_.wait_until(lock, earliest, [this] { return stop_ || wanted_ > done_; });
      if (stop_) break;
      if (wanted_ <= done_) ++rise_passes_;
    }
    const bool scheduled = wanted_ <= done_ && !rise_asked_;
    if (scheduled && Clock::now() - last_pass_ < kStillPassSpacing && still_since_last_pass()) {
      next = Clock::now() + std::chrono::nanoseconds(interval_ns_.load());
      continue;
    }
    rise_asked_ = false;
    // A marker waits for this pass: read the members the tree listed, as fast as it goes (the
    // anonymous-memory floor still holds it up); the children are looked for by the next.
    look_for_children_ = wanted_ <= done_;
    const std::uint64_t serving = wanted_;
    lock.unlock();
    const auto began = Clock::now();
    last_pass_ = began;
    const std::int64_t begin = monotonic_ns(), cpu_begin = thread_cpu_ns();
    pass();
    last_cost_ns_.store(monotonic_ns() - begin);  // what a marker would wait for
    // The budget counts the pass's CPU time (the page-table walks, under each target's mmap
    // lock): on a busy machine its wall time also holds the time the thread waited for a core,
    // which stretched the schedule to seconds and left a job's peak unread.
    const std::int64_t cost = thread_cpu_ns() - cpu_begin;
    {
      std::lock_guard<std::mutex> served(stop_mu_);
      done_ = serving;
    }
    done_cv_.notify_all();
    const std::int64_t budget = static_cast<std::int64_t>(static_cast<double>(cost) * kCostFactor);
    const std::int64_t interval = std::max(asked_ns_, budget);
    interval_ns_.store(interval);
    // A rise's pass waits for the budget, and for kRiseSpacing: a job that grows on every sample
    // would otherwise be walked as often as the budget allows, which costs it its mmap lock.
    earliest = began + std::max(std::chrono::nanoseconds(budget), rise_spacing(began - first));
    next = began + std::chrono::nanoseconds(interval);
    const auto now = Clock::now();
    if (next < now) next = now;  // fell behind: skip, do not catch up
    lock.lock();
  }
}

bool PssSampler::still_since_last_pass() {
  std::lock_guard<std::mutex> lock(members_mu_);
  return members_version_ == version_at_pass_ && rss_notes_.load(std::memory_order_relaxed) > notes_at_pass_ &&
         rss_now_.load(std::memory_order_relaxed) == rss_at_pass_;
}

std::chrono::nanoseconds PssSampler::rise_spacing(std::chrono::nanoseconds since_first_pass) {
  return std::clamp<std::chrono::nanoseconds>(since_first_pass / 10, kFirstRiseSpacing, kRiseSpacing);
}

void PssSampler::rise() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    if (rise_asked_) return;
    rise_asked_ = true;
  }
  stop_cv_.notify_all();
}

bool PssSampler::pass_now(Seconds budget) {
  const auto budget_ns = static_cast<std::int64_t>(budget * 1e9);
  if (last_cost_ns_.load() > budget_ns) return false;
  std::unique_lock<std::mutex> lock(stop_mu_);
  const std::uint64_t ticket = ++wanted_;
  stop_cv_.notify_all();
  return done_cv_.wait_for(lock, std::chrono::nanoseconds(budget_ns), [&] { return stop_ || done_ >= ticket; }) &&
         !stop_;
}

std::optional<ResidentKinds> PssSampler::resident(const Target& t) {
  char buf[4096];
  const ssize_t n = t.dir.open("status").read(buf, sizeof buf);
  if (n <= 0) return std::nullopt;
  const proc::StatusUsage u = proc::parse_status_usage(std::string_view(buf, static_cast<std::size_t>(n)));
  if (!u.valid) return std::nullopt;
  return ResidentKinds{u.anon, u.file, u.shmem};  // nothing held by a process past its exit_mm
}

std::optional<proc::Rollup> PssSampler::rollup_of(const Target& t) {
  char buf[4096];
  const ssize_t n = t.dir.open("smaps_rollup").read(buf, sizeof buf);
  if (n <= 0) return std::nullopt;  // gone, or a zombie
  return proc::parse_smaps_rollup(std::string_view(buf, static_cast<std::size_t>(n)));
}

bool PssSampler::in_parents_memory(Target& t) const {
  // An attached root is listed as its own parent (the tree's self is the root there).
  if (t.own_memory || t.parent <= 0 || t.parent == t.pid || proc_root_ != "/proc") return false;
  const long order = ::syscall(SYS_kcmp, t.parent, t.pid, KCMP_VM, 0UL, 0UL);
  t.in_parent = order == 0;
  // Apart (1, 2 or 3), or no way to tell: ESRCH for a parent killed in the vfork leaves the child
  // the address space alone; EPERM or ENOSYS where kcmp is not allowed.
  if (order != 0) t.own_memory = true;
  return t.in_parent;
}

PssPass PssSampler::read_pass(Seconds& at, bool again) {
  // Each member's resident sizes before the first rollup, right after its own and after the last:
  // what it mapped or dropped meanwhile. A reading taken again at once starts from the sizes the
  // one before ended on (read just then).
  readings_.clear();
  read_targets_.resize(targets_.size());
  last_after_.resize(targets_.size());  // children found since the reading before start afresh
  for (std::size_t i = 0; i < targets_.size(); ++i)
    readings_.push_back({{}, again && last_after_[i] ? last_after_[i] : resident(targets_[i]), std::nullopt});
  at = clock_.unix_at(monotonic_ns());
  std::size_t kept = 0;
  // A member read by the reading before and not now is exiting: its smaps_rollup is gone while it
  // still unmaps its pages. (One never read, a zombie or a rollup refused, says nothing of them.)
  bool left_now = false;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    const bool was_read = targets_[i].read;
    targets_[i].read = false;
    if (in_parents_memory(targets_[i])) continue;
    const auto r = rollup_of(targets_[i]);
    left_now = left_now || (!r && was_read);
    if (!r) continue;
    targets_[i].read = true;
    readings_[i].rollup = *r;
    readings_[i].at = resident(targets_[i]);
    read_targets_[kept] = i;
    readings_[kept++] = readings_[i];
  }
  readings_.resize(kept);
  for (std::size_t i = 0; i < kept; ++i) {
    // The last member's sizes right after its rollup are already after the last rollup.
    if (i + 1 < kept)
      readings_[i].after = resident(targets_[read_targets_[i]]);
    else
      readings_[i].after = readings_[i].at;
  }
  // A member that forked during the reading: its parent may have been read at the new share.
  const std::size_t known = targets_.size();
  if (look_for_children_ && forked_since(complete_at_) && add_children(false) > 0) read_joined(known);
  last_after_.assign(targets_.size(), std::nullopt);
  for (std::size_t i = 0; i < readings_.size(); ++i) last_after_[read_targets_[i]] = readings_[i].after;
  return assemble_pss_pass(readings_, {.own = own_tree_, .member_left = left_now});
}

void PssSampler::read_joined(std::size_t from) {
  read_targets_.resize(targets_.size());
  for (std::size_t i = from; i < targets_.size(); ++i) {
    if (in_parents_memory(targets_[i])) continue;
    const auto r = rollup_of(targets_[i]);
    if (!r) continue;
    targets_[i].read = true;
    const auto sizes = resident(targets_[i]);
    read_targets_[readings_.size()] = i;
    readings_.push_back({*r, std::nullopt, sizes, sizes, true});
  }
}

void PssSampler::sync_targets() {
  std::lock_guard<std::mutex> lock(members_mu_);
  version_at_pass_ = members_version_;
  if (members_version_ == seen_version_) return;
  seen_version_ = members_version_;
  std::vector<Target> next;
  for (const Listed& member : members_) {
    auto kept = std::find_if(targets_.begin(), targets_.end(), [&](const Target& t) {
      return !t.found && t.pid == member.pid && t.start_ticks == member.start_ticks;
    });
    if (kept != targets_.end()) {
      next.push_back(std::move(*kept));
    } else {
      next.push_back({member.pid, member.start_ticks, ProcDir(proc_root_ + "/" + std::to_string(member.pid))});
      next.back().parent = member.ppid;
      // A child the pass found, now a member: what the readings knew of it goes on (read by the
      // last one: exiting, it is said to have left; its own address space: not asked again).
      const auto found = std::find_if(targets_.begin(), targets_.end(),
                                      [&](const Target& t) { return t.found && t.pid == member.pid; });
      if (found != targets_.end()) {
        next.back().read = found->read;
        next.back().own_memory = found->own_memory;
      }
    }
  }
  // A child the pass found stays a target until the sampler thread knows it (its own directory
  // then, opened for the member's start time).
  for (Target& t : targets_) {
    const bool member = std::any_of(members_.begin(), members_.end(), [&](const Listed& m) { return m.pid == t.pid; });
    if (t.found && !member) next.push_back(std::move(t));
  }
  targets_.swap(next);
}

void PssSampler::pass() {
  notes_at_pass_ = rss_notes_.load(std::memory_order_relaxed);
  rss_at_pass_ = rss_now_.load(std::memory_order_relaxed);
  sync_targets();
  if (targets_.empty()) return;
  // Children forked since the targets were last completed: read from the pass's start.
  if (look_for_children_ && forked_since(complete_at_)) add_children(false);
  // A pass during which the tree's sharing moved is read again at once, up to kReadings times,
  // and the reading that moved least is kept, its bound taken off: a worker that maps its
  // parent's buffer moves for a few milliseconds, and a later reading comes after it. So is one
  // during which a member forked, with the child read from its start.
  Seconds at = 0;
  PssPass best = read_pass(at, false);
  PssPass last = best;
  // A sharer unread (a child whose PID was taken before the last look but not yet linked to its
  // parent, or one being forked: its parent's pages already shared, no PID yet) is looked for
  // once, on every thread; the anonymous floor holds the sum up meanwhile. A gap in shared memory
  // alone, where that look finds no child, is a sharer outside the tree: read again, it stays.
  // Where it finds one, the reading without it was short, however still: the next one replaces
  // it. More readings of a tree that forks cost its processes' page-table walks again (on 2
  // vCPUs, samples came late).
  bool gap_looked = false;
  for (int again = 1; again < kReadings; ++again) {
    bool for_gap = false, found = false;
    // A marker's pass looks too where shared memory falls short: no floor holds it up. A gap of
    // shared memory alone that a look explained as a sharer outside the tree is looked into again
    // only once a process was created since (each pass paid a walk of every thread's children).
    const bool shmem_only = last.anon_gap == 0 && last.shmem_gap > 0;
    if (last.gap() > 0 && !gap_looked && (look_for_children_ || last.shmem_gap > 0) &&
        (!shmem_only || shmem_gap_worth_a_look())) {
      gap_looked = true;
      found = add_children(true) > 0;
      for_gap = found || (last.anon_gap > 0 && look_for_children_);
      if (shmem_only && !found) outside_sharer_at_ = last_pid();
    }
    if (!best.moved() && !for_gap) break;
    ++rereads_;
    Seconds again_at = 0;
    PssPass next = read_pass(again_at, true);
    last = next;
    if (next.counted > 0 && (found || next.motion() + next.gap() < best.motion() + best.gap())) {
      best = next;
      at = again_at;
    }
  }
  // A child found that is gone (or a zombie) is looked for no more.
  std::erase_if(targets_, [](const Target& t) { return t.found && !t.read && !t.in_parent; });
  if (best.counted == 0) return;  // the tree is gone: no figure rather than a false zero
  PssSample sum = best.sum;
  sum.t = at;
  ++passes_;
  std::lock_guard<std::mutex> lock(results_mu_);
  results_[written_++ % results_.size()] = sum;
  if (written_ - read_ > results_.size()) read_ = written_ - results_.size();
}

}  // namespace qprof::record
