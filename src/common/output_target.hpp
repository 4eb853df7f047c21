// SPDX-License-Identifier: Apache-2.0
// What an output path names, for OutputFile: the file to write after following symbolic links,
// and how it may be written.
#pragma once

#include <string>

#include "qprof/common/failure.hpp"

namespace qprof::detail {

struct OutputTarget {
  enum class Kind {
    replace,     // a regular file or nothing yet: replaced whole
    in_place,    // a FIFO or a character device: opened and written
    descriptor,  // "-", /dev/stdout, /dev/fd/N…: an open descriptor
    refused,     // a directory, a block device, a socket
  };
  Kind kind = Kind::replace;
  std::string path;  // the file itself, links followed (replace, in_place)
  int fd = -1;       // descriptor
  bool exists = false;
  unsigned mode = 0;          // permission bits of the file replaced
  unsigned uid = 0, gid = 0;  // its owner and group
  unsigned long links = 1;    // its hard links
  std::string what;           // refused: "a directory", …
};

// Follows `path` (up to 40 links, as the kernel does). Fails when a link cannot be read or a path
// cannot be looked at.
Result<OutputTarget> resolve_output(const std::string& path);

}  // namespace qprof::detail
