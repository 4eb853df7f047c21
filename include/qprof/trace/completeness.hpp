// SPDX-License-Identifier: Apache-2.0
// Whether a trace is whole: a qprof trace ends with its EXIT record, and every line of any trace
// ends with a newline. A trace that is not whole (qprof SIGKILLed, a full disk, a copy cut short)
// still reads, so every command that reads one says so, in one line with why.
#pragma once

#include <algorithm>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::trace {

// Why a qprof trace without its EXIT record is incomplete.
inline constexpr const char* kNoEndRecord = "no end record (EXIT): qprof was killed, or the run still goes on";

// What a reader saw of a trace's completeness. An mprof trace has no end record to miss.
struct Completeness {
  bool qprof = false;          // it has a qprof header
  bool exit = false;           // its EXIT record was read
  std::size_t cut_line = 0;    // a last line without its newline (ignored); 0: none
  bool samples = false;        // it has a MEM line (a trace without one is empty to every reader)
  std::size_t second_run = 0;  // the line of a second CMDLINE (Trace::second_run_line); 0: none
  ClockFindings clock;         // where the samples' clock went back or started late (Trace::clock)
  // "no end record (EXIT) ..."; "its last line (N) is cut ..."; "" when whole.
  std::string reason() const;
  // A qprof trace that stops before its end record: no figure of it is the run's last.
  bool ends_early() const { return qprof && !exit; }
  // "FILE:LINE" of the cut line, else "FILE".
  std::string where(const std::string& file) const;
};

// What a whole Trace says of its completeness (its second run as Trace::second_run_line).
Completeness completeness_of(const Trace& trace);
std::string incomplete_reason(const Trace& trace);

// Where a file holds runs appended (`mprof run -o` appends): the line of its second CMDLINE
// record, whatever the first one's text. Every reader counts them through this one rule.
class AppendedRuns {
 public:
  // Counts to 2 and stops: a file of billions of CMDLINE lines cannot overflow it.
  void cmdline_at(std::size_t line) {
    if (cmdlines_ < 2 && ++cmdlines_ == 2) second_run_ = line;
  }
  std::size_t second_run() const { return second_run_; }  // 0: one run

 private:
  int cmdlines_ = 0;
  std::size_t second_run_ = 0;
};

// Where a trace's clock went back: the first MEM line whose time is earlier than a sample's
// before it, or than the header's start, and by how much. mprof stamps its samples with the wall
// clock, which a clock step (NTP, a suspended VM) can set back; such a trace is read as written,
// and every reader says so through this one rule. Also where the first sample comes far after the
// header's start (an edited or joined file): every time counts from that start.
class BackwardClock {
 public:
  // A qprof run samples as it starts: a first sample later than this, or than a few intervals,
  // was not taken by the run that wrote the header.
  static constexpr Seconds kLateFirstSample = 60;

  void start_at(const std::optional<Seconds>& start, Seconds interval) {
    start_ = start;
    late_after_ = std::max(kLateFirstSample, 3 * interval);
  }
  void mem_at(Seconds t, std::size_t line) {
    if (!seen_ && start_) {
      if (t < *start_ - kStartSlack) {
        found_.back_line = line;
        found_.back_by = *start_ - t;
      } else if (t - *start_ > late_after_) {
        found_.late_line = line;
        found_.late_by = t - *start_;
      }
    }
    if (seen_ && found_.back_line == 0 && t < latest_) {
      found_.back_line = line;
      found_.back_by = latest_ - t;
    }
    latest_ = seen_ ? std::max(latest_, t) : t;
    seen_ = true;
  }
  const ClockFindings& findings() const { return found_; }

 private:
  // The header's start and the first sample come from two reads of the clock, microseconds
  // apart, rounded to the microsecond each: not a step back.
  static constexpr Seconds kStartSlack = 1e-3;
  std::optional<Seconds> start_;
  Seconds late_after_ = kLateFirstSample;
  bool seen_ = false;
  Seconds latest_ = 0;
  ClockFindings found_;
};

// What a streaming visitor sees of a trace's completeness, record by record: a visitor that reads
// for its own ends (qprof list's summary) calls these from its own overrides, with its line().
class CompletenessWatch {
 public:
  void header(const TraceMeta& m) {
    seen_.qprof = m.format_version > 0;
    clock_.start_at(m.start, m.interval);
  }
  void exit() { seen_.exit = true; }
  void mem(Seconds t, std::size_t line) {
    seen_.samples = true;
    clock_.mem_at(t, line);
    seen_.clock = clock_.findings();
  }
  void cmdline_at(std::size_t line) {
    runs_.cmdline_at(line);
    seen_.second_run = runs_.second_run();
  }
  void cut_at(std::size_t line) { seen_.cut_line = line; }  // the reader's one warning: a cut last line
  const Completeness& seen() const { return seen_; }

 private:
  Completeness seen_;
  AppendedRuns runs_;
  BackwardClock clock_;
};

// Reads the trace at `path` through (throws trace::ParseError where it is bad): what a streaming
// command checks before it writes its first byte.
Completeness file_completeness(const std::string& path);

// "FILE[:LINE]: incomplete trace: WHY", ready for a Speaker's line (terminal-safe), or "" when the
// trace is whole.
std::string incomplete_notice(const std::string& file, const Completeness& seen);
inline std::string incomplete_notice(const Trace& trace) {
  return incomplete_notice(trace.source, completeness_of(trace));
}

// "FILE:LINE: a second run starts here ...", terminal-safe, or "" for a file of one run.
std::string appended_runs_notice(const std::string& file, std::size_t second_run);

// "FILE:LINE: the clock went back ... here ...", terminal-safe, or "" for a clock that never did.
std::string clock_back_notice(const std::string& file, std::size_t line, Seconds by);

// "FILE:LINE: the first sample comes ... after the header's start ...", terminal-safe, or "" for a
// trace whose first sample came with its start.
std::string late_start_notice(const std::string& file, std::size_t line, Seconds by);

// What every command that reads a trace says of it on stderr before its output: the file is cut
// short, holds runs appended, its clock went back, or its first sample came long after its start.
// One line each; none for a whole trace of one run whose clock only went forward.
std::vector<std::string> reading_notices(const std::string& file, const Completeness& seen);
inline std::vector<std::string> reading_notices(const Trace& trace) {
  return reading_notices(trace.source, completeness_of(trace));
}

}  // namespace qprof::trace
