// SPDX-License-Identifier: Apache-2.0
// Where `qprof run` writes its trace. Two runs never write the same file: the default name
// carries the time to the millisecond and qprof's PID and is created exclusively; a file named
// with -o is replaced, unless another live qprof is writing it (an flock held for the whole
// run says so). A pipe or FIFO is streamed to; "-" is stdout; a device is refused.
#pragma once

#include <string>

#include "qprof/common/failure.hpp"
#include "qprof/common/speaker.hpp"
#include "qprof/record/job.hpp"

namespace qprof::record {

struct TraceOutput {
  int fd = -1;                 // the caller owns it (it holds the lock of a regular file)
  std::string path;            // as messages name it: the file, or "-" for stdout
  bool readable_back = false;  // a regular file: it can be read back once the run is over
  // A regular file: a descriptor for reading the same file, opened with it (the caller owns it).
  // The run's end reads the trace through it, never by path: a trace moved away and replaced
  // during the run is still the one described.
  int read_fd = -1;
  bool created = false;  // a regular file that qprof created: removed when the command never starts
  // An existing file with content: emptied only once the command has started (TraceSink::begin),
  // so that a command that cannot start (`-o old.dat -- ./missing`) leaves it as it was.
  bool to_empty = false;
};

// Opens `requested` (empty: the default name for `identity`, "-": stdout; then qprof's stdout,
// which the command inherits, becomes a copy of its stderr). A Failure says why the output cannot
// be used: a usage error, said before the command starts. A FIFO without a reader is waited for,
// and `speaker` says so.
Result<TraceOutput> open_trace_output(const std::string& requested, const JobIdentity& identity = {},
                                      const Speaker& speaker = {});

// The default trace name for a run starting now: qprof_YYYYMMDDhhmmss.mmm_PID.dat, with the host
// and rank when a launcher gave one (qprof_HOST.rRANK_YYYYMMDDhhmmss.mmm_PID.dat). The one place
// that decides it.
std::string default_trace_name(const JobIdentity& identity = {});

}  // namespace qprof::record
