// SPDX-License-Identifier: Apache-2.0
// Where markers come from: the job's stderr, which the tee copies on to qprof's, and the marker
// channel (a pipe the job inherits, and a FIFO). Both hand their markers to one inbox.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "marker_inbox.hpp"
#include "notices.hpp"
#include "qprof/record/mark_channel.hpp"
#include "qprof/record/markers.hpp"
#include "qprof/record/stderr_tee.hpp"

namespace qprof::record::session {

class MarkerIntake {
 public:
  explicit MarkerIntake(MarkerInbox::Wake wake);
  MarkerIntake(const MarkerIntake&) = delete;
  MarkerIntake& operator=(const MarkerIntake&) = delete;

  // Before any thread of qprof's starts (no getenv races with it): the channel created and
  // exported (QPROF_MARK_*), or, when it cannot be, those variables unset so that a qprof around
  // this one does not receive this run's markers.
  void open_channel(Notices& notices, const std::string& fifo_at);
  const MarkChannel* channel() const { return channel_.get(); }
  // Around the launch: the channel's write end is inherited by the command alone.
  void let_command_inherit_channel(bool inherit);

  // The tee first (a marker printed at once must find its sample taken at once), reading the
  // job's stderr from `stderr_pipe` (-1: none, attached), its writes guarded by `guard`.
  void start(int stderr_pipe, MarkerMatcher matcher, TeeOutputGuard* guard);
  MarkerInbox& inbox() { return inbox_; }
  // Said once, as the channel or stderr starts dropping the markers of a flooding writer.
  void say_drops(Notices& notices);
  // After the schedule loop: what is already written is read, waiting up to `stderr_wait_ms` for
  // the end of stderr (a daemon left running may hold it open); the channel never waits.
  void stop(int stderr_wait_ms);
  // The counts of dropped markers (and of lines --marker-regex gave up on), once everything was taken.
  void say_dropped_total(Notices& notices);
  // The end of the run: the pipe closed, so that a daemon's later writes to it fail (EPIPE)
  // instead of filling it.
  void release_stderr();

 private:
  // Markers whose label or line was cut at its bound, channel lines another write ended, and
  // lines --marker-regex could not search.
  void say_cut(Notices& notices) const;

  MarkerInbox inbox_;
  MarkerInbox::Wake wake_;
  std::unique_ptr<MarkChannel> channel_;
  std::uint64_t channel_drops_said_ = 0;
  std::uint64_t stderr_drops_said_ = 0;
  std::uint64_t regex_gave_up_said_ = 0;
  MarkerMatcher matcher_;  // the tee's copy shares its count of lines given up on
  std::optional<StderrTee> tee_;
};

}  // namespace qprof::record::session
