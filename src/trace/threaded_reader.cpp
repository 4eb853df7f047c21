// SPDX-License-Identifier: Apache-2.0
// The reading thread records what the parser finds into batches: MEM samples (most of every
// trace) as plain values, every other call as a closure holding copies of its arguments, placed
// by how many samples came before it; each with its line, for the errors (a sample's only where
// it is not the line after the batch's record before it: the rest of a batch's bytes cross from
// one core to the other, and most samples follow one another line by line). The calling thread
// replays each batch into the visitor in that order. A batch is handed over when it holds
// kBatchSamples samples, kBatchCalls other calls or kBatchText bytes of their text, and at most
// kInFlight batches wait: what is in flight stays bounded (about 6 batches, some MiB) however
// long the trace and however long its lines (up to the reader's 1 MiB).
#include "qprof/trace/threaded_reader.hpp"

#include <sys/stat.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace qprof::trace {
namespace {

constexpr std::size_t kBatchSamples = 16384;  // 256 KiB of samples: a few per L2, few hand-overs
constexpr std::size_t kBatchCalls = 1024;     // other calls (a trace of markers, CHLD lines)
constexpr std::size_t kBatchText = 1 << 20;   // their copied text (labels, notes: up to 1 MiB a line)
constexpr std::size_t kInFlight = 4;
constexpr std::size_t kHeaderText = kBatchText;  // a header's line may be 1 MiB: a batch alone
constexpr off_t kThreadedFrom = 4 << 20;         // 4 MiB: about 130 000 samples, 3 ms of parsing

struct Batch {
  std::vector<MemSample> mem;
  // (sample, its line) for each sample not on the line after the batch's record before it
  // (call or sample); the first record of a batch has no record before it.
  std::vector<std::pair<std::size_t, std::size_t>> mem_line_jumps;
  // A call, after how many of this batch's samples it came, and its line.
  struct Call {
    std::size_t after;
    std::size_t line;
    std::function<void(Visitor&)> call;
  };
  std::vector<Call> calls;
};

// What the two threads share.
class Channel {
 public:
  // The reader: false once the consumer has stopped (the reader then stops too).
  bool push(Batch&& b) {
    std::unique_lock lock(m_);
    room_.wait(lock, [&] { return queue_.size() < kInFlight || stopped_; });
    if (stopped_) return false;
    queue_.push_back(std::move(b));
    ready_.notify_one();
    return true;
  }
  void close(std::exception_ptr error) {
    std::lock_guard lock(m_);
    closed_ = true;
    error_ = std::move(error);
    ready_.notify_one();
  }
  // The consumer: false at the end (with the reader's error, if any, in `error`).
  bool pop(Batch& b, std::exception_ptr& error) {
    std::unique_lock lock(m_);
    ready_.wait(lock, [&] { return !queue_.empty() || closed_; });
    if (queue_.empty()) {
      error = error_;
      return false;
    }
    b = std::move(queue_.front());
    queue_.pop_front();
    room_.notify_one();
    return true;
  }
  void stop() {
    std::lock_guard lock(m_);
    stopped_ = true;
    room_.notify_one();
  }

 private:
  std::mutex m_;
  std::condition_variable ready_, room_;
  std::deque<Batch> queue_;
  bool closed_ = false, stopped_ = false;
  std::exception_ptr error_;
};

struct Stopped {};  // thrown through the parser when the consumer has gone

// The parser's visitor on the reading thread.
class Recorder final : public Visitor {
 public:
  explicit Recorder(Channel& c) : channel_(c) {}

