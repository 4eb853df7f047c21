// SPDX-License-Identifier: Apache-2.0
// Writes trace lines into a fixed buffer with std::to_chars, so that the sampler's steady state
// (one MEM line per sample) costs no allocation and no stdio locking.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <system_error>
#include <utility>

#include "qprof/common/write_all.hpp"
#include "qprof/trace/format.hpp"
#include "oom_record.hpp"

namespace qprof::trace {
namespace {
constexpr std::size_t kBufferSize = 1 << 16;
constexpr std::size_t kNumberRoom = 40;  // the longest number this writer formats, with a separator
}  // namespace

// Appends the fields of one line to the writer's buffer; room is reserved up front.
class Writer::Line {
 public:
  Line(Writer& w, std::string_view kind, std::size_t numbers, std::size_t text = 0) : w_(w) {
    w_.reserve(kind.size() + numbers * kNumberRoom + text + 2);
    w_.append(kind);
  }
  ~Line() { w_.buf_[w_.used_++] = '\n'; }
  Line& fixed(double v, int decimals) {
    space();
    auto r =
        w_.exact_ ? std::to_chars(cur(), end(), v) : std::to_chars(cur(), end(), v, std::chars_format::fixed, decimals);
    w_.used_ = r.ptr - w_.buf_.data();
    return *this;
  }
  Line& integer(std::int64_t v) {
    space();
    auto r = std::to_chars(cur(), end(), v);
    w_.used_ = r.ptr - w_.buf_.data();
    return *this;
  }
  Line& uinteger(std::uint64_t v) {
    space();
    auto r = std::to_chars(cur(), end(), v);
    w_.used_ = r.ptr - w_.buf_.data();
    return *this;
  }
  Line& text(std::string_view s) {
    space();
    w_.append(s);
    return *this;
  }
  Line& key_value(std::string_view key, std::int64_t v) {
    space();
    w_.append(key);
    w_.buf_[w_.used_++] = '=';
    auto r = std::to_chars(cur(), end(), v);
    w_.used_ = r.ptr - w_.buf_.data();
    return *this;
  }

 private:
  void space() { w_.buf_[w_.used_++] = ' '; }
  char* cur() { return w_.buf_.data() + w_.used_; }
  char* end() { return w_.buf_.data() + w_.buf_.size(); }
  Writer& w_;
};

Writer::Writer(const std::string& path) : path_(path), buf_(kBufferSize) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "cannot create " + path);
}

Writer::Writer(int fd, std::string name) : path_(std::move(name)), fd_(fd), buf_(kBufferSize) {}

Writer::~Writer() { close(); }

bool Writer::close() {
  if (fd_ < 0) return error_.empty();
  flush();
  // Not retried on EINTR: on Linux the descriptor is released whatever close returns.
  if (::close(fd_) != 0 && errno != EINTR && error_.empty()) {
    error_ = "closing " + path_ + " failed: " + std::strerror(errno);
  }
  fd_ = -1;
  return error_.empty();
}

void Writer::reserve(std::size_t n) {
  if (used_ + n <= buf_.size()) return;
  flush();
  // A line longer than the buffer (a huge label) gets a buffer of its own size: rare, not hot.
  if (n > buf_.size()) buf_.resize(n);
}

void Writer::append(std::string_view s) {
  std::memcpy(buf_.data() + used_, s.data(), s.size());
  used_ += s.size();
}

void Writer::cut_to_whole_line() {
  // A disk that filled in the middle of a line left its first bytes: "MEM 31.601562 1795731" reads
  // as t = 1 795 731 to mprof. A regular file is cut back to its last '\n' (docs/recording.md, "The trace file").
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return;
  const off_t at = ::lseek(fd_, 0, SEEK_CUR);
  if (at < 0) return;
  const off_t whole = at - static_cast<off_t>(partial_);
  if (partial_ > 0 && ::ftruncate(fd_, whole) == 0) partial_ = 0;
  error_ += partial_ == 0 ? "; the trace ends at its last whole line, byte " + std::to_string(whole)
                          : "; its last line is cut";
}

bool Writer::flush() {
  if (fd_ < 0) used_ = 0;  // closed: dropped
  if (used_ > 0 && error_.empty()) {
    const WriteOutcome w = write_all(fd_, std::string_view(buf_.data(), used_));
    // The bytes of a line begun and not ended on disk, which a failure cuts back.
    const std::string_view written(buf_.data(), w.written);
    const std::size_t newline = written.rfind('\n');
    partial_ = newline == std::string_view::npos ? partial_ + written.size() : written.size() - newline - 1;
    if (!w.ok()) {
      error_ = "writing " + path_ + " failed: " + std::strerror(w.error);
      cut_to_whole_line();
    }
  }
  used_ = 0;
  return error_.empty();
}

