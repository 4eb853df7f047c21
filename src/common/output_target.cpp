// SPDX-License-Identifier: Apache-2.0
#include "output_target.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>

namespace qprof::detail {
namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit (ELOOP)

// The descriptor a path names by itself, without a look at the file system: "/dev/stdout" is a
// link to /proc/self/fd/1, which is a link to whatever fd 1 is (a regular file when the shell
// redirected it): following it would replace the file the shell opened.
std::optional<int> descriptor_of(std::string_view path) {
  if (path == "-" || path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix)) continue;
    const std::string_view digits = path.substr(prefix.size());
    int fd = -1;
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
    if (!digits.empty() && r.ec == std::errc() && r.ptr == digits.data() + digits.size()) return fd;
  }
  return std::nullopt;
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

Failure cannot(const std::string& path, int error) {
  return Failure{"cannot write " + path + ": " + std::strerror(error)};
}

}  // namespace

Result<OutputTarget> resolve_output(const std::string& path) {
  OutputTarget t;
  if (path.empty()) return Failure{"cannot write an output with no name"};
  std::string at = path;
  for (int hop = 0; hop <= kMaxLinks; ++hop) {
    if (const auto fd = descriptor_of(at)) {
      t.kind = OutputTarget::Kind::descriptor;
      t.fd = *fd;
      return t;
    }
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0) {
      if (errno != ENOENT) return cannot(path, errno);
      t.path = at;  // nothing there yet (a dangling link's target included): created
      return t;
    }
    if (S_ISLNK(st.st_mode)) {
      std::string link(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
      const ssize_t n = ::readlink(at.c_str(), link.data(), link.size());
      if (n < 0) return cannot(path, errno);
      if (static_cast<std::size_t>(n) >= link.size()) return cannot(path, ENAMETOOLONG);
      link.resize(static_cast<std::size_t>(n));
      at = link.starts_with('/') ? link : parent_of(at) + "/" + link;
      continue;
    }
    t.path = at;
    t.exists = true;
    t.mode = st.st_mode & 07777;
    t.uid = st.st_uid;
    t.gid = st.st_gid;
    t.links = st.st_nlink;
    if (S_ISREG(st.st_mode))
      t.kind = OutputTarget::Kind::replace;
    else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
      t.kind = OutputTarget::Kind::in_place;
    else {
      t.kind = OutputTarget::Kind::refused;
      t.what = S_ISDIR(st.st_mode)    ? "a directory"
               : S_ISBLK(st.st_mode)  ? "a block device"
               : S_ISSOCK(st.st_mode) ? "a socket"
                                      : "not a file";
    }
    return t;
  }
  return cannot(path, ELOOP);
}

}  // namespace qprof::detail
