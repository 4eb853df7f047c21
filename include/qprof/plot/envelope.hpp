// SPDX-License-Identifier: Apache-2.0
// The min/max envelope that lets a chart of millions of samples keep every peak.
//
// Samples are gathered into time buckets, and each bucket keeps four samples: its first, its
// last, its lowest and its highest (the "M4" reduction). Drawn as one line through those points
// in time order, the result looks exactly like the line through every sample at the resolution
// of the chart, and the true maximum and minimum are always among the points.
//
// The bucket width adapts in a single pass: the grid starts with 1 µs buckets and doubles their
// width (merging neighbours) whenever a sample falls beyond 2 × `columns` buckets from the first
// one. At the end a series spans between `columns` and 2 × `columns` buckets (fewer for a short
// one), whatever its length, in memory proportional to `columns`.
//
// Several series of one trace (the tree, each child, PSS, …) can share one grid, so that they
// are all cut at the same times; a series then only holds the buckets of its own time span.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace qprof::plot {

struct Point {
  double t = 0;
  double v = 0;
  friend bool operator==(const Point&, const Point&) = default;
};

class EnvelopeGrid {
 public:
  explicit EnvelopeGrid(std::size_t columns);
  std::size_t columns() const { return columns_; }
  // Bucket width in seconds right now; 0 before the first sample.
  double width() const;
  std::uint32_t level() const { return level_; }

 private:
  friend class Envelope;
  // The bucket of time t (the first call fixes the origin); coarsens the grid as needed.
  std::int64_t index(double t);

  std::size_t columns_;
  bool started_ = false;
  double origin_ = 0;
  double width_ = 0;
  double inverse_width_ = 0;
  std::uint32_t level_ = 0;
};

class Envelope {
 public:
  // A series with a grid of its own.
  explicit Envelope(std::size_t columns);
  // A series on a grid shared with others; `grid` is never null (a precondition, asserted).
  explicit Envelope(std::shared_ptr<EnvelopeGrid> grid);

  void add(double t, double v);

  bool empty() const { return count_ == 0; }
  std::uint64_t count() const { return count_; }
  // The highest and lowest samples (the first of equals). Only when !empty().
  Point max() const { return max_; }
  Point min() const { return min_; }
  Point first() const { return first_; }
  Point last() const { return last_; }

  // First, lowest, highest and last sample of each bucket, in time order, without repeats.
  std::vector<Point> points() const;
  // The last sample of each bucket: what a cumulative counter is drawn from.
  std::vector<Point> last_points() const;
  // Buckets currently held (some may be empty).
  std::size_t buckets() const;

 private:
  struct Bucket {
    Point first, last, lo, hi;
    bool used = false;
  };
  static void merge_into(Bucket& into, const Bucket& from);
  void catch_up() const;  // applies the grid's coarsenings this series has not seen yet

  std::shared_ptr<EnvelopeGrid> grid_;
  // Buckets are kept lazily coarsened: they follow the grid's level only when touched.
  mutable std::vector<Bucket> buckets_;
  mutable std::int64_t base_ = 0;  // grid index of buckets_[0]
  mutable std::uint32_t level_ = 0;
  std::uint64_t count_ = 0;
  Point max_, min_, first_, last_;
};

}  // namespace qprof::plot
