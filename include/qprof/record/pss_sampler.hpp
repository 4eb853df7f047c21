// SPDX-License-Identifier: Apache-2.0
// PSS and USS of the tree from /proc/PID/smaps_rollup, on a thread and a schedule of their own:
// a read walks the target's page tables under its mmap lock (≈2.8 ms per GB here), so it must
// neither delay the RSS samples nor run more often than its own cost allows.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "qprof/common/clock.hpp"
#include "qprof/common/proc_file.hpp"
#include "qprof/common/proc_parse.hpp"
#include "qprof/record/proc_tree.hpp"
#include "qprof/record/pss_pass.hpp"

namespace qprof::record {

class PssSampler {
 public:
  // A pass over the tree costs `c` of CPU: the next one starts no sooner than max(interval, c × this).
  static constexpr double kCostFactor = 20.0;  // at most 5 % of the time spent walking
  // A scheduled pass is skipped while the tree is seen to be still (a sample since the last pass,
  // the same members and the same Σ RSS as then), up to this long; a sampler slower than the
  // passes (-i 1) gives no such evidence, and every pass is taken: an idle tree of hundreds of processes costs what it
  // did at one pass a second, while a tree that moves is read at every interval. Σ PSS of a still tree changes only
  // where it shares pages with processes outside it, which this bound follows.
  static constexpr std::chrono::milliseconds kStillPassSpacing{1000};
  // The least time between passes asked for by new highs of Σ RSS: a tenth of the time since the
  // first pass, from kFirstRiseSpacing to kRiseSpacing. A job of a fraction of a second reaches
  // its peak within the first 100 ms; a long one is not walked that often for its growth.
  static constexpr std::chrono::milliseconds kFirstRiseSpacing{10};
  static constexpr std::chrono::milliseconds kRiseSpacing{100};
  static std::chrono::nanoseconds rise_spacing(std::chrono::nanoseconds since_first_pass);
  // A pass whose reading moved (PssPass::moved) is read again, up to this many readings in all.
  static constexpr int kReadings = 6;

  // `own_tree`: qprof started the tree (assemble_pss_pass); false for an attached one.
  PssSampler(std::string proc_root, Seconds interval, const WallAnchor& clock, bool own_tree = true);
  ~PssSampler();
  PssSampler(const PssSampler&) = delete;
  PssSampler& operator=(const PssSampler&) = delete;

  // From the sampler thread, when membership changed.
  void set_members(const std::vector<Member>& members);
  // Passes finished since the last call, oldest first; `f(const PssSample&)`. Never blocks on
  // a pass in progress.
  template <typename F>
  void drain(F&& f) {
    std::lock_guard<std::mutex> lock(results_mu_);
    while (read_ != written_) f(results_[read_++ % results_.size()]);
  }

  // From the sampler thread, at a marker: asks for a pass now and waits for it, at most `budget`;
  // not asked at all when the last pass cost more than the budget. True when a pass that started
  // after the call finished in time (drain() then has it).
  bool pass_now(Seconds budget);

  // From the sampler thread, at every sample: the tree's Σ RSS, by which a still tree is known.
  void note_rss(Bytes total) {
    rss_now_.store(total, std::memory_order_relaxed);
    rss_notes_.fetch_add(1, std::memory_order_relaxed);
  }

  // From the sampler thread, when the tree's Σ RSS reached a new high: a pass as soon as the cost
  // budget allows (sooner than the schedule's next one), without waiting for it.
  void rise();

  Seconds interval() const { return interval_ns_.load() * 1e-9; }  // as adapted
  std::uint64_t passes() const { return passes_.load(); }
  // Of those, the passes taken early for a new Σ RSS high.
  std::uint64_t rise_passes() const {
    std::lock_guard<std::mutex> lock(stop_mu_);
    return rise_passes_;
  }
  // Readings taken again at once because the tree's sharing moved during the one before (each
  // extra reading of a pass counts).
  std::uint64_t rereads() const { return rereads_.load(); }

