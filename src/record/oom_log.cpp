// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/oom_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace qprof::record {
namespace {

template <typename T>
std::optional<T> number_at(std::string_view text) {
  T v{};
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc()) return std::nullopt;
  return v;
}

// The value of "key=" in a comma-separated list ("constraint=CONSTRAINT_MEMCG,...,pid=42,uid=0").
std::string_view list_value(std::string_view list, std::string_view key) {
  std::size_t at = 0;
  while (at < list.size()) {
    const std::size_t comma = list.find(',', at);
    const std::string_view item =
        list.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (item.size() > key.size() && item.starts_with(key) && item[key.size()] == '=')
      return item.substr(key.size() + 1);
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return {};
}

// "<key>:<n>kB" in the Killed process line.
std::optional<Bytes> kb_after(std::string_view text, std::string_view key) {
  const std::size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const auto kb = number_at<Bytes>(text.substr(at + key.size()));
  if (!kb) return std::nullopt;
  return *kb * 1024;
}

}  // namespace

std::optional<KernelOomLine> parse_kmsg_oom(std::string_view record) {
  const std::size_t semi = record.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  std::string_view prefix = record.substr(0, semi);
  std::string_view message = record.substr(semi + 1);
  message = message.substr(0, message.find('\n'));
  // PRIORITY,SEQUENCE,USEC,FLAGS
  const std::size_t c1 = prefix.find(',');
  const std::size_t c2 = c1 == std::string_view::npos ? c1 : prefix.find(',', c1 + 1);
  if (c2 == std::string_view::npos) return std::nullopt;
  const auto usec = number_at<std::int64_t>(prefix.substr(c2 + 1));
  if (!usec) return std::nullopt;
  KernelOomLine out;
  out.usec = *usec;
  if (message.starts_with("oom-kill:")) {
    const std::string_view list = message.substr(9);
    const auto pid = number_at<std::int64_t>(list_value(list, "pid"));
    if (!pid) return std::nullopt;
    out.is_constraint = true;
    out.pid = *pid;
    out.name = std::string(list_value(list, "task"));
    out.constraint = std::string(list_value(list, "constraint"));
    out.oom_memcg = std::string(list_value(list, "oom_memcg"));
    return out;
  }
  // "Memory cgroup out of memory: Killed process 42 (name) total-vm:…kB, anon-rss:…kB, …"
  const std::size_t at = message.find("Killed process ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = message.substr(at + 15);
  const auto pid = number_at<std::int64_t>(rest);
  const std::size_t open = rest.find(" (");
  const std::size_t close = rest.rfind(") total-vm:");
  if (!pid || open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  out.pid = *pid;
  out.name = std::string(rest.substr(open + 2, close - open - 2));
  const auto anon = kb_after(rest, "anon-rss:");
  const auto file = kb_after(rest, "file-rss:");
  const auto shmem = kb_after(rest, "shmem-rss:");
  if (anon) out.rss = *anon + file.value_or(0) + shmem.value_or(0);
  return out;
}

bool KernelLog::open(std::string& why_not, const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    why_not = path + ": " + std::strerror(errno);
    return false;
  }
  // From now on: the records already there are other runs' business.
  if (::lseek(fd_, 0, SEEK_END) < 0) {
    why_not = path + ": " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  return true;
}

KernelLog::~KernelLog() {
  if (fd_ >= 0) ::close(fd_);
}

bool KernelLog::next(std::string_view& record) {
  if (fd_ < 0) return false;
  while (true) {
    const ssize_t n = ::read(fd_, buf_, sizeof buf_);
    if (n > 0) {
      record = std::string_view(buf_, static_cast<std::size_t>(n));
      return true;
    }
    // EPIPE: records were overwritten before they were read; the next read goes on after them.
    if (n < 0 && errno == EPIPE) continue;
    if (n < 0 && errno == EINTR) continue;
    return false;  // EAGAIN: nothing new
  }
}

}  // namespace qprof::record