void Writer::header(const TraceMeta& meta) {
  std::string fields = "version=" + escape_text(meta.qprof_version, true);
  auto add = [&](std::string_view key, const std::string& value) {
    fields += ' ';
    fields += key;
    fields += '=';
    fields += escape_text(value, true);
  };
  char num[64];
  auto fmt = [&](double v, int decimals) {
    auto r = exact_ ? std::to_chars(num, num + sizeof num, v)
                    : std::to_chars(num, num + sizeof num, v, std::chars_format::fixed, decimals);
    return std::string(num, r.ptr);
  };
  add("interval", fmt(meta.interval, 6));
  add("host", meta.host);
  add("root_pid", std::to_string(meta.root_pid));
  if (meta.start) add("start", fmt(*meta.start, 6));
  if (!meta.metric.empty()) add("metric", meta.metric);
  if (meta.job.rank) add("rank", std::to_string(*meta.job.rank));
  if (meta.job.local_rank) add("local_rank", std::to_string(*meta.job.local_rank));
  if (meta.job.world_size) add("world_size", std::to_string(*meta.job.world_size));
  if (!meta.job.job_id.empty()) add("job", meta.job.job_id);
  if (!meta.job.launcher.empty()) add("launcher", meta.job.launcher);
  for (const auto& [k, v] : meta.other) add(k, v);
  Line(*this, "QPROF", 1, fields.size()).integer(kFormatVersion).text(fields);
}

std::string bounded_command(std::string_view command) {
  if (command.size() <= kMaxCommandBytes) return std::string(command);
  // A cut never splits a UTF-8 sequence: it moves back over continuation bytes (10xxxxxx).
  const auto boundary = [&](std::size_t at) {
    while (at > 0 && at < command.size() && (static_cast<unsigned char>(command[at]) & 0xC0) == 0x80) --at;
    return at;
  };
  const std::size_t head = boundary(kMaxCommandBytes / 2);
  const std::size_t tail = boundary(command.size() - kMaxCommandBytes / 4);
  return std::string(command.substr(0, head)) + " [... " + std::to_string(tail - head) + " of " +
         std::to_string(command.size()) + " bytes elided ...] " + std::string(command.substr(tail));
}

void Writer::cmdline(std::string_view command_line) {
  // mprof keeps the rest of the line verbatim (no unescaping), so the caller passes a display
  // form (see display_command); a stray control character still must not end the line.
  std::string text = bounded_command(command_line);
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  Line(*this, "CMDLINE", 0, text.size() + 1).text(text);
}

void Writer::mem(Seconds t, Bytes bytes) { Line(*this, "MEM", 2).fixed(to_mib(bytes), 6).fixed(t, 4); }

void Writer::child(std::int64_t pid, Seconds t, Bytes bytes) {
  Line(*this, "CHLD", 3).integer(pid).fixed(to_mib(bytes), 6).fixed(t, 4);
}

void Writer::mark(Seconds t, std::string_view label) {
  const std::string text = escape_text(label);
  Line(*this, "MARK", 1, text.size() + 1).fixed(t, 6).text(text);
}

void Writer::func(std::string_view label, const MemSample& start, const MemSample& end) {
  const std::string name = func_name(label);
  Line(*this, "FUNC", 5, name.size() + 1)
      .text(name)
      .fixed(to_mib(start.bytes), 4)
      .fixed(start.t, 4)
      .fixed(to_mib(end.bytes), 4)
      .fixed(end.t, 4)
      .integer(0);
}

void Writer::pss(const PssSample& s) {
  Line line(*this, "PSS", 4);
  line.fixed(s.t, 6).uinteger(s.pss).uinteger(s.uss);
  // An appended field (the format's compatibility rule): older readers skip it.
  if (s.unreclaimable) line.uinteger(*s.unreclaimable);
}

void Writer::io(const IoSample& s) {
  Line(*this, "IO", 5).fixed(s.t, 6).uinteger(s.read_bytes).uinteger(s.write_bytes).uinteger(s.rchar).uinteger(s.wchar);
}

void Writer::cpu(const CpuSample& s) { Line(*this, "CPU", 2).fixed(s.t, 6).fixed(s.cpu_seconds, 6); }

