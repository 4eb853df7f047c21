// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/output_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "output_target.hpp"
#include "qprof/common/write_all.hpp"
#include "unlink_on_signal.hpp"

namespace qprof {
namespace {

using detail::OutputTarget;

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// ".NAME.XXXXXXXX.tmp" beside `target`: hidden, and never a name a user would give. getrandom,
// not a shared std::random_device: a --yaml-stream thread may name one while the main thread does.
std::string temporary_name(const std::string& target) {
  static std::atomic<unsigned> fallback{0};
  unsigned random = 0;
  if (::getrandom(&random, sizeof random, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof random)) {
    random = static_cast<unsigned>(::getpid()) * 2654435761u + fallback++;  // O_EXCL retries a taken one
  }
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, ".%08x.tmp", random);
  const std::size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : target.substr(0, slash + 1);
  return dir + "." + target.substr(slash == std::string::npos ? 0 : slash + 1) + suffix;
}

Failure refuse(const std::string& path, const std::string& what) {
  return Failure{path + " is " + what +
                 ": qprof writes only a regular file (replaced whole), a FIFO or a character device"};
}

// The kernel or the file system has no O_TMPFILE (ENOENT: a kernel that predates it, or a missing
// folder, which the named fallback then reports by its own error).
bool no_tmpfile(int error) { return error == EOPNOTSUPP || error == EISDIR || error == EINVAL || error == ENOENT; }

// The file `path` names for writing (links and descriptor names followed), or its path when
// there is none yet.
struct FileIdentity {
  bool exists = false;
  bool device = false;  // a terminal or /dev/null: many programs' output at once, never a file's content
  dev_t dev = 0;
  ino_t ino = 0;
  std::string path;
};

// `as_output`: by OutputFile's rules ("-" is stdout); else as a reader opens it (a file named "-").
FileIdentity identity_of(const std::string& path, bool as_output) {
  FileIdentity id;
  struct stat st {};
  std::string where = path;
  bool found = false;
  if (as_output) {
    const Result<OutputTarget> resolved = detail::resolve_output(path);
    if (!resolved) return id;  // a path that cannot be looked at is said by the writer itself
    const OutputTarget& t = *resolved;
    found = t.kind == OutputTarget::Kind::descriptor ? ::fstat(t.fd, &st) == 0
                                                     : t.exists && ::stat(t.path.c_str(), &st) == 0;
    if (!t.path.empty()) where = t.path;
  } else {
    found = ::stat(path.c_str(), &st) == 0;
  }
  if (found) {
    id.exists = true;
    id.device = S_ISCHR(st.st_mode);
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    return id;
  }
  // Absolute first: weakly_canonical keeps a relative path whose first part does not exist as
  // it is ("x.dat"), while "./x.dat" becomes "/cwd/x.dat", and the two spellings of one file to
  // come would not compare equal.
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(where, ec);
  id.path = std::filesystem::weakly_canonical(ec ? std::filesystem::path(where) : absolute, ec).string();
  return id;
}

}  // namespace

Result<std::string> create_fresh(const std::string& wanted) {
  const std::size_t slash = wanted.rfind('/');
  const std::size_t dot = wanted.rfind('.');
  const std::size_t ext =
      dot != std::string::npos && (slash == std::string::npos || dot > slash + 1) ? dot : wanted.size();
  for (int k = 1; k <= 1000; ++k) {
    const std::string name = k == 1 ? wanted : wanted.substr(0, ext) + "~" + std::to_string(k) + wanted.substr(ext);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return name;
    }
    if (errno != EEXIST) return Failure{"cannot create " + name + ": " + std::strerror(errno)};
  }
  return Failure{"cannot create " + wanted + ": it and its next 999 free names are taken"};
}

Result<void> refuse_output_over(const std::string& path, const std::vector<std::string>& inputs) {
  const FileIdentity out = identity_of(path, true);
  for (const std::string& in : inputs) {
    const FileIdentity other = identity_of(in, false);
    const bool same = out.exists ? other.exists && other.dev == out.dev && other.ino == out.ino
                                 : !other.exists && !out.path.empty() && other.path == out.path;
    if (same && !out.device)
      return Failure{path + " is also " + in + ": an output never replaces what qprof reads or writes"};
  }
  return {};
}

Result<std::unique_ptr<OutputFile>> OutputFile::open(std::string path, Temporary temporary) {
  std::unique_ptr<OutputFile> file(new OutputFile(std::move(path)));
  // A failed open leaves nothing behind: the destructor discards what was made.
  if (Result<void> opened = file->open_target(temporary); !opened) return opened.failure();
  return file;
}

Result<void> OutputFile::open_target(Temporary temporary) {
  const Result<OutputTarget> resolved = detail::resolve_output(path_);
  if (!resolved) return resolved.failure();
  const OutputTarget& t = *resolved;
  switch (t.kind) {
    case OutputTarget::Kind::refused:
      return refuse(path_, t.what);
    case OutputTarget::Kind::descriptor:
      if (::fcntl(t.fd, F_GETFD) < 0) return failed("cannot write " + path_, errno);
      fd_ = t.fd;
      return {};
    case OutputTarget::Kind::in_place:
      target_ = t.path;
      fd_ = ::open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (fd_ < 0) return failed("cannot write " + path_, errno);
      owns_fd_ = true;
      return {};
    case OutputTarget::Kind::replace:
      target_ = t.path;
      replace_ = true;
      // A new inode under the name would leave the other names with the old content.
      if (t.exists && t.links > 1) {
        return Failure{"cannot write " + path_ + ": it has " + std::to_string(t.links) +
                       " hard links, which a replacement would break; remove it or write elsewhere"};
      }
      if (Result<void> opened = open_replacement(temporary); !opened) return opened;
      return keep_owner_and_mode(t);
  }
  return {};
}

