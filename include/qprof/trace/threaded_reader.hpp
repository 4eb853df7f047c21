// SPDX-License-Identifier: Apache-2.0
// A trace read and parsed on a thread of its own, while the caller's visitor works on what came
// before: a long trace's parsing and its visitor's work (qprof plot's reduction) then take two
// cores instead of one after the other.
#pragma once

#include <string>

#include "qprof/trace/format.hpp"

namespace qprof::trace {

// parse_file, with the reading and parsing on a second thread. `visitor` is called only on the
// calling thread, with the same calls in the same order as parse_file makes; a ParseError
// reaches the caller after every call for the lines before it, as from parse_file. What is in
// flight between the threads is bounded (a few batches of samples), whatever the file's size.
// An exception thrown by the visitor stops the reading thread and is rethrown here.
// A file under 4 MiB, one that is not a regular file (a pipe may never end, and the reading
// thread must be sure to stop), a machine of one core, or no thread to be had: parse_file.
void parse_file_threaded(const std::string& path, Visitor& visitor);

}  // namespace qprof::trace