void Writer::hwm(Seconds t, Bytes bytes) { Line(*this, "HWM", 2).fixed(t, 6).uinteger(bytes); }

void Writer::cgroup(const CgroupSample& s) {
  Line line(*this, "CGROUP", 6);
  line.fixed(s.t, 6).uinteger(s.usage).uinteger(s.peak);
  // Appended fields (the format's compatibility rule): older readers skip them.
  if (!s.anon || !s.file) return;
  line.uinteger(*s.anon).uinteger(*s.file);
  if (s.shmem) line.uinteger(*s.shmem);
}

void Writer::cgroup_window(Seconds t, Bytes peak) { Line(*this, "CGPEAK", 2).fixed(t, 6).uinteger(peak); }

void Writer::gpu_device(const GpuDevice& d) {
  const std::string uuid = escape_text(d.uuid.empty() ? "-" : d.uuid, true);
  const std::string name = escape_text(d.name);
  Line(*this, "GPUDEV", 2, uuid.size() + name.size() + 2).integer(d.index).text(uuid).uinteger(d.total).text(name);
}

void Writer::gpu(const GpuSample& s) {
  Line line(*this, "GPU", 5);
  line.fixed(s.t, 6).integer(s.device).uinteger(s.tree).uinteger(s.used);
  if (s.tree_age) line.fixed(*s.tree_age, 3);
}

void Writer::torch(const TorchSample& s) {
  Line(*this, "TORCH", 4).fixed(s.t, 6).integer(s.device).uinteger(s.allocated).uinteger(s.reserved);
}

void Writer::kinds(const MemKindsSample& s) {
  Line(*this, "KINDS", 5).fixed(s.t, 6).uinteger(s.anon).uinteger(s.file).uinteger(s.shmem).uinteger(s.swap);
}

void Writer::tasks(const TasksSample& s) {
  Line(*this, "TASKS", 4).fixed(s.t, 6).uinteger(s.processes).uinteger(s.threads).uinteger(s.vsz);
}

void Writer::gpu_util(const GpuUtilSample& s) {
  Line line(*this, "GPUUTIL", 7);
  line.fixed(s.t, 6).integer(s.device).fixed(s.busy_percent, 1).fixed(s.mem_bw_percent, 1);
  // '-': the driver does not say (no per-process accounting, no PCIe counters).
  const auto optional = [&line](const std::optional<double>& v, int decimals) {
    if (v)
      line.fixed(*v, decimals);
    else
      line.text("-");
  };
  optional(s.tree_busy_percent, 1);
  optional(s.pcie_rx_bytes_per_s, 0);
  optional(s.pcie_tx_bytes_per_s, 0);
}

void Writer::peak(std::string_view name, Bytes bytes) {
  const std::string n = escape_text(name, true);
  Line(*this, "PEAK", 1, n.size() + 1).text(n).uinteger(bytes);
}

void Writer::dir_def(const WatchedDir& d) {
  const std::string path = escape_text(d.path);
  Line(*this, "DIRDEF", 1, path.size() + 1).integer(d.index).text(path);
}

void Writer::dir(const DirSample& s) {
  Line(*this, "DIR", 5).fixed(s.t, 6).integer(s.dir).uinteger(s.apparent).uinteger(s.allocated).uinteger(s.fs_free);
}

void Writer::process_name(std::int64_t pid, std::string_view name) {
  const std::string t = escape_text(name);
  Line(*this, "PROC", 1, t.size() + 1).integer(pid).text(t);
}

void Writer::note(std::string_view text) {
  const std::string t = escape_text(text);
  Line(*this, "NOTE", 0, t.size() + 1).text(t);
}

void Writer::unread(std::uint64_t processes) { Line(*this, "UNREAD", 1).uinteger(processes); }

void Writer::oom_kill(const OomKill& k) {
  const std::string fields = oom_record_fields(k);
  Line(*this, "OOM", 1, fields.size() + 1).fixed(k.t, 6).text(fields);
}

void Writer::exit(const ExitInfo& e) {
  Line line(*this, "EXIT", 5, 48);
  line.fixed(e.t, 6)
      .key_value("status", e.status)
      .key_value("signal", e.signal)
      .key_value("timed_out", e.timed_out ? 1 : 0);
  // Only when unknown (qprof attach), so that a run's EXIT line stays what it always was.
  if (!e.status_known) line.key_value("status_known", 0);
}

}  // namespace qprof::trace
