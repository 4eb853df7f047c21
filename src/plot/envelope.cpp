// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/envelope.hpp"

#include <algorithm>
#include <cmath>
#include <cassert>

namespace qprof::plot {
namespace {
constexpr double kFirstWidth = 1e-6;  // seconds
}

EnvelopeGrid::EnvelopeGrid(std::size_t columns) : columns_(std::max<std::size_t>(columns, 1)) {}

double EnvelopeGrid::width() const { return started_ ? width_ : 0.0; }

std::int64_t EnvelopeGrid::index(double t) {
  if (!started_) {
    started_ = true;
    origin_ = t;
    width_ = kFirstWidth;
    inverse_width_ = 1.0 / width_;
  }
  const double capacity = 2.0 * static_cast<double>(columns_);
  double i = std::floor((t - origin_) * inverse_width_);
  if (!(i >= 0)) i = 0;  // before the origin (a trace whose clock went back): the first bucket
  while (i >= capacity) {
    ++level_;
    width_ *= 2;
    inverse_width_ = 1.0 / width_;
    i = std::floor((t - origin_) * inverse_width_);
  }
  return static_cast<std::int64_t>(i);
}

Envelope::Envelope(std::size_t columns) : grid_(std::make_shared<EnvelopeGrid>(columns)) {}

Envelope::Envelope(std::shared_ptr<EnvelopeGrid> grid) : grid_(std::move(grid)) { assert(grid_); }

void Envelope::merge_into(Bucket& into, const Bucket& from) {
  if (!from.used) return;
  if (!into.used) {
    into = from;
    return;
  }
  // Buckets are merged in time order, so `from` holds the later samples (ties keep the earlier).
  into.last = from.last;
  if (from.lo.v < into.lo.v) into.lo = from.lo;
  if (from.hi.v > into.hi.v) into.hi = from.hi;
}

void Envelope::catch_up() const {
  while (level_ < grid_->level_) {
    ++level_;
    if (buckets_.empty()) {
      base_ >>= 1;
      continue;
    }
    const std::int64_t new_base = base_ >> 1;  // base_ >= 0: floor division
    const std::int64_t last = base_ + static_cast<std::int64_t>(buckets_.size()) - 1;
    std::vector<Bucket> merged(static_cast<std::size_t>((last >> 1) - new_base + 1));
    for (std::size_t k = 0; k < buckets_.size(); ++k) {
      const std::int64_t global = base_ + static_cast<std::int64_t>(k);
      merge_into(merged[static_cast<std::size_t>((global >> 1) - new_base)], buckets_[k]);
    }
    buckets_ = std::move(merged);
    base_ = new_base;
  }
}

void Envelope::add(double t, double v) {
  const Point p{t, v};
  if (count_ == 0) {
    max_ = min_ = first_ = p;
  } else {
    if (v > max_.v) max_ = p;
    if (v < min_.v) min_ = p;
  }
  last_ = p;
  ++count_;

  const std::int64_t i = grid_->index(t);
  catch_up();
  if (buckets_.empty()) {
    base_ = i;
    buckets_.resize(1);
  } else if (i < base_) {
    // Earlier than this series' first bucket (only when time goes back): grow at the front.
    buckets_.insert(buckets_.begin(), static_cast<std::size_t>(base_ - i), Bucket{});
    base_ = i;
  } else if (i >= base_ + static_cast<std::int64_t>(buckets_.size())) {
    buckets_.resize(static_cast<std::size_t>(i - base_ + 1));
  }
  Bucket& b = buckets_[static_cast<std::size_t>(i - base_)];
  if (!b.used) {
    b.used = true;
    b.first = b.last = b.lo = b.hi = p;
    return;
  }
  b.last = p;
  if (v < b.lo.v) b.lo = p;
  if (v > b.hi.v) b.hi = p;
}

std::vector<Point> Envelope::points() const {
  catch_up();
  std::vector<Point> out;
  out.reserve(buckets_.size() * 4);
  for (const Bucket& b : buckets_) {
    if (!b.used) continue;
    Point four[4] = {b.first, b.lo, b.hi, b.last};
    // In time order (stable: first stays before an equal-time extreme, last after it).
    std::stable_sort(four, four + 4, [](const Point& a, const Point& c) { return a.t < c.t; });
    for (const Point& p : four) {
      if (out.empty() || !(out.back() == p)) out.push_back(p);
    }
  }
  return out;
}

std::vector<Point> Envelope::last_points() const {
  catch_up();
  std::vector<Point> out;
  out.reserve(buckets_.size());
  for (const Bucket& b : buckets_) {
    if (b.used) out.push_back(b.last);
  }
  return out;
}

std::size_t Envelope::buckets() const {
  catch_up();
  return buckets_.size();
}

}  // namespace qprof::plot
