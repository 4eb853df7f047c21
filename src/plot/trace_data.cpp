// SPDX-License-Identifier: Apache-2.0
// What a chart is drawn from: a series keeps the window's samples in its envelope and the one
// sample either side of the window, so that a line enters and leaves the chart where it should.
#include <memory>
#include <vector>

#include "qprof/plot/reduce.hpp"

namespace qprof::plot {

Series::Series(std::shared_ptr<EnvelopeGrid> grid, double from, double to)
    : env_(std::move(grid)), from_(from), to_(to) {}

void Series::add(double t, double v) {
  if (t < from_) {
    if (!before_ || t >= before_->t) before_ = Point{t, v};
  } else if (t > to_) {
    if (!after_ || t < after_->t) after_ = Point{t, v};
  } else {
    env_.add(t, v);
  }
}

std::vector<Point> Series::with_neighbours(const std::vector<Point>& inner) const {
  std::vector<Point> out;
  out.reserve(inner.size() + 2);
  if (before_) out.push_back(*before_);
  out.insert(out.end(), inner.begin(), inner.end());
  if (after_) out.push_back(*after_);
  return out;
}

std::vector<Point> Series::points() const { return with_neighbours(env_.points()); }

std::vector<Point> Series::last_points() const { return with_neighbours(env_.last_points()); }

TraceData::TraceData(std::size_t columns, double from, double to)
    : TraceData(std::make_shared<EnvelopeGrid>(columns), from, to) {}

TraceData::TraceData(std::shared_ptr<EnvelopeGrid> grid, double from, double to)
    : grid(grid),
      window_from(from),
      window_to(to),
      mem(grid, from, to),
      pss(grid, from, to),
      uss(grid, from, to),
      cgroup(grid, from, to),
      cgroup_unreclaimable(grid, from, to),
      pss_unreclaimable(grid, from, to),
      other_children(grid, from, to),
      gpu_total(grid, from, to),
      cpu(grid, from, to),
      io_read(grid, from, to),
      io_write(grid, from, to),
      anon(grid, from, to),
      file(grid, from, to),
      shmem(grid, from, to),
      swap(grid, from, to),
      stack_file(grid, from, to),
      stack_shmem(grid, from, to),
      processes(grid, from, to),
      threads(grid, from, to),
      vsz(grid, from, to) {}

}  // namespace qprof::plot
