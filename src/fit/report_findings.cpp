// SPDX-License-Identifier: Apache-2.0
// The findings of qprof fit in words, from the runs' table alone.
#include <algorithm>

#include "qprof/common/safe_text.hpp"
#include "qprof/fit/report.hpp"
#include "report_words.hpp"

namespace qprof::fit {
namespace {

std::string count(int n) {
  static const char* const words[] = {"no", "one", "two", "three", "four", "five", "six"};
  return n >= 0 && n <= 6 ? words[n] : std::to_string(n);
}

std::string runs_of(int some, int all) { return count(some) + (some == 1 ? " run of " : " runs of ") + count(all); }

struct Reader {
  const FitReport& r;
  Level level;

  double baseline_s() const { return r.baseline ? r.baseline->run.seconds : 0; }
  // Against the unlimited run, as the table's slowdown column and the cutoff are.
  std::string slowdown(const Probe& p) const {
    return baseline_s() > 0 ? fixed(p.seconds / baseline_s(), "%.2fx") : fixed(p.seconds, "%.2f s");
  }
  // Full speed is judged against the fastest completed run (LimitSearch::reference_seconds), which
  // may be faster than the unlimited one: its words give that reference, never the baseline's ratio
  // (a run 0.84x the baseline's time can still be too slow for full speed).
  std::string against_fastest(const Probe& p) const {
    if (r.reference_s <= 0) return fixed(p.seconds, "%.2f s");
    return fixed(p.seconds, "%.2f s") + ", " + fixed(p.seconds / r.reference_s, "%.2fx") + " the fastest run's " +
           fixed(r.reference_s, "%.2f s");
  }
  bool reaches(const Probe& p) const { return level_of(p, r.reference_s, r.full_speed_margin) >= level; }

  // A run that reached the level: completed, or (for "not OOM-killed") still running at the cutoff.
  std::string reached(const Probe& p) const {
    if (p.outcome == Outcome::too_slow)
      return "still running at " + slowdown(p) + " when stopped, not seen to complete";
    if (level == Level::full_speed) return "completed in " + against_fastest(p);
    return "completed in " + fixed(p.seconds, "%.2f s") + " (" + slowdown(p) + ")";
  }
  // What a run (or, `plural`, runs) that fell short of the level did, as a predicate.
  std::string fell_short(const Probe& p, bool plural = false) const {
    const std::string was = plural ? "were " : "was ";
    switch (p.outcome) {
      case Outcome::oom_killed:
        return was + "OOM-killed";
      case Outcome::failed:
        return "failed (" + terminal_text(p.detail) + ")";
      case Outcome::too_slow:
        return was + "still running at " + slowdown(p) + " when stopped";
      case Outcome::completed:  // short of full speed only: it completed, so it reached the others
        return "completed in " + against_fastest(p);
      case Outcome::cuda_oom:
        return "ran out of device memory (CUDA OOM)";
    }
    return "failed";
  }

  // The limit below the finding, and what its runs did.
  std::string below(const Finding& f) const {
    int runs = 0, short_runs = 0;
    const Probe* first = nullptr;
    for (const Probe& p : r.probes) {
      if (p.limit != f.short_of) continue;
      ++runs;
      if (!reaches(p)) {
        ++short_runs;
        if (!first) first = &p;
      }
    }
    if (!first) return "nothing was tried at or below " + floor_words() + ", " + mib(f.short_of);
    if (runs == 1) return "at " + mib(f.short_of) + " it " + fell_short(*first);
    return "at " + mib(f.short_of) + " " + runs_of(short_runs, runs) + " fell short (the first " + fell_short(*first) +
           ")";
  }

  // fit --gpu searches from the tree's context on the device, host fit from the unreclaimable peak.
  std::string floor_words() const {
    return r.gpu ? "its smallest reading on the device (a context)" : "the unreclaimable peak";
  }
  std::string peak_words() const { return r.gpu ? "peak on the device" : "peak charge"; }
  // fit --gpu: what the tree held on the device in the run a finding rests on.
  std::string held(const Finding& f) const {
    if (!r.gpu) return "";
    const std::optional<Bytes> bytes = f.probe ? r.probes[*f.probe].gpu_peak : r.baseline->run.gpu_peak;
    return bytes ? "; the tree held " + mib(*bytes) + " on the device" : "";
  }

