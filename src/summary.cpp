#include "qprof/summary.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace qprof {

std::string human_bytes(Bytes bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 4) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (unit == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, v < 10 ? "%.2f %s" : "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string human_seconds(Seconds s) {
  char buf[48];
  if (s < 0.001) std::snprintf(buf, sizeof buf, "%.0f µs", s * 1e6);
  else if (s < 1.0) std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else if (s < 120.0) std::snprintf(buf, sizeof buf, "%.3g s", s);
  else if (s < 7200.0) std::snprintf(buf, sizeof buf, "%d min %d s", static_cast<int>(s / 60), static_cast<int>(std::fmod(s, 60)));
  else std::snprintf(buf, sizeof buf, "%d h %d min", static_cast<int>(s / 3600), static_cast<int>(std::fmod(s, 3600) / 60));
  return buf;
}

std::string format_summary(const RunReport& r) {
  std::ostringstream out;
  out << "qprof: " << r.command << '\n';
  out << "qprof:   duration        " << human_seconds(r.duration) << ", " << r.samples << " samples";
  if (r.samples > 1) {
    out << " every " << human_seconds(r.mean_interval) << " on average (asked " << human_seconds(r.asked_interval) << ")";
  }
  if (r.marker_samples > 0) out << ", " << r.marker_samples << " more at markers";
  if (r.missed_deadlines > 0) out << ", " << r.missed_deadlines << " deadlines missed";
  out << '\n';
  if (r.sampled_peak) {
    out << "qprof:   peak (sampled)  " << human_bytes(r.sampled_peak->bytes) << " RSS of the tree at "
        << human_seconds(r.sampled_peak->t - r.start) << '\n';
  }
  if (r.kernel_process_peak) {
    out << "qprof:   peak (kernel)   " << human_bytes(*r.kernel_process_peak)
        << " largest single process (ru_maxrss, a lower bound for the tree)\n";
  }
  if (r.cgroup_peak) {
    out << "qprof:   peak (cgroup)   " << human_bytes(*r.cgroup_peak)
        << " the whole tree, exact (page cache included)\n";
  }
  for (const Stage& s : r.stages) {
    out << "qprof:   stage           " << s.name << ": " << human_seconds(s.t_end - s.t_start)
        << (s.closed ? "" : " (never ended)") << '\n';
  }
  out << "qprof:   trace           " << r.trace_path << '\n';
  return out.str();
}

}  // namespace qprof
