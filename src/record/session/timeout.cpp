// SPDX-License-Identifier: Apache-2.0
#include "timeout.hpp"

namespace qprof::record::session {
namespace {

constexpr double kNs = 1e9;

}  // namespace

Timeout::Timeout(std::optional<Seconds> timeout, Seconds kill_grace, std::int64_t start_ns, bool attached)
    : length_(timeout.value_or(0)),
      grace_(kill_grace),
      grace_ns_(static_cast<std::int64_t>(kill_grace * kNs)),
      attached_(attached) {
  if (timeout) timeout_at_ = start_ns + static_cast<std::int64_t>(*timeout * kNs);
}

Timeout::Action Timeout::due(std::int64_t now, bool applies) {
  if (!timeout_at_ || killed_ || !applies) return Action::none;
  if (attached_ && now >= *timeout_at_) {
    timed_out_ = killed_ = true;
    return Action::stop_attach;
  }
  if (kill_at_ < 0 && now >= *timeout_at_) {
    timed_out_ = true;
    kill_at_ = now + grace_ns_;
    return Action::terminate;
  }
  if (kill_at_ >= 0 && now >= kill_at_) {
    killed_ = true;
    return Action::kill;
  }
  return Action::none;
}

std::optional<std::int64_t> Timeout::next_deadline() const {
  if (timeout_at_ && kill_at_ < 0) return *timeout_at_;
  if (kill_at_ >= 0 && !killed_) return kill_at_;
  return std::nullopt;
}

}  // namespace qprof::record::session