  std::string title(const std::string& key) const {
    if (key == "smallest_running") return "smallest limit not OOM-killed";
    if (key == "smallest_within_slowdown")
      return "smallest limit it completes in within " + fixed(r.max_slowdown, "%g") + "x";
    return "smallest limit at full speed (within " + fixed(r.full_speed_margin * 100, "%g") +
           " % of the fastest run, " + fixed(r.reference_s, "%.2f s") + ")";
  }

  void lines(const std::string& key, const Finding& f, std::vector<std::string>& out) const {
    // fit --gpu's limit is each process's (MPS bounds clients one by one).
    const std::string head = "qprof fit: " + std::string(r.gpu ? "per process, " : "") + title(key) + ": ";
    if (f.probe) {
      out.push_back(head + mib(f.limit) + " (" + reached(r.probes[*f.probe]) + "; " + below(f) + held(f) + ")");
    } else {
      out.push_back(head + "none measured below the unlimited run's " + peak_words() + ", " + mib(f.limit) + " (" +
                    below(f) + held(f) + ")");
    }
    for (const Disagreement& d : f.noisy) {
      out.push_back("qprof fit:   at " + mib(d.limit) + " " + runs_of(d.runs - d.reached, d.runs) + " " +
                    fell_short(r.probes[d.probe], d.runs - d.reached > 1) + ": noisy");
    }
    for (const Disagreement& d : f.not_monotone) {
      out.push_back("qprof fit:   below it, at " + mib(d.limit) + ", " + runs_of(d.reached, d.runs) + " " +
                    reached(r.probes[d.probe]) + ": not monotone" + (d.runs == 1 ? " (not run again)" : ""));
    }
  }
};

Level level_of_key(const std::string& key) {
  if (key == "smallest_running") return Level::runs;
  if (key == "smallest_within_slowdown") return Level::within_slowdown;
  return Level::full_speed;
}

std::string why_no_probe(const FitReport& r) {
  if (r.end != FitEnd::searched) return "the search stopped before the first";
  const Baseline& b = *r.baseline;
  if (r.gpu) {
    return "the tree's peak on the device, " + mib(b.charge_peak) + ", is within the resolution of its smallest " +
           "reading there (a context), " + mib(b.unreclaimable_peak) + ": there was nothing between them to search";
  }
  return "the unlimited run's peak charge, " + mib(b.charge_peak) + ", is within the resolution of its unreclaimable " +
         "peak, " + mib(b.unreclaimable_peak) + ": there was nothing between them to search";
}

}  // namespace

std::optional<Bytes> measured_short_of(const FitReport& r, const Finding& f) {
  // The search's floor is never run (bisection tries strictly above it): a run at `short_of` is one
  // that fell short there.
  const bool run_there =
      std::any_of(r.probes.begin(), r.probes.end(), [&f](const Probe& p) { return p.limit == f.short_of; });
  return run_there ? std::optional<Bytes>(f.short_of) : std::nullopt;
}

std::vector<std::string> finding_lines(const FitReport& r) {
  std::vector<std::string> out;
  if (!r.baseline) return out;
  if (r.probes.empty()) {
    // The request still printed rests on the unlimited run alone: said here, and in its rule.
    const std::string rests_on = r.gpu ? "; the device memory to ask for is the tree's peak there in the unlimited run"
                                       : "; the request below is made from the unlimited run's peak charge, " +
                                             mib(r.baseline->charge_peak) + ", not from a measured limit";
    out.push_back("qprof fit: no limited run was made, so no limit was measured: " + why_no_probe(r) + rests_on);
    return out;
  }
  for (const NamedFinding& n : named_findings(r)) {
    if (!*n.finding) continue;
    Reader{r, level_of_key(n.key)}.lines(n.key, **n.finding, out);
  }
  return out;
}

}  // namespace qprof::fit
