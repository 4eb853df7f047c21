#include "qprof/summary.hpp"

#include "qprof/units.hpp"

#include <sstream>

namespace qprof {

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
