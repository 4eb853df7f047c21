// SPDX-License-Identifier: Apache-2.0
// Helpers the GPU backends share (not a public header).
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "qprof/gpu/backend.hpp"
#include "qprof/common/units.hpp"

namespace qprof::gpu::detail {

// Warnings a backend finds on its query threads, each said once, taken by the sampler.
class Warnings {
 public:
  // Adds `text` unless a warning with the same `key` was given before.
  void once(const std::string& key, std::string text) {
    std::lock_guard<std::mutex> lock(mu_);
    if (std::find(keys_.begin(), keys_.end(), key) != keys_.end()) return;
    keys_.push_back(key);
    pending_.push_back(std::move(text));
  }
  void take(std::vector<std::string>& out) {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::string& w : pending_) out.push_back(std::move(w));
    pending_.clear();
  }

 private:
  std::mutex mu_;
  std::vector<std::string> keys_;
  std::vector<std::string> pending_;
};

// "NVIDIA H100 GPU-… 80.0 GiB; …": the devices a backend found, for its one-line description.
inline std::string describe(const std::vector<Device>& devices) {
  std::string s;
  for (const Device& d : devices) {
    if (!s.empty()) s += "; ";
    s += d.name + " " + d.uuid;
    if (d.total > 0) s += " " + human_bytes(d.total);
  }
  return s;
}

inline bool has_pid(std::span<const pid_t> sorted, pid_t pid) {
  return std::binary_search(sorted.begin(), sorted.end(), pid);
}

}  // namespace qprof::gpu::detail
