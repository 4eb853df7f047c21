// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/mark_channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "qprof/common/text.hpp"
#include "qprof/record/markers.hpp"

namespace qprof::record {
namespace {

// Torch figures held for one source's next marker: a writer that sends only figures cannot
// make qprof's memory grow.
constexpr std::size_t kMaxPendingTorch = 64;

bool starts_with_word(std::string_view s, std::string_view word) {
  return s.substr(0, word.size()) == word &&
         (s.size() == word.size() || s[word.size()] == ' ' || s[word.size()] == '\t');
}

template <typename T>
bool parse_number(std::string_view s, T& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// A label as on stderr: what follows the marker text when the line has it, else the whole line.
std::string label_of(std::string_view text) {
  const std::size_t at = text.find(kDefaultMarkerPrefix);
  if (at != std::string_view::npos) text = text.substr(at + kDefaultMarkerPrefix.size());
  return std::string(trim_blanks(text));
}

}  // namespace

ChannelLine parse_channel_line(std::string_view line) {
  line = skip_blanks(line);
  if (starts_with_word(line, kTorchWord)) {
    line.remove_prefix(kTorchWord.size());
    ChannelTorchLine torch;
    std::int64_t device = -1;
    if (!parse_number(take_word(line), device) || device < 0 || device > 1023) return {};
    if (!parse_number(take_word(line), torch.figure.allocated)) return {};
    if (!parse_number(take_word(line), torch.figure.reserved)) return {};
    torch.figure.device = static_cast<int>(device);
    return torch;
  }
  PendingMarker marker;
  if (starts_with_word(line, kSyncWord)) {
    line.remove_prefix(kSyncWord.size());
    const std::string_view reply = take_word(line);
    if (reply.empty() || reply.front() != '/') return {};  // a reply FIFO is named by its absolute path
    marker.reply_path = std::string(reply);
  }
  marker.label = label_of(line);
  if (marker.label.empty()) return {};
  return marker;
}

namespace {

// Whether a write starts with a word of the protocol: then it starts a line of its own.
bool starts_protocol_line(std::string_view data) {
  return data.starts_with(kDefaultMarkerPrefix) || starts_with_word(data, kSyncWord) ||
         starts_with_word(data, kTorchWord);
}

}  // namespace

void ChannelLineReader::feed(std::string_view data, bool after_empty, const OnLine& on_line) {
  if (after_empty && !line_.empty() && starts_protocol_line(data)) end_line(on_line, true);
  while (!data.empty()) {
    const std::size_t nl = data.find('\n');
    const std::size_t len = nl == std::string_view::npos ? data.size() : nl;
    // A longer line is cut: its first kMarkerScanLimit bytes are its text (a marker so taken is counted).
    const std::size_t room = kMarkerScanLimit - line_.size();
    line_.append(data.substr(0, std::min(len, room)));
    if (len > room) cut_ = true;
    if (nl == std::string_view::npos) return;
    end_line(on_line, false);
    data.remove_prefix(len + 1);
  }
}

void ChannelLineReader::end_line(const OnLine& on_line, bool unterminated) {
  on_line(line_, cut_, unterminated);
  line_.clear();
  cut_ = false;
}

namespace {

// The name qprof's helpers give their reply FIFO: `<TMPDIR>/qprof-ack.XXXXXX/ack`.
bool is_reply_fifo_name(const std::string& reply_path) {
  const std::size_t slash = reply_path.rfind('/');
  if (slash == std::string::npos || reply_path.compare(slash, std::string::npos, "/ack") != 0) return false;
  const std::size_t dir_slash = reply_path.rfind('/', slash - 1);
  return dir_slash != std::string::npos && reply_path.compare(dir_slash + 1, 10, "qprof-ack.") == 0;
}

}  // namespace

void send_ack(const std::string& reply_path) {
  // A pipe carries no sender's credentials, and qprof may be root while the writer is not: the
  // reply goes only where qprof's own helpers wait for it, `.../qprof-ack.XXXXXX/ack`, a FIFO with
  // one link in a directory of the FIFO's owner that no one else may enter or change. Any other
  // path (another user's FIFO, a root-only FIFO named by a less privileged descendant) gets nothing.
  if (!is_reply_fifo_name(reply_path)) return;
  const std::string dir = reply_path.substr(0, reply_path.rfind('/'));
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return;
  struct stat dir_st {
  }, st{}, opened{};
  int fd = -1;
  if (::fstat(dir_fd, &dir_st) == 0 && (dir_st.st_mode & 077) == 0 &&
      ::fstatat(dir_fd, "ack", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISFIFO(st.st_mode) && st.st_uid == dir_st.st_uid &&
      st.st_nlink == 1) {
    fd = ::openat(dir_fd, "ack", O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);  // ENXIO: gave up
  }
  ::close(dir_fd);
  if (fd < 0) return;
  if (::fstat(fd, &opened) == 0 && opened.st_dev == st.st_dev && opened.st_ino == st.st_ino) {
    // A reader that closed in between makes this EPIPE: SIGPIPE is ignored while qprof runs.
    [[maybe_unused]] const ssize_t w = ::write(fd, "ok\n", 3);
  }
  ::close(fd);
}

namespace {

// Why the writers would refuse a FIFO of qprof's uid in the directory open as `dir_fd`, or "".
std::string refused_directory(int dir_fd, const std::string& dir) {
  struct stat st {};
  if (::fstat(dir_fd, &st) != 0) return dir + ": " + std::strerror(errno);
  const uid_t me = ::geteuid();
  const std::string fix = "; use a directory only you may change (mkdir -m 700 DIR) or a sticky one such as /tmp";
  if (st.st_uid != me && st.st_uid != 0) {
    return dir + " belongs to uid " + std::to_string(st.st_uid) + ", neither qprof's (" + std::to_string(me) +
           ") nor root's: the marker writers (qprof mark, the helpers) refuse a FIFO there" + fix;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return dir +
           " may be changed by its group or others and is not sticky: the marker writers (qprof mark, the "
           "helpers) refuse a FIFO there, which another user could replace" +
           fix;
  }
  if (::faccessat(dir_fd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
    return "cannot create the FIFO in " + dir + ": " + std::strerror(errno);
  }
  return "";
}

}  // namespace

Result<std::string> mark_fifo_place(const std::string& path) {
  std::string absolute = path;
  if (!path.starts_with('/')) {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) return Failure{std::string("getcwd: ") + std::strerror(errno)};
    absolute = std::string(cwd) + (std::string_view(cwd) == "/" ? "" : "/") + path;
  }
  struct stat st {};
  if (::lstat(absolute.c_str(), &st) == 0)
    return Failure{"'" + path + "' exists: --mark-fifo creates a new FIFO there"};
  const std::size_t slash = absolute.rfind('/');
  if (slash + 1 == absolute.size()) return Failure{"'" + path + "' names a directory: give the FIFO's own name"};
  const std::string dir = slash == 0 ? "/" : absolute.substr(0, slash);
  // As the writers open it: a link in the directory's place is refused.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) {
    const int error = errno;
    if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return Failure{dir + " is a symbolic link: the marker writers do not follow one; give the directory it names"};
    }
    return Failure{dir + ": " + std::strerror(error)};
  }
  const std::string why = refused_directory(dir_fd, dir);
  ::close(dir_fd);
  if (!why.empty()) return Failure{why};
  return absolute;
}

Result<std::unique_ptr<MarkChannel>> MarkChannel::create(const std::string& fifo_at) {
  std::unique_ptr<MarkChannel> c(new MarkChannel());
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return Failure{std::string("pipe: ") + std::strerror(errno)};
  c->pipe_read_ = fds[0];
  c->pipe_write_ = fds[1];
  // The write end keeps its low number rather than moving out of the range programs reuse:
  // dash's `>&N` takes one digit only, and `echo X >&$QPROF_MARK_FD` must work from any sh.
  // The identity exported with it is what guards a reused number.
  struct stat st {};
  if (::fstat(c->pipe_write_, &st) != 0) {
    return Failure{std::string("fstat of the marker pipe: ") + std::strerror(errno)};
  }
  c->write_fd_id_ = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  // The writers' end blocks as any pipe does (a shell's echo must not see EAGAIN); qprof reads
  // it at once, so a writer waits only when qprof itself is stopped.
  ::fcntl(c->pipe_write_, F_SETFL, ::fcntl(c->pipe_write_, F_GETFL) & ~O_NONBLOCK);
  std::string fifo_why_not;
  if (!c->open_fifo(fifo_at, fifo_why_not)) {
    // A FIFO asked for by name is a promise to its writers: refused whole. The private one is a
    // fallback for processes that did not inherit the pipe: the pipe goes on without it.
    if (!fifo_at.empty()) return Failure{fifo_why_not};
    c->fifo_problem_ = fifo_why_not;
  }
  c->sources_[0].fd = c->pipe_read_;
  c->stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  return c;
}

bool MarkChannel::open_fifo(const std::string& fifo_at, std::string& why_not) {
  std::string fifo = fifo_at;
  if (fifo.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp == '/' ? tmp : "/tmp") + "/qprof-mark.XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr) {  // mode 0700: the FIFO is the user's own
      why_not = "cannot create a directory for the marker FIFO (" + dir + "): " + std::strerror(errno);
      return false;
    }
    dir_ = dir;
    fifo = dir + "/marks";
  }
  // mkfifo never replaces a file: an existing path fails with EEXIST and is left as it was.
  if (::mkfifo(fifo.c_str(), 0600) != 0) {
    why_not = "mkfifo " + fifo + ": " + std::strerror(errno);
    return false;
  }
  fifo_path_ = fifo;
  // Read and write: qprof holds a writer itself, so the FIFO never reports an end of file (which
  // poll would report again and again once the last outside writer closed it).
  sources_[1].fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (sources_[1].fd < 0) {
    why_not = "open " + fifo + ": " + std::strerror(errno);
    ::unlink(fifo.c_str());
    fifo_path_.clear();
    return false;
  }
  return true;
}

