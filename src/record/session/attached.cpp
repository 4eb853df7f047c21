// SPDX-License-Identifier: Apache-2.0
#include "attached.hpp"

#include "qprof/common/safe_text.hpp"

namespace qprof::record::session {

std::unique_ptr<AttachedProcess> open_attached(pid_t pid, const std::string& proc_root, const Speaker& speaker) {
  auto opened = AttachedProcess::open(pid, proc_root);
  if (const auto* why = std::get_if<std::string>(&opened)) {
    speaker.line(*why);
    return nullptr;
  }
  return std::move(std::get<std::unique_ptr<AttachedProcess>>(opened));
}

void say_attached(pid_t pid, bool quiet, const MarkChannel* channel, const Speaker& speaker) {
  if (!quiet) {
    speaker.line("attached to process " + std::to_string(pid) +
                 " and its descendants; its stderr is not qprof's, so stderr markers are not seen; it stops at the "
                 "process's exit, --timeout or Ctrl-C, which never signal the process");
  }
  // The process did not inherit the channel: the FIFO is how it (or `qprof mark`, given the
  // variable) can still send markers and synchronous checkpoints. Under -q the writers use the
  // path they gave with --mark-fifo.
  if (channel && !quiet) {
    speaker.line("markers: QPROF_MARK_PATH=" + terminal_text(channel->fifo_path()) +
                 " (lines written to this FIFO are markers)");
  }
}

}  // namespace qprof::record::session
