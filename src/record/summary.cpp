// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/summary.hpp"

#include <cstdio>
#include <sstream>
#include <string_view>

#include "qprof/common/safe_text.hpp"
#include "qprof/common/units.hpp"

namespace qprof {
namespace {

// "qprof:   <what, padded>  <text>": padded to 15 characters, not bytes ("Σ" is two bytes).
void line(std::ostringstream& out, const char* what, const std::string& text) {
  const std::string_view name(what);
  std::size_t width = 0;
  for (const char c : name) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  out << "qprof:   " << name << std::string(width < 15 ? 15 - width : 0, ' ') << ' ' << text << '\n';
}

// "4 samples", "1 sample".
std::string count_of(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The answer first: the footprint, shared pages once, and what of it could be dropped.
void footprint_lines(std::ostringstream& out, const RunReport& r, const std::string& incomplete) {
  if (!r.footprint) return;
  const Footprint& f = *r.footprint;
  std::string what = f.basis == Footprint::Basis::cgroup
                         ? "peak of the tree's own cgroup charge (includes page cache; shared pages once)"
                         : "peak of the tree's Σ PSS (shared pages split between their sharers)";
  if (f.t) what += ", at " + human_seconds(*f.t - r.start);
  line(out, "footprint", human_bytes(f.peak) + "  " + what + incomplete);
  if (f.unreclaimable) {
    std::string parts = "unreclaimable " + human_bytes(*f.unreclaimable) + " at most (anonymous and shared memory)";
    if (f.reclaimable) {
      parts += "; " + std::string(f.basis == Footprint::Basis::cgroup ? "page cache " : "mapped files ") +
               human_bytes(*f.reclaimable) + " at the peak, which the kernel can drop";
    }
    line(out, "", parts);
  }
}

std::string exit_words(const RunReport& r) {
  if (r.timed_out) return "stopped by --timeout (" + std::string(r.signal != 0 ? "signal " + std::to_string(r.signal) : "exit status " + std::to_string(r.exit_status)) + ")";
  if (r.signal != 0) return "killed by signal " + std::to_string(r.signal);
  return "exit status " + std::to_string(r.exit_status);
}

}  // namespace

std::string format_summary(const RunReport& r) {
  std::ostringstream out;
  out << "qprof: " << terminal_text(r.command) << '\n';
  // A figure that misses processes is never shown as if it were the tree's.
  const std::string incomplete =
      r.unread_members > 0 ? " INCOMPLETE: " + count_of(r.unread_members, "process", "processes") + " not read" : "";
  if (r.unread_members > 0) {
    line(out, "INCOMPLETE", count_of(r.unread_members, "process", "processes") +
                                " of the tree could not be read (out of file descriptors): every figure below "
                                "misses them");
  }
  footprint_lines(out, r, incomplete);
  if (r.sampled_peak) {
    line(out, "Σ RSS", human_bytes(r.sampled_peak->bytes) + "  peak, as mprof counts it (a page shared by N processes "
                           "counts N times), at " + human_seconds(r.sampled_peak->t - r.start) + incomplete);
  }
  std::string timing = human_seconds(r.duration);
  if (!r.attached && r.launched) timing += ", " + exit_words(r);
  timing += "; " + count_of(r.samples, "sample", "samples");
  if (r.samples > 1) {
    timing += " every " + human_seconds(r.mean_interval) + " on average (asked " + human_seconds(r.asked_interval) + ")";
  }
  if (r.marker_samples > 0) timing += ", " + std::to_string(r.marker_samples) + " more at markers";
  if (r.missed_deadlines > 0) {
    // Said with its cause: a coarser series than asked is no fault of the job's.
    timing += ", " + count_of(r.missed_deadlines, "deadline", "deadlines") +
              " missed (a sample took longer than the interval" +
              (r.most_tasks ? " with up to " + count_of(r.most_tasks->processes, "process", "processes") : "") +
              ", or qprof was given no CPU in time)";
  }
  line(out, "duration", timing);
  if (r.stops > 0) {
    line(out, "stopped", human_seconds(r.stopped_seconds) + " in " + count_of(r.stops, "stop", "stops") +
                             " by job control (Ctrl-Z or SIGTSTP, then fg/bg): no samples then");
  }
  if (r.pss_peak) {
    std::string read = "peak " + human_bytes(r.pss_peak->pss) + " at " + human_seconds(r.pss_peak->t - r.start) +
                       " (USS " + human_bytes(r.uss_peak.value_or(0)) + "); read " +
                       count_of(r.pss_passes, "time", "times") + ", every " + human_seconds(r.pss_interval);
    if (r.pss_rise_passes > 0) read += " and at " + count_of(r.pss_rise_passes, "new high", "new highs") + " of Σ RSS";
    line(out, "Σ PSS", read + incomplete);
  }
  if (r.kernel_process_peak) {
    line(out, "lower bound", human_bytes(*r.kernel_process_peak) +
                                 "  the largest single process, by the kernel (ru_maxrss)");
  }
  if (r.hwm_sum > 0 && r.hwm_uncovered == 0) {
    line(out, "upper bound", human_bytes(r.hwm_sum) + "  Σ of the high-water marks of the processes alive together (VmHWM, wait4)" + incomplete);
    if (r.hwm_capped > 0) {
      line(out, "", "loose: " + std::to_string(r.hwm_capped) +
                        " process(es) reaped by their own parent count with an ancestor's wait4 peak, which may have "
                        "come after them (a launcher's helpers, then the program it runs)");
    }
  } else if (r.hwm_sum > 0) {
    line(out, "Σ VmHWM", human_bytes(r.hwm_sum) + "  not a bound: " + std::to_string(r.hwm_uncovered) +
                             " process(es) reaped by a parent qprof never reaped");
  }
  if (r.kinds_at_peak) {
    const MemKindsSample& k = *r.kinds_at_peak;
    line(out, "memory kinds", "at the largest of " + human_bytes(k.rss()) + " (" +
                                  human_seconds(k.t - r.start) + "): anon " + human_bytes(k.anon) + ", file " +
                                  human_bytes(k.file) + ", shmem " + human_bytes(k.shmem) + "; swap peak " +
                                  human_bytes(r.peak_swap) + " (every --stats-interval)");
  }
  if (r.most_tasks) {
    line(out, "tasks", "at most " + std::to_string(r.most_tasks->threads) + " threads in " +
                           std::to_string(r.most_tasks->processes) + " process(es); VSZ peak " + human_bytes(r.peak_vsz));
  }
  if (r.gpu_peak) {
    line(out, "GPU peak", human_bytes(r.gpu_peak->bytes) + "  the tree's GPU memory, Σ devices, at " +
                              human_seconds(r.gpu_peak->t - r.start) + " (" + r.gpu_backend +
                              (r.gpu_is_device_total ? "; device totals, not per-process" : "") + ")");
    for (const std::string& d : r.gpu_devices) line(out, "GPU device", d);
  }
  if (r.cpu_seconds > 0) {
    char cpu[96];
    const double average = r.duration > 0 ? 100.0 * r.cpu_seconds / r.duration : 0.0;
    std::snprintf(cpu, sizeof cpu, "%.2f s of CPU, %.0f %% of one core on average, %.0f %% at most", r.cpu_seconds,
                  average, r.cpu_peak_percent);
    line(out, "CPU", cpu);
  }
  if (r.limit) {
    // The headroom, on the basis the limit counts: RLIMIT_AS caps each process's address space;
    // a cgroup, Slurm or the machine's memory count pages once, as the footprint does.
    std::string basis = "Σ RSS";
    Bytes figure = r.sampled_peak ? r.sampled_peak->bytes : 0;
    if (r.limit_source == "rlimit-as") {
      basis = "VSZ (Σ of the tree)";
      figure = r.peak_vsz;
    } else if (r.footprint) {
      basis = "footprint";
      figure = r.footprint->peak;
    }
    char share[32];
    const double percent = 100.0 * static_cast<double>(figure) / static_cast<double>(*r.limit);
    std::snprintf(share, sizeof share, percent < 1 ? "under 1 %%" : "%.0f %%", percent);
    line(out, "limit", basis + " " + human_bytes(figure) + " is " + share + " of the " + r.limit_source + " limit of " +
                           human_bytes(*r.limit) + " (" + terminal_text(r.limit_detail) + ")" +
                           (r.limit_warned ? "; it crossed 90 %" : ""));
  }
  for (const RunReport::WatchedDirReport& d : r.dirs) {
    line(out, "watched dir", terminal_text(d.path) + ": " +
                                 (d.seen ? "grew by " + human_bytes(d.peak > d.start ? d.peak - d.start : 0) + " at most (from " +
                                               human_bytes(d.start) + " to " + human_bytes(d.peak) + ", " +
                                               human_bytes(d.last) + " at the end); its file system had " +
                                               human_bytes(d.fs_free_min) + " free at the least"
                                         : std::string("never walked")));
  }
  if (!r.dirs.empty()) {
    char cost[256];
    std::snprintf(cost, sizeof cost,
                  "%llu walks, every %.2f s on average (asked %.2f s), %.3f s of CPU: %.2f %% of one core; %llu entries "
                  "in the last walk; the first, before the command, took %.3f s of CPU",
                  static_cast<unsigned long long>(r.dir_walks), r.dir_mean_interval, r.dir_asked_interval,
                  r.dir_cpu_seconds, 100.0 * r.dir_cpu_share, static_cast<unsigned long long>(r.dir_entries),
                  r.dir_first_walk_cpu);
    line(out, "dir walks", cost);
  }
  line(out, "disk I/O", "read " + human_bytes(r.io.read_bytes) + ", written " + human_bytes(r.io.write_bytes) +
                            " (through syscalls: read " + human_bytes(r.io.rchar) + ", written " +
                            human_bytes(r.io.wchar) + ")");
  if (r.duration > 0) {
    char overhead[96];
    std::snprintf(overhead, sizeof overhead, "qprof itself used %.3f s of CPU (%.1f %% of one core)",
                  r.profiler_cpu_seconds, 100.0 * r.profiler_cpu_seconds / r.duration);
    line(out, "overhead", overhead);
  }
  if (r.attached) {
    std::string exit;
    if (r.exit_status_known && r.signal != 0) exit = "the process was killed by signal " + std::to_string(r.signal);
    else if (r.exit_status_known) exit = "the process exited with status " + std::to_string(r.exit_status);
    else if (r.timed_out) exit = "stopped by --timeout; the process's status is unknown (not qprof's child)";
    else exit = "status unknown: the process is not qprof's child (its parent reaped it, or the attach was stopped)";
    line(out, "attached", exit);
    line(out, "attached", "descendants that double-fork away (their parent exits before qprof's next sample sees "
                          "them) leave the tree: a process not started by qprof cannot adopt them");
  }
  line(out, "trace", (r.trace_path == "-" ? std::string("stdout") : terminal_text(r.trace_path)) +
                         (r.trace_error.empty() ? "" : "  INCOMPLETE: " + terminal_text(r.trace_error)));
  return out.str();
}

}  // namespace qprof
