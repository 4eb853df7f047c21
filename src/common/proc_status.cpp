// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/proc_status.hpp"

#include <cstring>

namespace qprof::proc {
namespace {

// The decimal number after "Key:" and blanks (status pads with tabs and spaces).
std::uint64_t number_after(std::string_view line, std::size_t key_len) {
  std::uint64_t v = 0;
  for (std::size_t i = key_len + 1; i < line.size(); ++i) {
    const char c = line[i];
    if (c >= '0' && c <= '9')
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    else if (c != ' ' && c != '\t')
      break;
  }
  return v;
}

bool is_key(std::string_view line, std::string_view key) {
  return line.size() > key.size() && line[key.size()] == ':' && std::memcmp(line.data(), key.data(), key.size()) == 0;
}

}  // namespace

StatusUsage parse_status_usage(std::string_view text) {
  // One pass over the lines, comparing only lines whose first letter can match: this runs per
  // process on the stats schedule, beside the VmHWM parse.
  StatusUsage u;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty()) continue;
    switch (line.front()) {
      case 'V':
        if (is_key(line, "VmSize"))
          u.vsz = number_after(line, 6) * 1024;
        else if (is_key(line, "VmSwap"))
          u.swap = number_after(line, 6) * 1024;
        break;
      case 'R':
        if (is_key(line, "RssAnon"))
          u.anon = number_after(line, 7) * 1024;
        else if (is_key(line, "RssFile"))
          u.file = number_after(line, 7) * 1024;
        else if (is_key(line, "RssShmem"))
          u.shmem = number_after(line, 8) * 1024;
        break;
      case 'T':
        if (is_key(line, "Threads")) {
          u.threads = number_after(line, 7);
          u.valid = true;
          return u;  // the last of the lines wanted
        }
        break;
      default:
        break;
    }
  }
  return u;
}

}  // namespace qprof::proc
