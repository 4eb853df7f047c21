// SPDX-License-Identifier: Apache-2.0
// qprof fit's search: which limit to try next, and what the probes found. Pure functions of the
// probes' outcomes, so that the decisions are tested on fabricated outcomes.
//
// A probe reaches one of four levels, which grow with the limit (more memory never makes a job
// fail where less let it run): it does not run (OOM-killed, or failed otherwise), it runs but
// was stopped as too slow, it completes within the slowdown, it completes at full speed. Each of
// the three findings is the lowest limit of a level; the search bisects the three boundaries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qprof/common/types.hpp"

namespace qprof::fit {

// cuda_oom: fit --gpu's probe failed with CUDA's (or PyTorch's) out-of-memory message.
enum class Outcome { completed, oom_killed, too_slow, failed, cuda_oom };
const char* outcome_name(Outcome o);  // "completed", "OOM-killed", "too slow", "failed", "CUDA OOM"
const char* outcome_key(Outcome o);   // for JSON/CSV: "completed", "oom_killed", "too_slow", "failed", "cuda_oom"

// One run of the command. `limit` 0 is the unlimited run (the baseline).
struct Probe {
  Bytes limit = 0;
  Outcome outcome = Outcome::completed;
  double seconds = 0;
  std::optional<std::uint64_t> major_faults;
  std::optional<Bytes> read_bytes;  // from storage
  int exit_status = 0;              // the code, or 128 + signal; qprof's own kill for too_slow
  std::string detail;               // how it ended, in words ("exit status 1", "killed by SIGSEGV")
  // fit --gpu: the tree's peak on the device (GPU sampler), and the largest figures PyTorch's
  // allocator sent with a checkpoint (TORCH lines), where the run had them.
  std::optional<Bytes> gpu_peak, torch_allocated, torch_reserved;
};

// The unlimited run: how fast the job is and the range the limit is searched in.
struct Baseline {
  Probe run;
  Bytes charge_peak = 0;         // the group's peak charge: the footprint, page cache included
  Bytes unreclaimable_peak = 0;  // anonymous + shared memory, sampled: the least it could run in
};

// How close the search brings each boundary: a gap is closed when it is no wider than the larger
// of `floor` and `fraction` of the limit above it.
struct Resolution {
  Bytes floor = Bytes{8} << 20;
  double fraction = 0.02;
  Bytes at(Bytes limit) const;
};

enum class Level { does_not_run = 0, runs = 1, within_slowdown = 2, full_speed = 3 };
// Full speed: completed within `full_speed_margin` (0.10: 10 %) of the baseline's duration.
Level level_of(const Probe& p, double baseline_seconds, double full_speed_margin = 0.10);

// How the probe ended, from what qprof saw: it stopped the probe for its time, the group's OOM
// kill count (nullopt where the kernel does not say), the wait status. A non-zero exit without
// an OOM kill is a failure, never an OOM; a SIGKILL nobody else sent counts as the OOM killer's
// only where the kernel gives no count.
Outcome outcome_of(int wait_status, bool stopped_as_too_slow, std::optional<std::uint64_t> oom_kills);

// A limit where the runs did not all agree with the finding: some fell short of the level above
// it (noise: fewer than half, so the limit still counts as reaching it), or some reached the level
// below a limit where most fell short (the job is not monotone there).
struct Disagreement {
  Bytes limit = 0;
  int runs = 0;           // at this limit
  int reached = 0;        // of them, how many reached the level
  std::size_t probe = 0;  // the run that disagrees (above: one that fell short; below: one that reached)
};

// The lowest limit of a level, and the highest limit seen to fall short of it: the boundary lies
// between the two. A limit falls short where most of its runs did (a single run decides alone).
// `probe` indexes the probes; nullopt where the finding is the baseline's peak charge (no limited
// probe reached the level). `short_of` is the unreclaimable peak where no probe fell short (the
// assumed floor).
struct Finding {
  Bytes limit = 0;
  std::optional<std::size_t> probe;
  Bytes short_of = 0;
  std::vector<Disagreement> noisy;         // at or above `limit`: some runs fell short
  std::vector<Disagreement> not_monotone;  // below `short_of`: some runs reached the level
};
struct Findings {
  std::optional<Finding> runs;             // the smallest limit it runs in (not OOM-killed)
  std::optional<Finding> within_slowdown;  // the smallest it completes in within --max-slowdown
  std::optional<Finding> full_speed;       // the smallest at full speed
};

// The bisection between the baseline's unreclaimable peak (taken to fall short: the job cannot
// run in less) and its peak charge (taken to run at full speed: it did so unlimited). A result
// that is not monotone (a limit falling short above one that reached the level) is probed again
// before the bisection goes on: the limit that fell short once, then, where it fell short again,
// the nearest limit below that reached the level. Each is repeated once at most.
class LimitSearch {
 public:
  LimitSearch(const Baseline& baseline, Resolution resolution, double full_speed_margin = 0.10);
  void add(const Probe& p);
  // The limit to try next: a disagreeing limit again, else the middle of the widest open gap;
  // nullopt when every boundary is known to the resolution and no disagreement is left to repeat.
  std::optional<Bytes> next() const;
  // The disagreeing limit to run again, if any.
  std::optional<Bytes> repeat() const;
  // Probes the open gaps still need, at most (their bisections can share probes).
  int remaining_estimate() const;
  Findings findings() const;
  const std::vector<Probe>& probes() const { return probes_; }
  // Full speed is measured against the fastest completed run, the baseline included: a limit
  // does not make a job faster, so a limited run faster than the baseline says the baseline was
  // slowed by something else (a busy machine), and judging against it would call slow runs fast.
  double reference_seconds() const;

 private:
  struct Gap {
    Bytes short_of;  // highest limit below the level
    Bytes reached;   // lowest limit above that reaching it
    std::optional<std::size_t> probe;
  };
  // The runs at one limit, for one level.
  struct Tally {
    Bytes limit = 0;
    int runs = 0, reached = 0;
    std::optional<std::size_t> first_reached, first_short;
    bool falls_short() const { return 2 * reached < runs; }
  };
  std::vector<Tally> tallies(Level level) const;  // by limit, lowest first
  Gap gap(Level level) const;
  std::optional<Bytes> bisection() const;

  Bytes low_, high_;
  double baseline_seconds_;
  Resolution resolution_;
  double margin_;
  std::vector<Probe> probes_;
};

}  // namespace qprof::fit
