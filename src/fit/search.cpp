// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/search.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace qprof::fit {
namespace {

constexpr Bytes kPage = 4096;  // limits are written in pages: the kernel rounds to them anyway

}  // namespace

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::completed:
      return "completed";
    case Outcome::oom_killed:
      return "OOM-killed";
    case Outcome::too_slow:
      return "too slow";
    case Outcome::failed:
      return "failed";
    case Outcome::cuda_oom:
      return "CUDA OOM";
  }
  return "failed";
}

const char* outcome_key(Outcome o) {
  switch (o) {
    case Outcome::completed:
      return "completed";
    case Outcome::oom_killed:
      return "oom_killed";
    case Outcome::too_slow:
      return "too_slow";
    case Outcome::failed:
      return "failed";
    case Outcome::cuda_oom:
      return "cuda_oom";
  }
  return "failed";
}

Bytes Resolution::at(Bytes limit) const {
  const double relative = fraction * static_cast<double>(limit);
  return std::max(floor, relative > 0 ? static_cast<Bytes>(relative) : Bytes{0});
}

Level level_of(const Probe& p, double baseline_seconds, double full_speed_margin) {
  switch (p.outcome) {
    case Outcome::oom_killed:
    case Outcome::failed:
    case Outcome::cuda_oom:
      return Level::does_not_run;
    case Outcome::too_slow:
      return Level::runs;
    case Outcome::completed:
      return p.seconds <= baseline_seconds * (1 + full_speed_margin) ? Level::full_speed : Level::within_slowdown;
  }
  return Level::does_not_run;
}

Outcome outcome_of(int wait_status, bool stopped_as_too_slow, std::optional<std::uint64_t> oom_kills) {
  if (stopped_as_too_slow) return Outcome::too_slow;
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) return Outcome::completed;
  if (oom_kills) return *oom_kills > 0 ? Outcome::oom_killed : Outcome::failed;
  // No count from this kernel: a SIGKILL that qprof did not send is the OOM killer's mark.
  return WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL ? Outcome::oom_killed : Outcome::failed;
}

LimitSearch::LimitSearch(const Baseline& baseline, Resolution resolution, double full_speed_margin)
    : low_(baseline.unreclaimable_peak),
      high_(baseline.charge_peak),
      baseline_seconds_(baseline.run.seconds),
      resolution_(resolution),
      margin_(full_speed_margin) {}

void LimitSearch::add(const Probe& p) { probes_.push_back(p); }

double LimitSearch::reference_seconds() const {
  double fastest = baseline_seconds_;
  for (const Probe& p : probes_) {
    if (p.outcome == Outcome::completed) fastest = std::min(fastest, p.seconds);
  }
  return fastest;
}

std::vector<LimitSearch::Tally> LimitSearch::tallies(Level level) const {
  std::vector<Tally> out;
  const double reference = reference_seconds();
  for (std::size_t i = 0; i < probes_.size(); ++i) {
    const Probe& p = probes_[i];
    auto t = std::find_if(out.begin(), out.end(), [&](const Tally& x) { return x.limit == p.limit; });
    if (t == out.end()) {
      t = out.insert(out.end(), Tally{});
      t->limit = p.limit;
    }
    ++t->runs;
    if (level_of(p, reference, margin_) >= level) {
      ++t->reached;
      if (!t->first_reached) t->first_reached = i;
    } else if (!t->first_short) {
      t->first_short = i;
    }
  }
  std::sort(out.begin(), out.end(), [](const Tally& a, const Tally& b) { return a.limit < b.limit; });
  return out;
}

LimitSearch::Gap LimitSearch::gap(Level level) const {
  Gap g{low_, high_, std::nullopt};
  const std::vector<Tally> all = tallies(level);
  for (const Tally& t : all) {
    if (t.falls_short()) g.short_of = std::max(g.short_of, t.limit);
  }
  // The lowest limit above every shortfall that reached the level: a limit below a shortfall
  // (timing noise, or a job that is not monotone) does not make the boundary.
  for (const Tally& t : all) {
    if (t.limit > g.short_of && t.limit < g.reached && !t.falls_short()) {
      g.reached = t.limit;
      g.probe = t.first_reached;
    }
  }
  if (g.reached < g.short_of) g.reached = g.short_of;  // nothing to search: the charge is the floor
  return g;
}

std::optional<Bytes> LimitSearch::repeat() const {
  for (Level level : {Level::runs, Level::within_slowdown, Level::full_speed}) {
    const std::vector<Tally> all = tallies(level);
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (all[i].reached == all[i].runs) continue;
      // Some run here fell short: does a lower limit disagree?
      std::optional<std::size_t> below;
      for (std::size_t j = 0; j < i; ++j) {
        if (all[j].reached > 0) below = j;
      }
      if (!below) continue;
      // Once: was that shortfall noise?
      if (all[i].runs == 1) return all[i].limit;
      // It fell short again: was the nearest success below it noise?
      if (all[i].reached == 0 && all[*below].runs == 1) return all[*below].limit;
    }
  }
  return std::nullopt;
}

std::optional<Bytes> LimitSearch::next() const {
  if (const auto again = repeat()) return again;
  return bisection();
}

std::optional<Bytes> LimitSearch::bisection() const {
  std::optional<Bytes> best;
  Bytes widest = 0;
  for (Level level : {Level::runs, Level::within_slowdown, Level::full_speed}) {
    const Gap g = gap(level);
    const Bytes width = g.reached - g.short_of;
    if (width <= resolution_.at(g.reached) || width <= widest) continue;
    const Bytes middle = (g.short_of + width / 2) / kPage * kPage;
    if (middle <= g.short_of || middle >= g.reached) continue;
    widest = width;
    best = middle;
  }
  return best;
}

int LimitSearch::remaining_estimate() const {
  std::set<std::pair<Bytes, Bytes>> open;
  int total = 0;
  for (Level level : {Level::runs, Level::within_slowdown, Level::full_speed}) {
    const Gap g = gap(level);
    const Bytes width = g.reached - g.short_of;
    const Bytes res = std::max<Bytes>(resolution_.at(g.reached), 1);
    if (width <= res || !open.insert({g.short_of, g.reached}).second) continue;
    total += static_cast<int>(std::ceil(std::log2(static_cast<double>(width) / static_cast<double>(res))));
  }
  return total + (repeat() ? 1 : 0);
}

Findings LimitSearch::findings() const {
  const auto finding = [&](Level level) {
    const Gap g = gap(level);
    Finding f{g.reached, g.probe, g.short_of, {}, {}};
    for (const Tally& t : tallies(level)) {
      if (t.limit >= f.limit && t.reached < t.runs && t.first_short)
        f.noisy.push_back({t.limit, t.runs, t.reached, *t.first_short});
      if (t.limit < f.short_of && t.reached > 0 && t.first_reached)
        f.not_monotone.push_back({t.limit, t.runs, t.reached, *t.first_reached});
    }
    return f;
  };
  return Findings{finding(Level::runs), finding(Level::within_slowdown), finding(Level::full_speed)};
}

}  // namespace qprof::fit
