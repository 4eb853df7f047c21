// SPDX-License-Identifier: Apache-2.0
#include "marker_intake.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace qprof::record::session {

MarkerIntake::MarkerIntake(MarkerInbox::Wake wake) : inbox_(wake), wake_(std::move(wake)) {}

void MarkerIntake::open_channel(Notices& notices, const std::string& fifo_at) {
  Result<std::unique_ptr<MarkChannel>> created = MarkChannel::create(fifo_at);
  if (!created) {
    ::unsetenv(std::string(kMarkFdVariable).c_str());
    ::unsetenv(std::string(kMarkPathVariable).c_str());
    ::unsetenv(std::string(kMarkFdIdVariable).c_str());
    notices.warn("no marker channel (" + created.failure().message + "): markers come from stderr only");
    return;
  }
  channel_ = std::move(*created);
  ::setenv(std::string(kMarkFdVariable).c_str(), std::to_string(channel_->write_fd()).c_str(), 1);
  ::setenv(std::string(kMarkFdIdVariable).c_str(), channel_->write_fd_id().c_str(), 1);
  if (channel_->fifo_path().empty()) {
    ::unsetenv(std::string(kMarkPathVariable).c_str());
    notices.warn("no marker FIFO (" + channel_->fifo_problem() +
                 "): markers come through QPROF_MARK_FD and stderr only; set TMPDIR to a directory you may write");
    return;
  }
  ::setenv(std::string(kMarkPathVariable).c_str(), channel_->fifo_path().c_str(), 1);
}

void MarkerIntake::let_command_inherit_channel(bool inherit) {
  if (channel_) ::fcntl(channel_->write_fd(), F_SETFD, inherit ? 0 : FD_CLOEXEC);
}

void MarkerIntake::start(int stderr_pipe, MarkerMatcher matcher, TeeOutputGuard* guard) {
  matcher_ = matcher;
  if (stderr_pipe >= 0) {
    // The same bounded queue as the channel's: a flood of marker lines is dropped past it rather
    // than holding the job's stderr (and the job) until the sampler took each one.
    tee_.emplace(stderr_pipe, STDERR_FILENO, std::move(matcher), [this](const std::string& label) {
      return inbox_.post(PendingMarker{label, {}, {}});
    });
    tee_->guard_output(guard);
    tee_->wake_while([this] { return inbox_.waiting(); }, wake_);
    tee_->start();
  }
  if (channel_) {
    channel_->start([this](PendingMarker m) { return inbox_.post(std::move(m)); }, [this] { return inbox_.waiting(); },
                    wake_);
  }
}

void MarkerIntake::say_drops(Notices& notices) {
  const std::uint64_t channel = channel_ ? channel_->dropped() : 0;
  if (channel > 0 && channel_drops_said_ == 0) {
    notices.warn("the marker channel is flooded: markers beyond " + std::to_string(MarkerInbox::kMaxWaiting) +
                 " waiting for their checkpoint are dropped");
  }
  channel_drops_said_ = channel;
  const std::uint64_t on_stderr = (tee_ ? tee_->dropped() : 0);
  if (on_stderr > 0 && stderr_drops_said_ == 0) {
    notices.warn("stderr is flooded with markers: markers beyond " + std::to_string(MarkerInbox::kMaxWaiting) +
                 " waiting for their checkpoint are dropped");
  }
  stderr_drops_said_ = on_stderr;
  if (matcher_.gave_up() > 0 && regex_gave_up_said_ == 0) {
    notices.warn("--marker-regex backtracks too much: a line on which it takes more than " +
                 std::to_string(kMarkerMatchSteps) + " steps is no marker");
  }
  regex_gave_up_said_ = matcher_.gave_up();
}

void MarkerIntake::stop(int stderr_wait_ms) {
  inbox_.end_loop();
  if (tee_) tee_->finish(stderr_wait_ms);
  if (channel_) channel_->finish();  // never waits for an end: daemons may hold the write end
}

void MarkerIntake::release_stderr() { tee_.reset(); }

void MarkerIntake::say_dropped_total(Notices& notices) {
  if (channel_ && channel_->dropped() > 0) {
    notices.warn("the marker channel dropped " + std::to_string(channel_->dropped()) + " markers (flooded)");
  }
  if ((tee_ ? tee_->dropped() : 0) > 0) {
    notices.warn("stderr's marker lines: dropped " + std::to_string((tee_ ? tee_->dropped() : 0)) +
                 " markers (flooded)");
  }
  say_cut(notices);
  if (matcher_.gave_up() > 0) {
    notices.warn("--marker-regex gave up on " + std::to_string(matcher_.gave_up()) + " lines (more than " +
                 std::to_string(kMarkerMatchSteps) + " steps each): they were not taken as markers");
  }
}

void MarkerIntake::say_cut(Notices& notices) const {
  const auto times = [](std::uint64_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  if (const std::uint64_t cut = tee_ ? tee_->labels_cut() : 0) {
    notices.warn("stderr: " + times(cut, "marker label") + " longer than " + std::to_string(kMarkerLabelLimit) +
                 " bytes, cut there");
  }
  if (const std::uint64_t cut = channel_ ? channel_->cut() : 0) {
    notices.warn("the marker channel: " + times(cut, "marker line") + " longer than " +
                 std::to_string(kMarkerScanLimit) + " bytes, cut there");
  }
  if (const std::uint64_t open = channel_ ? channel_->unterminated() : 0) {
    notices.warn("the marker channel: " + times(open, "line") +
                 " without a newline, ended where another marker's write began (each taken at that moment)");
  }
  if (const std::uint64_t unsearched = tee_ ? tee_->lines_too_long() : 0) {
    notices.warn("stderr: " + times(unsearched, "line") + " longer than " + std::to_string(kMarkerLineLimit) +
                 " bytes, not searched for --marker-regex's markers");
  }
}

}  // namespace qprof::record::session