MarkChannel::~MarkChannel() {
  finish();
  for (int fd : {pipe_read_, pipe_write_, sources_[1].fd, stop_fd_}) {
    if (fd >= 0) ::close(fd);
  }
  if (!fifo_path_.empty()) ::unlink(fifo_path_.c_str());
  if (!dir_.empty()) ::rmdir(dir_.c_str());
}

void MarkChannel::start(Post post, Pending pending, Wake wake) {
  post_ = std::move(post);
  pending_ = std::move(pending);
  wake_ = std::move(wake);
  thread_ = std::thread([this] {
    // Signals belong to the sampler thread: its sleep must be the one they interrupt.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    loop();
  });
}

void MarkChannel::finish() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t w = ::write(stop_fd_, &one, sizeof one);
  thread_.join();
}

void MarkChannel::loop() {
  pollfd fds[3] = {{sources_[0].fd, POLLIN, 0}, {sources_[1].fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  while (true) {
    // While posted markers wait for the sampler, the wake-up is sent again every millisecond.
    const bool waiting = pending_();
    const int ready = ::poll(fds, 3, waiting ? 1 : -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return;
    if (ready == 0) {
      if (waiting) wake_();
      continue;
    }
    if (fds[2].revents & POLLIN) {
      // What was written before the end is read (both ends are non-blocking), then no more.
      for (Source& s : sources_) read_source(s);
      if (pending_()) wake_();
      return;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_source(sources_[i]);
    }
    if (pending_()) wake_();
  }
}

void MarkChannel::read_source(Source& s) {
  char buf[1 << 14];
  bool after_empty = true;  // the last read before this call found the source empty (EAGAIN)
  const ChannelLineReader::OnLine take = [this, &s](std::string_view line, bool cut, bool unterminated) {
    on_line(s, line, cut, unterminated);
  };
  while (true) {
    const ssize_t n = ::read(s.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EAGAIN: all read (qprof holds a writer of both, so never an end of file)
    s.lines.feed(std::string_view(buf, static_cast<std::size_t>(n)), after_empty, take);
    // A pipe's read returns what it holds up to the buffer's size: a shorter one emptied it.
    after_empty = static_cast<std::size_t>(n) < sizeof buf;
  }
}

void MarkChannel::on_line(Source& s, std::string_view line, bool cut, bool unterminated) {
  if (unterminated) ++unterminated_;
  ChannelLine parsed = parse_channel_line(line);
  if (auto* torch = std::get_if<ChannelTorchLine>(&parsed)) {
    if (s.torch.size() < kMaxPendingTorch) s.torch.push_back(torch->figure);
    return;
  }
  auto* marker = std::get_if<PendingMarker>(&parsed);
  if (!marker) return;
  if (cut) ++cut_;
  marker->torch.swap(s.torch);
  s.torch.clear();
  if (!post_(std::move(*marker))) ++dropped_;
}

}  // namespace qprof::record
