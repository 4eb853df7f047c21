// SPDX-License-Identifier: Apache-2.0
#include "marker_intake.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace qprof::session_detail {

MarkerIntake::MarkerIntake(MarkerInbox::Wake wake) : inbox_(wake), wake_(std::move(wake)) {}

void MarkerIntake::open_channel(Notices& notices) {
  std::string why_not;
  channel_ = MarkChannel::create(why_not);
  if (!channel_) {
    ::unsetenv(std::string(kMarkFdVariable).c_str());
    ::unsetenv(std::string(kMarkPathVariable).c_str());
    ::unsetenv(std::string(kMarkFdIdVariable).c_str());
    notices.warn("no marker channel (" + why_not + "): markers come from stderr only");
    return;
  }
  ::setenv(std::string(kMarkFdVariable).c_str(), std::to_string(channel_->write_fd()).c_str(), 1);
  ::setenv(std::string(kMarkFdIdVariable).c_str(), channel_->write_fd_id().c_str(), 1);
  ::setenv(std::string(kMarkPathVariable).c_str(), channel_->fifo_path().c_str(), 1);
}

void MarkerIntake::let_command_inherit_channel(bool inherit) {
  if (channel_) ::fcntl(channel_->write_fd(), F_SETFD, inherit ? 0 : FD_CLOEXEC);
}

void MarkerIntake::start(int stderr_pipe, MarkerMatcher matcher, TeeOutputGuard* guard) {
  if (stderr_pipe >= 0) {
    tee_.emplace(stderr_pipe, STDERR_FILENO, std::move(matcher),
                 [this](std::string label) { inbox_.post_and_wait(std::move(label)); });
    tee_->guard_output(guard);
    tee_->start();
  }
  if (channel_) {
    channel_->start([this](PendingMarker m) { return inbox_.post(std::move(m)); },
                    [this] { return inbox_.waiting(); }, wake_);
  }
}

void MarkerIntake::say_drops(Notices& notices) {
  if (!channel_ || channel_->dropped() == drops_said_) return;
  if (drops_said_ == 0) {
    notices.warn("the marker channel is flooded: markers beyond " + std::to_string(MarkerInbox::kMaxWaiting) +
                 " waiting for their checkpoint are dropped");
  }
  drops_said_ = channel_->dropped();
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
}

}  // namespace qprof::session_detail