 private:
  struct Target {
    pid_t pid;
    std::uint64_t start_ticks;
    // smaps_rollup is opened afresh at every pass: a descriptor kept open shows the address
    // space the process had when it was opened, so a process that execs (sh -c 'exec python3',
    // a pyenv shim, env) would read as gone from then on; and one opened while a vfork child
    // still shares its parent's memory would show the parent's.
    ProcDir dir;
    // Found by the pass among a target's children, not yet a member the sampler thread knows:
    // dropped once it is a member or gone.
    bool found = false;
    bool read = false;  // its rollup was read in the last reading
    pid_t parent = 0;   // the process that forked it, where known
    // Known to have an address space of its own: a process gets a new one only at exec, so a child
    // seen apart from its parent's never shares it again.
    bool own_memory = false;
    // Still in its parent's address space at the last reading (a vfork or posix_spawn child
    // before its exec): not read, its pages are its parent's.
    bool in_parent = false;
  };
  void loop();
  void pass();
  // Every target's rollup, between two readings of their resident sizes; `at`: when it began.
  // `again`: right after another reading, whose closing sizes open this one.
  PssPass read_pass(Seconds& at, bool again);
  // status's resident sizes by kind: nothing held once the process exited or is a zombie,
  // nullopt when it is gone.
  static std::optional<ResidentKinds> resident(const Target& t);
  // Its smaps_rollup, opened afresh; nullopt when it is gone, a zombie, or unreadable.
  static std::optional<proc::Rollup> rollup_of(const Target& t);
  // Whether `t` still runs in its parent's address space (kcmp KCMP_VM): its smaps_rollup is then
  // its parent's, and reading both counts the parent twice. Asked until it has one of its own;
  // false where it cannot be told (a /proc of recorded files, kcmp not permitted).
  bool in_parents_memory(Target& t) const;
  // The members come from the sampler thread's last look at the tree, up to a stats interval old,
  // and a process forked since shares its parent's pages: its parent's PSS halves while the child
  // is unread. The children of every target not yet a target become targets, theirs too: those of
  // its main thread (one file a process, as a fork is looked for at most passes), or with
  // `all_threads` of every thread (a file a thread: where a reading says a sharer is unread).
  // Returns how many. pss_children.cpp.
  std::size_t add_children(bool all_threads);
  // The newest PID of this PID namespace (/proc/loadavg's last field); nullopt where unreadable.
  std::optional<std::int64_t> last_pid();
  // Whether a gap in the tree's shares of shared memory is worth a look for children: not again
  // where the last look found none and no process was created since.
  bool shmem_gap_worth_a_look();
  // Whether a PID was allocated (a fork or a thread) since `seen`, the newest PID of
  // /proc/loadavg, which it then becomes: no fork, no child to look for. True when unreadable.
  bool forked_since(std::optional<std::int64_t>& seen);
  // Targets from `from` on, forked during the reading: read into it, after the others.
  void read_joined(std::size_t from);
  void sync_targets();

  std::string proc_root_;
  const WallAnchor& clock_;
  const std::int64_t asked_ns_;
  const bool own_tree_;
  std::atomic<std::int64_t> interval_ns_;
  std::atomic<std::uint64_t> passes_{0};
  std::atomic<std::uint64_t> rereads_{0};

  std::mutex members_mu_;
  struct Listed {
    pid_t pid, ppid;
    std::uint64_t start_ticks;
  };
  std::vector<Listed> members_;            // guarded by members_mu_
  std::uint64_t members_version_ = 0;      // guarded by members_mu_
  std::uint64_t seen_version_ = 0;         // thread only
  std::vector<Target> targets_;            // thread only
  std::vector<PssReading> readings_;       // thread only: the pass's readings
  std::vector<std::size_t> read_targets_;  // thread only: whose they are (targets_ index)
  ProcFile loadavg_;                       // thread only
  // The newest PID of /proc/loadavg at the last look for children (forked_since): thread only.
  std::optional<std::int64_t> complete_at_;
  // The last look followed a PID taken (one more look: a child is linked to its parent after its
  // PID is taken): thread only.
  bool look_again_ = false;
  // The newest PID when a look for an unread sharer of shared memory found none: a sharer outside
  // the tree, looked for again only once a process was created since (thread only).
  std::optional<std::int64_t> outside_sharer_at_;
  // False in a pass a marker waits for. Looking at children while a tree forks waits on its mmap
  // locks (a marker's pass read during 4 forks of 200 MiB took 50-100 ms, and every sample of
  // those ms came late): thread only.
  bool look_for_children_ = true;
  std::vector<pid_t> children_;                           // thread only: a scan's buffer
  std::string text_;                                      // thread only: a children file's text
  std::vector<std::optional<ResidentKinds>> last_after_;  // thread only: by target, the last reading's end

  std::mutex results_mu_;
  std::array<trace::PssSample, 256> results_{};  // a ring: the oldest results give way if nobody drains
  std::uint64_t read_ = 0, written_ = 0;

  mutable std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::uint64_t wanted_ = 0, done_ = 0;  // passes asked for by pass_now, and served; guarded by stop_mu_
  bool rise_asked_ = false;              // guarded by stop_mu_
  std::uint64_t rise_passes_ = 0;        // guarded by stop_mu_
  std::condition_variable done_cv_;
  std::atomic<std::int64_t> last_cost_ns_{0};
  std::atomic<Bytes> rss_now_{0};
  std::atomic<std::uint64_t> rss_notes_{0};
  std::uint64_t notes_at_pass_ = 0;                    // thread only
  bool still_since_last_pass();                        // thread only
  Bytes rss_at_pass_ = ~Bytes{0};                      // thread only
  std::chrono::steady_clock::time_point last_pass_{};  // thread only
  std::uint64_t version_at_pass_ = 0;                  // thread only
  std::thread thread_;
};

}  // namespace qprof::record