// The replacement keeps the replaced file's owner, group and permissions: a private report stays
// private, and root's `--yaml` over a user's file leaves it the user's. An owner that cannot be
// kept (another user's file in a directory this user may write) is refused, not taken over.
Result<void> OutputFile::keep_owner_and_mode(const detail::OutputTarget& t) {
  if (!t.exists) return {};
  if ((t.uid != ::geteuid() || t.gid != ::getegid()) && ::fchown(fd_, t.uid, t.gid) != 0) {
    if (t.uid != ::geteuid())
      return failed("cannot write " + path_ + ": it belongs to another user, whom a replacement would not keep", errno);
    // The group alone: one this user is not in stays the user's default, as a new file's would.
  }
  if (::fchmod(fd_, t.mode) != 0) return failed("cannot write " + path_, errno);
  return {};
}

Result<void> OutputFile::open_replacement(Temporary temporary) {
  owns_fd_ = true;
  if (temporary == Temporary::unnamed_if_possible) {
    fd_ = ::open(parent_of(target_).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd_ >= 0) return {};
    if (!no_tmpfile(errno)) return failed("cannot write " + path_, errno);
  }
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    named_ = temporary_name(target_);
    // Guarded before it exists: a signal between open() and the guard would leave it behind.
    named_guard_ = detail::guard_unlink_on_signal(named_);
    fd_ = ::open(named_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) return {};
    const int error = errno;
    detail::release_unlink_on_signal(named_guard_);
    named_guard_ = -1;
    named_.clear();
    if (error != EEXIST) return failed("cannot write " + path_, error);
  }
  return failed("cannot write " + path_ + ": no free temporary name", 0);
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!named_.empty()) ::unlink(named_.c_str());
  named_.clear();
  detail::release_unlink_on_signal(named_guard_);
  named_guard_ = -1;
}

Failure OutputFile::failed(const std::string& what, int error) const {
  return Failure{error == 0 ? what : what + ": " + std::strerror(error)};
}

Result<void> OutputFile::write(std::string_view bytes) {
  const WriteOutcome w = write_all(fd_, bytes);
  if (!w.ok()) return failed("cannot write " + path_, w.error);
  return {};
}

// The unnamed file takes the target's place: straight under its name when there is none yet
// (linkat never replaces), else under a temporary name renamed over the target at once.
Result<void> OutputFile::link_in() {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, target_.c_str(), AT_SYMLINK_FOLLOW) == 0) return {};
  if (errno != EEXIST) return failed("cannot write " + path_, errno);
  for (int attempt = 0; attempt < 100 && named_.empty(); ++attempt) {
    const std::string name = temporary_name(target_);
    named_guard_ = detail::guard_unlink_on_signal(name);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      named_ = name;
      return {};
    }
    const int error = errno;
    detail::release_unlink_on_signal(named_guard_);
    named_guard_ = -1;
    if (error != EEXIST) return failed("cannot write " + path_, error);
  }
  if (named_.empty()) return failed("cannot write " + path_ + ": no free temporary name", 0);
  return {};
}

Result<void> OutputFile::commit() {
  if (committed_) return {};
  if (!replace_) {
    if (owns_fd_ && ::close(fd_) != 0) return failed("cannot write " + path_, errno);
    fd_ = -1;
    committed_ = true;
    return {};
  }
  // On disk before it takes the old file's place: a crash then leaves the old file or the new.
  if (::fsync(fd_) != 0 && errno != EINVAL) return failed("cannot write " + path_, errno);
  if (Result<void> placed = put_in_place(); !placed) return placed;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return failed("cannot write " + path_, errno);
  committed_ = true;
  return {};
}

// The replacement under the target's name: linked in, or renamed over it from its named temporary.
Result<void> OutputFile::put_in_place() {
  if (named_.empty()) {
    if (Result<void> linked = link_in(); !linked) return linked;
  }
  if (named_.empty()) return {};
  // What was a regular file when this began may be something else now: never rename over that.
  const Result<OutputTarget> now = detail::resolve_output(path_);
  if (!now) return now.failure();
  if (now->kind != OutputTarget::Kind::replace || now->path != target_) {
    return refuse(path_, now->kind == OutputTarget::Kind::refused ? now->what : "no longer the regular file it was");
  }
  if (::rename(named_.c_str(), target_.c_str()) != 0) return failed("cannot write " + path_, errno);
  named_.clear();
  return {};
}

Result<void> write_output(const std::string& path, std::string_view text) {
  Result<std::unique_ptr<OutputFile>> out = OutputFile::open(path);
  if (!out) return out.failure();
  if (Result<void> written = (*out)->write(text); !written) return written;
  return (*out)->commit();
}

Result<void> check_output(const std::string& path) {
  const Result<OutputTarget> resolved = detail::resolve_output(path);
  if (!resolved) return resolved.failure();
  const OutputTarget& t = *resolved;
  switch (t.kind) {
    case OutputTarget::Kind::refused:
      return refuse(path, t.what);
    case OutputTarget::Kind::descriptor:
      if (::fcntl(t.fd, F_GETFD) < 0) return Failure{"cannot write " + path + ": " + std::strerror(errno)};
      return {};
    case OutputTarget::Kind::in_place:
      if (::access(t.path.c_str(), W_OK) != 0) return Failure{"cannot write " + path + ": " + std::strerror(errno)};
      return {};
    case OutputTarget::Kind::replace: {
      // A file beside the target can be made; dropped without a trace.
      const Result<std::unique_ptr<OutputFile>> probe = OutputFile::open(path);
      if (!probe) return probe.failure();
      return {};
    }
  }
  return {};
}

}  // namespace qprof