  void mem(const MemSample& s) override {
    if (line() != next_line_) batch_.mem_line_jumps.emplace_back(batch_.mem.size(), line());
    next_line_ = line() + 1;
    batch_.mem.push_back(s);
    if (batch_.mem.size() >= kBatchSamples) hand_over();
  }
  void header(const TraceMeta& m) override {
    later(kHeaderText, [m](Visitor& v) { v.header(m); });
  }
  void cmdline(std::string_view c) override {
    later(c.size(), [c = std::string(c)](Visitor& v) { v.cmdline(c); });
  }
  void child(std::int64_t pid, const MemSample& s) override {
    later(0, [pid, s](Visitor& v) { v.child(pid, s); });
  }
  void process_name(std::int64_t pid, std::string_view n) override {
    later(n.size(), [pid, n = std::string(n)](Visitor& v) { v.process_name(pid, n); });
  }
  void mark(Seconds t, std::string_view l) override {
    later(l.size(), [t, l = std::string(l)](Visitor& v) { v.mark(t, l); });
  }
  void func(std::string_view n, const MemSample& a, const MemSample& b) override {
    later(n.size(), [n = std::string(n), a, b](Visitor& v) { v.func(n, a, b); });
  }
  void pss(const PssSample& s) override {
    later(0, [s](Visitor& v) { v.pss(s); });
  }
  void io(const IoSample& s) override {
    later(0, [s](Visitor& v) { v.io(s); });
  }
  void cpu(const CpuSample& s) override {
    later(0, [s](Visitor& v) { v.cpu(s); });
  }
  void hwm(const MemSample& s) override {
    later(0, [s](Visitor& v) { v.hwm(s); });
  }
  void cgroup(const CgroupSample& s) override {
    later(0, [s](Visitor& v) { v.cgroup(s); });
  }
  void cgroup_window(const MemSample& s) override {
    later(0, [s](Visitor& v) { v.cgroup_window(s); });
  }
  void gpu_device(const GpuDevice& d) override {
    later(d.uuid.size() + d.name.size(), [d](Visitor& v) { v.gpu_device(d); });
  }
  void gpu(const GpuSample& s) override {
    later(0, [s](Visitor& v) { v.gpu(s); });
  }
  void torch(const TorchSample& s) override {
    later(0, [s](Visitor& v) { v.torch(s); });
  }
  void kinds(const MemKindsSample& s) override {
    later(0, [s](Visitor& v) { v.kinds(s); });
  }
  void tasks(const TasksSample& s) override {
    later(0, [s](Visitor& v) { v.tasks(s); });
  }
  void gpu_util(const GpuUtilSample& s) override {
    later(0, [s](Visitor& v) { v.gpu_util(s); });
  }
  void peak(std::string_view n, Bytes b) override {
    later(n.size(), [n = std::string(n), b](Visitor& v) { v.peak(n, b); });
  }
  void dir_def(const WatchedDir& d) override {
    later(d.path.size(), [d](Visitor& v) { v.dir_def(d); });
  }
  void dir(const DirSample& s) override {
    later(0, [s](Visitor& v) { v.dir(s); });
  }
  void note(std::string_view n) override {
    later(n.size(), [n = std::string(n)](Visitor& v) { v.note(n); });
  }
  void unread(std::uint64_t p) override {
    later(0, [p](Visitor& v) { v.unread(p); });
  }
  void oom_kill(const OomKill& k) override {
    later(k.name.size() + k.scope.size() + k.stage.size(), [k](Visitor& v) { v.oom_kill(k); });
  }
  void exit(const ExitInfo& e) override {
    later(0, [e](Visitor& v) { v.exit(e); });
  }
  void warning(const std::string& w) override {
    later(w.size(), [w](Visitor& v) { v.warning(w); });
  }

  void hand_over() {
    if (batch_.mem.empty() && batch_.calls.empty()) return;
    if (!channel_.push(std::move(batch_))) throw Stopped{};
    batch_ = Batch{};
    text_ = 0;
    next_line_ = 0;
    batch_.mem.reserve(kBatchSamples);
  }

 private:
  // A call to replay, holding `text` bytes of copied strings.
  void later(std::size_t text, std::function<void(Visitor&)> call) {
    batch_.calls.push_back(Batch::Call{batch_.mem.size(), line(), std::move(call)});
    next_line_ = line() + 1;
    text_ += text;
    if (batch_.calls.size() >= kBatchCalls || text_ >= kBatchText) hand_over();
  }

  Channel& channel_;
  Batch batch_;
  std::size_t text_ = 0;       // bytes of text the batch's calls hold
  std::size_t next_line_ = 0;  // the line after the batch's latest record (0: none yet)
};

// The batch's calls in their order, each at its line; a record the visitor refuses (BadRecord)
// is reported at that line, as parse_file does.
void replay(Batch& b, Visitor& v, const std::string& path) {
  std::size_t done = 0, jump = 0, next_line = 0;
  const auto samples_up_to = [&](std::size_t end) {
    for (; done < end; ++done) {
      std::size_t line = next_line;
      if (jump < b.mem_line_jumps.size() && b.mem_line_jumps[jump].first == done)
        line = b.mem_line_jumps[jump++].second;
      v.at_line(line);
      v.mem(b.mem[done]);
      next_line = line + 1;
    }
  };
  try {
    for (Batch::Call& c : b.calls) {
      samples_up_to(c.after);
      v.at_line(c.line);
      c.call(v);
      next_line = c.line + 1;
    }
    samples_up_to(b.mem.size());
  } catch (const BadRecord& e) {
    throw ParseError(path, v.line(), e.what());
  }
}

// The reading thread: the file parsed into batches, then the end (and its error) said.
void read_into(Channel& channel, const std::string& path) {
  std::exception_ptr error;
  try {
    Recorder r(channel);
    parse_file(path, r);
    r.hand_over();
  } catch (const Stopped&) {
  } catch (...) {
    error = std::current_exception();
  }
  channel.close(error);
}

}  // namespace

void parse_file_threaded(const std::string& path, Visitor& visitor) {
  // A thread pays only where there is much to parse; and only a regular file is sure to end, so
  // that a visitor's error is never left waiting on a pipe's next line to stop the reader.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < kThreadedFrom ||
      std::thread::hardware_concurrency() < 2) {
    parse_file(path, visitor);
    return;
  }
  Channel channel;
  std::thread reader;
  try {
    reader = std::thread(read_into, std::ref(channel), std::cref(path));
  } catch (const std::system_error&) {  // no thread to be had (RLIMIT_NPROC, memory): one thread
    parse_file(path, visitor);
    return;
  }
  try {
    Batch b;
    std::exception_ptr error;
    while (channel.pop(b, error)) replay(b, visitor, path);
    reader.join();
    if (error) std::rethrow_exception(error);
  } catch (...) {
    if (reader.joinable()) {
      channel.stop();
      reader.join();
    }
    throw;
  }
}

}  // namespace qprof::trace
