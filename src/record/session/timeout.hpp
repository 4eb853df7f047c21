// SPDX-License-Identifier: Apache-2.0
// --timeout: when it falls due, the tree gets SIGTERM, and SIGKILL once --kill-grace has passed
// with processes left. Attached, it stops the attach instead and signals nothing. This class
// decides; the exit tracker signals.
#pragma once

#include <cstdint>
#include <optional>

#include "qprof/common/types.hpp"

namespace qprof::record::session {

class Timeout {
 public:
  enum class Action { none, stop_attach, terminate, kill };

  Timeout(std::optional<Seconds> timeout, Seconds kill_grace, std::int64_t start_ns, bool attached);

  // What is due at `now`; `applies`: the command still runs, or its daemons are waited for.
  Action due(std::int64_t now, bool applies);
  // When the run must wake up for the timeout or the kill (nullopt: nothing pending).
  std::optional<std::int64_t> next_deadline() const;
  bool timed_out() const { return timed_out_; }
  bool killed() const { return killed_; }     // the kill was due (attached: the attach stopped)
  Seconds length() const { return length_; }  // as asked, for messages
  Seconds grace() const { return grace_; }

 private:
  Seconds length_;
  Seconds grace_;
  std::optional<std::int64_t> timeout_at_;
  std::int64_t grace_ns_;
  bool attached_;
  std::int64_t kill_at_ = -1;
  bool timed_out_ = false;
  bool killed_ = false;
};

}  // namespace qprof::record::session
