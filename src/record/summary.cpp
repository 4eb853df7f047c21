#include "qprof/record/summary.hpp"

#include <cstdio>
#include <sstream>

#include "qprof/common/units.hpp"

namespace qprof {
namespace {

// "qprof:   <what, padded>  <text>"
void line(std::ostringstream& out, const char* what, const std::string& text) {
  char head[40];
  std::snprintf(head, sizeof head, "qprof:   %-15s ", what);
  out << head << text << '\n';
}

}  // namespace

std::string format_summary(const RunReport& r) {
  std::ostringstream out;
  out << "qprof: " << r.command << '\n';
  std::string timing = human_seconds(r.duration) + ", " + std::to_string(r.samples) + " samples";
  if (r.samples > 1) {
    timing += " every " + human_seconds(r.mean_interval) + " on average (asked " + human_seconds(r.asked_interval) + ")";
  }
  if (r.marker_samples > 0) timing += ", " + std::to_string(r.marker_samples) + " more at markers";
  if (r.missed_deadlines > 0) timing += ", " + std::to_string(r.missed_deadlines) + " deadlines missed";
  line(out, "duration", timing);

  // The bracket of peaks, each named for what it is.
  if (r.sampled_peak) {
    line(out, "peak RSS", human_bytes(r.sampled_peak->bytes) + "  Σ RSS of the tree, sampled, at " +
                              human_seconds(r.sampled_peak->t - r.start) + " (shared pages count once per process)");
  }
  if (r.pss_peak) {
    line(out, "peak PSS", human_bytes(r.pss_peak->pss) + "  Σ PSS of the tree, sampled every " +
                              human_seconds(r.pss_interval) + ", at " + human_seconds(r.pss_peak->t - r.start) +
                              " (USS peak " + human_bytes(r.uss_peak.value_or(0)) + ")");
  }
  if (r.kernel_process_peak) {
    line(out, "lower bound", human_bytes(*r.kernel_process_peak) +
                                 "  the largest single process, by the kernel (ru_maxrss)");
  }
  if (r.hwm_sum > 0) {
    line(out, "upper bound", human_bytes(r.hwm_sum) + "  Σ of each process's own high-water mark (VmHWM)");
  }
  if (r.cgroup_peak) {
    line(out, "exact (cgroup)", human_bytes(*r.cgroup_peak) + "  the tree's own cgroup, page cache included");
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
  line(out, "disk I/O", "read " + human_bytes(r.io.read_bytes) + ", written " + human_bytes(r.io.write_bytes) +
                            " (through syscalls: read " + human_bytes(r.io.rchar) + ", written " +
                            human_bytes(r.io.wchar) + ")");
  if (r.duration > 0) {
    char overhead[96];
    std::snprintf(overhead, sizeof overhead, "qprof itself used %.3f s of CPU (%.1f %% of one core)",
                  r.profiler_cpu_seconds, 100.0 * r.profiler_cpu_seconds / r.duration);
    line(out, "overhead", overhead);
  }
  line(out, "trace", r.trace_path);
  return out.str();
}

}  // namespace qprof
