// SPDX-License-Identifier: Apache-2.0
// What qprof says during a run. A warning is said through the run's Speaker (above the live line
// when there is one), kept for the summary, and written in the trace as a NOTE; those said before
// the trace's header wait for it, as do the quiet notes, which are for the trace alone.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "qprof/common/speaker.hpp"
#include "qprof/record/live_line.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::record::session {

class Notices {
 public:
  // Every warning is also appended to `said` (the report's list), as it is said through `speaker`.
  // `quiet` (-q): warnings are kept and written, not said: -q prints nothing but errors.
  explicit Notices(std::vector<std::string>& said, bool quiet = false, Speaker speaker = {})
      : warnings_(said), quiet_(quiet), speaker_(std::move(speaker)) {}
  Notices(const Notices&) = delete;
  Notices& operator=(const Notices&) = delete;

  void warn(const std::string& text);
  // Said as a warning is (above the live line), neither kept nor written: what qprof
  // found (the GPU backend, opened beside the command once the live line may be up).
  void say(const std::string& text);
  // Not said (no GPU found is the normal case): a NOTE of the trace alone (in its
  // header, or where it comes once the header is written: a backend that opened beside the job).
  void note_quietly(std::string text);
  // Once the header is written: every warning so far, then the quiet notes, as NOTE lines; later
  // warnings go to `trace` as they come. `trace` must outlive the run.
  void write_to(trace::Writer& trace);
  // From now on warnings are said above `live`, in a pause of its frames (nullptr: none).
  void show_through(LiveLine* live) { live_ = live; }
  // Without a live line: what the job's stderr copy holds while it writes, so that a notice said
  // meanwhile never lands inside one of the job's writes (with one, the live line is that guard).
  TeeOutputGuard* plain_stderr() { return &plain_; }

 private:
  // A lock around writes to qprof's stderr, shared with the copy of the job's.
  class PlainStderr : public TeeOutputGuard {
   public:
    void before_output() override { mu_.lock(); }
    void after_output() override { mu_.unlock(); }
    std::mutex mu_;
  };

  std::vector<std::string>& warnings_;
  bool quiet_;
  Speaker speaker_;
  std::vector<std::string> quiet_notes_;
  trace::Writer* trace_ = nullptr;
  LiveLine* live_ = nullptr;
  PlainStderr plain_;
};

}  // namespace qprof::record::session
