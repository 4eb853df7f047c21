// SPDX-License-Identifier: Apache-2.0
// The bracket of the tree's peak RSS, and the one rule every figure in it obeys:
//   lower bound ≤ every figure that claims to bound the tree's peak ≤ upper bound.
// The lower bound is the kernel's peak of the largest single process (ru_maxrss); the upper bound
// is Σ of each process's own peak (VmHWM, completed by wait4). Sampled sums (Σ RSS, Σ PSS) are
// below the true peak, so below the upper bound too. The cgroup's charge is another quantity
// (pages first touched elsewhere are not charged, page cache is) and is in no bracket.
// The writer (qprof run) and every reader (summary, report, YAML, plot) go through here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qprof/common/types.hpp"

namespace qprof::trace {

struct PeakBracket {
  std::optional<Bytes> lower;  // the largest single process, by the kernel
  std::optional<Bytes> upper;  // Σ VmHWM; absent when it cannot be a bound
};

struct BracketInputs {
  std::optional<Bytes> kernel_process;  // PEAK kernel_process
  std::optional<Bytes> hwm_sum;         // PEAK hwm_sum (absent: not a bound, e.g. processes uncovered)
  std::optional<Bytes> sampled_rss;     // the peak of Σ RSS samples
  std::optional<Bytes> sampled_pss;     // the peak of Σ PSS samples
};

// The upper bound is raised to the lower bound and to every sampled sum: each of them is below
// the true peak, so a Σ VmHWM below one of them missed growth it should have had.
PeakBracket make_bracket(const BracketInputs& in);

// An upper bound is shown only where it tells the user something: at most twice the peak it
// bounds. Σ VmHWM counts each process's own peak as if all came at once; with many short-lived
// processes (a launcher's shims, a fork pool) it can be many times the peak, a bound that no
// longer bounds anything a user would plan for.
inline constexpr double kUsefulBoundRatio = 2.0;
inline bool bound_is_useful(Bytes upper, Bytes peak) {
  return peak > 0 && static_cast<double>(upper) <= kUsefulBoundRatio * static_cast<double>(peak);
}

// Where a bracket breaks the rule (empty: it holds). For tests and checks of old traces.
std::vector<std::string> bracket_violations(const PeakBracket& b, const BracketInputs& in);

}  // namespace qprof::trace
