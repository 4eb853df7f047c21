// SPDX-License-Identifier: Apache-2.0
#include "qprof/runs/run_summary.hpp"

#include <cstdio>
#include <string_view>

#include "qprof/common/charset.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/request.hpp"
#include "qprof/common/units.hpp"
#include "qprof/trace/bracket.hpp"
#include "qprof/trace/oom.hpp"
#include "summary_lines.hpp"

namespace qprof::runs {
using record::RunReport;
using trace::Footprint;
using trace::MemKindsSample;

namespace {

// "4 samples", "1 sample".
std::string count_of(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "once", "twice", "5 times".
std::string times(std::uint64_t n) { return n == 1 ? "once" : n == 2 ? "twice" : std::to_string(n) + " times"; }

void footprint_check(SummaryLines& out, const RunReport& r) {
  if (const auto why = footprint_below_largest_process(r)) out.line("CHECK", *why);
}

// The answer first: the footprint, shared pages once, and what of it could be dropped.
void footprint_lines(SummaryLines& out, const RunReport& r, const std::string& incomplete) {
  if (!r.footprint) return;
  const Footprint& f = *r.footprint;
  std::string what = f.basis == Footprint::Basis::cgroup
                         ? "the most the tree held at once, as its own cgroup counts it (includes page "
                           "cache; shared pages once)"
                         : "the most the tree held at once, as Σ PSS (each shared page split between its sharers)";
  if (f.t) what += ", at " + human_seconds(*f.t - r.start);
  out.line("footprint", human_bytes(f.peak) + "  " + what + incomplete);
  if (f.unreclaimable) {
    std::string parts = "of it at most " + human_bytes(*f.unreclaimable) +
                        " the kernel cannot drop (anonymous and shared memory: the job needs it)";
    if (f.reclaimable) {
      parts += "; " + std::string(f.basis == Footprint::Basis::cgroup ? "page cache " : "mapped files ") +
               human_bytes(*f.reclaimable) + " at the peak, which it can drop";
    }
    out.line("", parts);
  }
  footprint_check(out, r);
}

std::string exit_words(const RunReport& r) {
  if (r.attached) return attached_end_words(r);
  if (r.exit.timed_out) {
    return "stopped by --timeout (" +
           std::string(r.exit.signal != 0 ? "signal " + std::to_string(r.exit.signal)
                                          : "exit status " + std::to_string(r.exit.status)) +
           ")";
  }
  if (r.exit.signal != 0) return "killed by signal " + std::to_string(r.exit.signal);
  return "exit status " + std::to_string(r.exit.status);
}

// How a figure of the stats schedule was read: said where it rests on a single reading.
std::string readings_note(std::uint64_t readings) { return readings == 1 ? " (one reading)" : ""; }

void bound_lines(SummaryLines& out, const RunReport& r, const std::string& incomplete) {
  if (r.kernel_process_peak) {
    out.line("lower bound",
             human_bytes(*r.kernel_process_peak) +
                 "  of the Σ RSS peak (resident pages per process, shared ones in each): its largest process's "
                 "own peak, as the kernel counts it (ru_maxrss)");
  }
  // Only a bound that brackets the peak usefully (trace/bracket.hpp): a loose one is left out.
  if (!r.hwm.useful) return;
  std::string text = human_bytes(r.hwm.sum) + "  of the Σ RSS peak: every process's own peak (VmHWM) added up";
  if (r.hwm.capped > 0) {
    // Said as what happened, why the figure is high, and what reads more of them.
    text += "; maybe too high: " + count_of(r.hwm.capped, "process", "processes") + " ended before qprof read " +
            (r.hwm.capped == 1 ? "its" : "their") + " own peak and count with the peak of the process that started " +
            (r.hwm.capped == 1 ? "it" : "them") + " (a shorter -i reads more of them)";
  }
  out.line("upper bound", text + incomplete);
}

void usage_lines(SummaryLines& out, const RunReport& r) {
  if (r.usage.kinds_at_peak) {
    const MemKindsSample& k = *r.usage.kinds_at_peak;
    out.line("memory kinds", "Σ RSS " + human_bytes(k.rss()) + " at " + human_seconds(k.t - r.start) + ": anonymous " +
                                 human_bytes(k.anon) + " (heap, stacks), mapped files " + human_bytes(k.file) +
                                 ", shared memory " + human_bytes(k.shmem) + "; swap peak " +
                                 human_bytes(r.usage.peak_swap) + readings_note(r.usage.readings));
  }
  if (r.usage.most_tasks) {
    std::string tasks = "at most " + count_of(r.usage.most_tasks->threads, "thread", "threads") + " in " +
                        count_of(r.usage.most_tasks->processes, "process", "processes");
    if (r.usage.peak_vsz > 0)
      tasks += "; VSZ peak " + human_bytes(r.usage.peak_vsz) + " (address space, not memory used)";
    out.line("tasks", tasks + readings_note(r.usage.readings));
  }
}

void cpu_line(SummaryLines& out, const RunReport& r) {
  if (r.usage.cpu_seconds <= 0) return;
  char cpu[128];
  const double average = r.duration > 0 ? 100.0 * r.usage.cpu_seconds / r.duration : 0.0;
  std::snprintf(cpu, sizeof cpu, "%.2f s of CPU, %.0f %% of one core on average", r.usage.cpu_seconds, average);
  std::string text = cpu;
  // The peak is over whole stats intervals; a run shorter than one has its mean alone.
  if (r.usage.cpu_peak_percent) {
    std::snprintf(cpu, sizeof cpu, ", %.0f %% at most", *r.usage.cpu_peak_percent);
    text += cpu;
  }
  out.line("CPU", text);
}

// The request to paste, one line: Slurm's form (qprof report --request gives the others). Not
// from a run that failed on its own: it may have stopped before its peak (an OOM kill's run gets
// one, grown past the limit it was killed at).
void request_line(SummaryLines& out, const RunReport& r) {
  if (const auto text = request_text(r)) out.line("request", *text);
}

void limit_line(SummaryLines& out, const RunReport& r) {
  if (!r.limit.bytes) return;
  // The headroom, on the basis the limit counts: RLIMIT_AS caps each process's address space;
  // a cgroup, Slurm or the machine's memory count pages once, as the footprint does.
  std::string basis = "Σ RSS";
  Bytes figure = r.sampled_peak ? r.sampled_peak->bytes : 0;
  if (r.limit.source == "rlimit-as" && r.usage.peak_vsz > 0) {
    basis = "VSZ (Σ of the tree)";
    figure = r.usage.peak_vsz;
  } else if (r.limit.source != "rlimit-as" && r.footprint) {
    basis = "footprint";
    figure = r.footprint->peak;
  }
  const double percent = 100.0 * static_cast<double>(figure) / static_cast<double>(*r.limit.bytes);
  // The machine's memory is a limit of last resort: a job far below it is not told so.
  if (r.limit.source == "memtotal" && percent < 10 && !r.limit.warned) return;
  char share[32];
  std::snprintf(share, sizeof share, percent < 1 ? "under 1 %%" : "%.0f %%", percent);
  out.line("limit", basis + " " + human_bytes(figure) + " is " + share + " of the " + r.limit.source + " limit of " +
                        human_bytes(*r.limit.bytes) + " (" + terminal_text(r.limit.detail) + ")" +
                        (r.limit.warned ? "; it crossed 90 %" : ""));
}

void dir_lines(SummaryLines& out, const RunReport& r) {
  for (const record::WatchReport::Dir& d : r.watch.dirs) {
    out.line("watched dir",
             terminal_text(d.path) + ": " +
                 (d.seen ? "grew by " + human_bytes(d.peak > d.start ? d.peak - d.start : 0) + " at most (from " +
                               human_bytes(d.start) + " to " + human_bytes(d.peak) + ", " + human_bytes(d.last) +
                               " at the end); its file system had " + human_bytes(d.fs_free_min) + " free at the least"
                         : std::string("never walked")));
  }
  if (r.watch.dirs.empty()) return;
  char cost[256];
  std::snprintf(cost, sizeof cost,
                "%s, every %.2f s on average (asked %.2f s), %.3f s of CPU: %.2f %% of one core; %s in the last "
                "walk; the first, before the command, took %.3f s of CPU",
                count_of(r.watch.walks, "walk", "walks").c_str(), r.watch.mean_interval, r.watch.asked_interval,
                r.watch.cpu_seconds, 100.0 * r.watch.cpu_share, count_of(r.watch.entries, "entry", "entries").c_str(),
                r.watch.first_walk_cpu);
  out.line("dir walks", cost);
}

void samples_line(SummaryLines& out, const RunReport& r) {
  std::string text = std::to_string(r.sampling.samples);
  if (r.sampling.samples > 1) {
    text += ", every " + human_seconds(r.sampling.mean_interval) + " on average (asked " +
            human_seconds(r.sampling.asked_interval) + ")";
  }
  if (r.sampling.marker_samples > 0) text += ", " + std::to_string(r.sampling.marker_samples) + " more at markers";
  if (r.sampling.missed_deadlines > 0) {
    // Said with its cause: a coarser series than asked is no fault of the job's.
    text += "; " + std::to_string(r.sampling.missed_deadlines) + " came late: reading " +
            (r.usage.most_tasks ? "up to " + count_of(r.usage.most_tasks->processes, "process", "processes")
                                : std::string("the tree")) +
            " took longer than the interval, or qprof got no CPU in time (a busy machine); the curves are " +
            "coarser than asked there (a longer -i keeps samples on time)";
  }
  out.line("samples", text);
}

}  // namespace

std::string attached_end_words(const RunReport& r) {
  if (r.exit.status_known && r.exit.signal != 0)
    return "the process was killed by signal " + std::to_string(r.exit.signal);
  if (r.exit.status_known) return "the process exited with status " + std::to_string(r.exit.status);
  // qprof stopped first: the process runs on, never signalled.
  if (r.exit.still_running && r.exit.timed_out) return "stopped by --timeout; the process runs on";
  if (r.exit.still_running) return "the attach was stopped; the process runs on";
  return "the process exited, its status unknown: its parent reaped it first (qprof is not its parent)";
}

// The summary checks its answer against the kernel's own figure: the tree held at least its
// largest process (ru_maxrss). A footprint well below it was read too rarely to see the peak, or
// counts pages the process shared with processes outside the tree (a library, page cache charged
// to another cgroup) as theirs. The margin covers those shared pages of an ordinary process.
std::optional<std::string> footprint_below_largest_process(const RunReport& r) {
  if (!r.footprint || !r.kernel_process_peak) return std::nullopt;
  const Footprint& f = *r.footprint;
  const Bytes largest = *r.kernel_process_peak;
  constexpr Bytes kSharedAllowance = Bytes{16} << 20;
  if (f.peak + kSharedAllowance >= largest || f.peak >= largest - largest / 10) return std::nullopt;
  const std::string why =
      f.basis == Footprint::Basis::pss
          ? "Σ PSS was read " + times(r.pss.passes) + " and may have missed the peak between two readings (a " +
                "shorter --pss-interval reads it more often), or the process shared its pages with processes "
                "outside the tree"
          : "pages it touched before it joined the tree's cgroup, or page cache charged to another cgroup, are "
            "not in the charge";
  return "the footprint is below the largest process's own peak (" + human_bytes(largest) + ", ru_maxrss): " + why;
}

std::optional<std::string> request_text(const RunReport& r) {
  if (!r.footprint || (r.exit.status != 0 && r.oom_events.empty())) return std::nullopt;
  std::optional<Bytes> killed_at;
  for (const trace::OomKill& k : r.oom_events) {
    if (k.limit) killed_at = killed_at ? std::max(*killed_at, *k.limit) : *k.limit;
  }
  if (!r.oom_events.empty() && !killed_at) killed_at = r.limit.bytes;
  const MemoryRequest req = memory_request(r.footprint->peak, "footprint", r.margin, killed_at);
  return slurm_request(req) + " (" + request_rule(req) + "; qprof report --request: the other forms)";
}

namespace {

// Σ RSS as mprof counts it, and Σ PSS with how often it was read.
void sum_lines(SummaryLines& out, const RunReport& r, const std::string& incomplete) {
  if (r.sampled_peak) {
    out.line("Σ RSS", human_bytes(r.sampled_peak->bytes) +
                          "  peak, as mprof counts it (a page shared by N processes "
                          "counts N times), at " +
                          human_seconds(r.sampled_peak->t - r.start) + incomplete);
  }
  if (r.pss.peak) {
    std::string read = "peak " + human_bytes(r.pss.peak->pss) + " at " + human_seconds(r.pss.peak->t - r.start) +
                       " (of it " + human_bytes(r.pss.uss_peak.value_or(0)) +
                       " in pages of one process alone, USS); read " + times(r.pss.passes) + ": every " +
                       human_seconds(r.pss.interval);
    if (r.pss.rise_passes > 0) {
      read += ", and " + times(r.pss.rise_passes) + " as Σ RSS reached a new high";
    }
    if (r.pss.rereads > 0) {
      read += "; " + count_of(r.pss.rereads, "reading", "readings") +
              " taken again at once as the tree's sharing moved (a process mapped or dropped pages shared)";
    }
    out.line("Σ PSS", read + incomplete);
  }
}

void overhead_line(SummaryLines& out, const RunReport& r) {
  if (r.duration > 0) {
    char overhead[96];
    // A share of a run shorter than a second is mostly qprof's own start: the seconds alone.
    if (r.duration >= 1.0) {
      std::snprintf(overhead, sizeof overhead, "qprof itself used %.3f s of CPU (%.1f %% of one core)",
                    r.profiler_cpu_seconds, 100.0 * r.profiler_cpu_seconds / r.duration);
    } else {
      std::snprintf(overhead, sizeof overhead, "qprof itself used %.3f s of CPU", r.profiler_cpu_seconds);
    }
    out.line("overhead", overhead);
  }
}

}  // namespace

std::string format_summary(const RunReport& r, std::size_t columns) {
  SummaryLines out(columns);
  out.command(r.command);
  // An OOM kill first: it explains every figure below (a worker gone, a footprint at the limit).
  for (const trace::OomKill& k : r.oom_events) {
    out.line("OOM kill", terminal_text(trace::describe_oom_kill(k, r.start)));
  }
  // A figure that misses processes is never shown as if it were the tree's.
  const std::string incomplete =
      r.sampling.unread_members > 0
          ? " INCOMPLETE: " + count_of(r.sampling.unread_members, "process", "processes") + " not read"
          : "";
  if (r.sampling.unread_members > 0) {
    out.line("INCOMPLETE", count_of(r.sampling.unread_members, "process", "processes") +
                               " of the tree could not be read (out of file descriptors): every figure below "
                               "misses them");
  }
  // The answer, then how the command ended, then the rest in a fixed order.
  footprint_lines(out, r, incomplete);
  std::string ended = human_seconds(r.duration);
  if (r.launched || r.attached) ended += ", " + exit_words(r);
  out.line("duration", ended);
  if (r.sampling.stops > 0) {
    out.line("stopped", human_seconds(r.sampling.stopped_seconds) + " in " +
                            count_of(r.sampling.stops, "stop", "stops") +
                            " by job control (Ctrl-Z or SIGTSTP, then fg/bg): no samples then");
  }
  sum_lines(out, r, incomplete);
  bound_lines(out, r, incomplete);
  usage_lines(out, r);
  if (r.gpu.peak) {
    out.line("GPU peak", human_bytes(r.gpu.peak->bytes) + "  the tree's GPU memory, Σ devices, at " +
                             human_seconds(r.gpu.peak->t - r.start) + " (" + r.gpu.backend +
                             (r.gpu.is_device_total ? "; device totals, not per-process" : "") + ")");
    for (const std::string& d : r.gpu.devices) out.line("GPU device", d);
  }
  cpu_line(out, r);
  limit_line(out, r);
  request_line(out, r);
  dir_lines(out, r);
  out.line("disk I/O", "read " + human_bytes(r.usage.io.read_bytes) + " from storage, written " +
                           human_bytes(r.usage.io.write_bytes) + " to it (asked of files, page cache included: read " +
                           human_bytes(r.usage.io.rchar) + ", written " + human_bytes(r.usage.io.wchar) + ")");
  samples_line(out, r);
  overhead_line(out, r);
  if (r.attached) {
    out.line("attached",
             "descendants that double-fork away (their parent exits before qprof's next sample sees "
             "them) leave the tree: a process not started by qprof cannot adopt them");
  }
  out.line("trace", (r.trace_path == "-" ? std::string("stdout") : terminal_text(r.trace_path)) +
                        (r.trace_error.empty() ? "" : "  INCOMPLETE: " + terminal_text(r.trace_error)));
  return out.text();
}

}  // namespace qprof::runs
