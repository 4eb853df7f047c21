// SPDX-License-Identifier: Apache-2.0
// The least of the latest N values added: a figure that passing disturbances (a preempted query,
// a late answer) do not move, and that follows a lasting change within N values.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace qprof {

template <class T, std::size_t N = 8>
class LeastOfLatest {
 public:
  void add(T value) { latest_[count_++ % N] = value; }
  std::uint64_t count() const { return count_; }
  // T{} before the first value.
  T least() const {
    if (count_ == 0) return T{};
    T least = latest_[0];
    for (std::size_t k = 1; k < N && k < count_; ++k) least = std::min(least, latest_[k]);
    return least;
  }

 private:
  std::array<T, N> latest_{};
  std::uint64_t count_ = 0;
};

}  // namespace qprof
