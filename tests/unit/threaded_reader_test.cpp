// SPDX-License-Identifier: Apache-2.0
// parse_file_threaded: the same calls in the same order as parse_file, made on the caller's
// thread, across many batches; an error deep in the file after the same calls; a visitor's
// exception stops the reading thread.
#include "qprof/trace/threaded_reader.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof::trace {
namespace {

using test::unit_temp_file;

std::size_t threads_of_this_process() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// Whether this process is down to `n` threads within 5 s. A join returns once the kernel has
// cleared the thread's TID, a moment before the thread leaves /proc/self/task (exit_mm comes
// before exit_notify); read at once, the count still held the joined thread in about one run in
// five. A thread left running (blocked on a full queue) stays.
bool threads_drop_to(std::size_t n) {
  for (int waited_ms = 0; waited_ms < 5000; ++waited_ms) {
    if (threads_of_this_process() <= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return threads_of_this_process() <= n;
}

// Every call as a line of text, with the thread it came on checked.
class Log final : public Visitor {
 public:
  std::vector<std::string> calls;
  std::size_t threads_at_first_sample = 0;
  bool foreign_thread = false;

  void header(const TraceMeta& m) override { add("header " + m.host); }
  void cmdline(std::string_view c) override { add("cmdline " + std::string(c)); }
  void mem(const MemSample& s) override {
    if (threads_at_first_sample == 0) threads_at_first_sample = threads_of_this_process();
    add("mem", s.t, static_cast<double>(s.bytes));
  }
  void child(std::int64_t pid, const MemSample& s) override {
    add("child", static_cast<double>(pid), s.t, static_cast<double>(s.bytes));
  }
  void process_name(std::int64_t pid, std::string_view n) override {
    add("proc " + std::string(n), static_cast<double>(pid));
  }
  void mark(Seconds t, std::string_view l) override { add("mark " + std::string(l), t); }
  void func(std::string_view n, const MemSample& a, const MemSample& b) override {
    add("func " + std::string(n), a.t, b.t);
  }
  void pss(const PssSample& s) override { add("pss", s.t, static_cast<double>(s.pss)); }
  void io(const IoSample& s) override { add("io", s.t, static_cast<double>(s.read_bytes)); }
  void cpu(const CpuSample& s) override { add("cpu", s.t, s.cpu_seconds); }
  void hwm(const MemSample& s) override { add("hwm", s.t, static_cast<double>(s.bytes)); }
  void cgroup(const CgroupSample& s) override { add("cgroup", s.t, static_cast<double>(s.usage)); }
  void gpu_device(const GpuDevice& d) override { add("gpudev " + d.uuid + " " + d.name); }
  void gpu(const GpuSample& s) override { add("gpu", s.t, static_cast<double>(s.tree)); }
  void torch(const TorchSample& s) override { add("torch", s.t, static_cast<double>(s.allocated)); }
  void kinds(const MemKindsSample& s) override { add("kinds", s.t, static_cast<double>(s.anon)); }
  void tasks(const TasksSample& s) override { add("tasks", s.t, static_cast<double>(s.threads)); }
  void gpu_util(const GpuUtilSample& s) override { add("gpuutil", s.t, s.busy_percent); }
  void peak(std::string_view n, Bytes b) override { add("peak " + std::string(n), static_cast<double>(b)); }
  void dir_def(const WatchedDir& d) override { add("dirdef " + d.path); }
  void dir(const DirSample& s) override { add("dir", s.t, static_cast<double>(s.apparent)); }
  void note(std::string_view n) override { add("note " + std::string(n)); }
  void unread(std::uint64_t p) override { add("unread", static_cast<double>(p)); }
  void exit(const ExitInfo& e) override { add("exit", e.t, e.status); }
  void warning(const std::string& w) override { add("warning " + w); }

 private:
  template <typename... Numbers>
  void add(std::string text, Numbers... numbers) {
    if (std::this_thread::get_id() != caller_) foreign_thread = true;
    const auto number = [&](double n) {
      char b[40];
      std::snprintf(b, sizeof b, " %.17g", n);
      text += b;
    };
    (number(static_cast<double>(numbers)), ...);
    (void)number;  // a call with no numbers
    text += " at line " + std::to_string(line());
    calls.push_back(std::move(text));
  }
  std::thread::id caller_ = std::this_thread::get_id();
};

// The message of the ParseError that reading `path` into `v` ends with ("" for none).
template <typename Read>
std::string error_of(Read read, const std::string& path, Visitor& v) {
  try {
    read(path, v);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

// 200 000 samples (6 MiB, 13 batches of samples), a CHLD line every 7th (28 572, beyond a batch
// of calls), every other kind every 20 000th, and an unterminated last line.
std::string long_trace_of_every_kind() {
  const std::string path = unit_temp_file("threaded.dat");
  {
    Writer w(path);
    TraceMeta meta;
    meta.format_version = 1;
    meta.host = "node1";
    meta.interval = 0.001;
    meta.start = 1.0;
    w.header(meta);
    w.cmdline("python3 train.py");
    w.gpu_device(GpuDevice{0, "GPU-1", "A100", 80ull << 30});
    w.dir_def(WatchedDir{0, "/tmp/cache"});
    for (int i = 0; i < 200000; ++i) {
      const double t = 1.0 + i * 0.001;
      const Bytes m = (Bytes(100) << 20) + Bytes(i) * 4096;
      w.mem(t, m);
      if (i % 7 == 0) w.child(43 + i % 3, t, m / 2);
      if (i % 20000 == 0) {
        w.process_name(43, "worker");
        w.pss(PssSample{t, m / 2, m / 3, std::nullopt});
        w.io(IoSample{t, m, m, m, m});
        w.cpu(CpuSample{t, 0.5 * i});
        w.hwm(t, m);
        w.cgroup(CgroupSample{t, m, m, m, 0, std::nullopt});
        w.gpu(GpuSample{t, 0, m, m, 0.0});
        w.torch(TorchSample{t, 0, m, m});
        w.kinds(MemKindsSample{t, m, 0, 0, 0});
        w.tasks(TasksSample{t, 3, 7, m});
        w.gpu_util(GpuUtilSample{t, 0, 55, 20, 40.0, 1e9, 2e9});
        w.dir(DirSample{t, 0, m, m, m});
        w.mark(t, "step " + std::to_string(i));
      }
    }
    w.peak(kPeakKernelProcess, 150ull << 20);
    w.note("a note");
    w.exit(ExitInfo{300.0, 0, 0, false, true});
    w.flush();
  }
  std::FILE* f = std::fopen(path.c_str(), "a");
  std::fputs("MEM 1.0 2", f);  // no newline: a warning at the end
  std::fclose(f);
  return path;
}

TEST(ThreadedReader, SameCallsInTheSameOrderOnTheCallersThread) {
  const std::string path = long_trace_of_every_kind();
  ASSERT_GE(std::filesystem::file_size(path), 4u << 20);  // the threaded path's lower bound
  Log plain, threaded;
  parse_file(path, plain);
  parse_file_threaded(path, threaded);
  ASSERT_EQ(plain.calls.size(), threaded.calls.size());
  EXPECT_GT(plain.calls.size(), 228000u);
  for (std::size_t i = 0; i < plain.calls.size(); ++i) {
    ASSERT_EQ(plain.calls[i], threaded.calls[i]) << "call " << i;
  }
  EXPECT_EQ(threaded.calls.back().substr(0, 8), "warning ");
  EXPECT_FALSE(threaded.foreign_thread);
  EXPECT_GE(threaded.threads_at_first_sample, plain.threads_at_first_sample + 1);  // a reading thread ran
  std::filesystem::remove(path);
}

// The threaded reader keeps a sample's line only where it is not the line after the record
// before it: samples after blank lines and lines of a newer writer's kinds (skipped), a blank
// line before every sample of a stretch longer than a batch, and batches that start anywhere
// have their lines as parse_file gives them.
TEST(ThreadedReader, SamplesAfterLinesWithoutARecordKeepTheirLines) {
  const std::string path = unit_temp_file("threaded-gaps.dat");
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    for (int i = 0; i < 200000; ++i) {
      if (i % 997 == 0) std::fputs("\n", f);
      if (i % 1511 == 0) std::fputs("FUTURE 1 2 3\n", f);
      if (i % 30011 == 0) std::fprintf(f, "MARK %.4f step %d\n", 1.0 + i * 0.001, i);
      if (i >= 100000 && i < 120000) std::fputs("\n", f);
      std::fprintf(f, "MEM %.6f %.4f\n", 100.0 + i, 1.0 + i * 0.001);
    }
    std::fclose(f);
  }
  ASSERT_GE(std::filesystem::file_size(path), 4u << 20);
  Log plain, threaded;
  parse_file(path, plain);
  parse_file_threaded(path, threaded);
  ASSERT_EQ(plain.calls.size(), threaded.calls.size());
  EXPECT_EQ(plain.calls.size(), 200000u + 7);
  for (std::size_t i = 0; i < plain.calls.size(); ++i) {
    ASSERT_EQ(plain.calls[i], threaded.calls[i]) << "call " << i;
  }
  EXPECT_GE(threaded.threads_at_first_sample, plain.threads_at_first_sample + 1);  // a reading thread ran
  std::filesystem::remove(path);
}

TEST(ThreadedReader, AnErrorDeepInTheFileComesAfterTheSameCalls) {
  const std::string path = unit_temp_file("threaded-bad.dat");
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    for (int i = 0; i < 150000; ++i) std::fprintf(f, "MEM %.6f %.4f\n", 100.0 + i, 1.0 + i * 0.001);
    std::fputs("MEM 12x 5\n", f);
    for (int i = 0; i < 1000; ++i) std::fputs("MEM 1.0 9.0\n", f);
    std::fclose(f);
  }
  Log plain, threaded;
  const std::string plain_error = error_of(parse_file, path, plain);
  const std::string threaded_error = error_of(parse_file_threaded, path, threaded);
  EXPECT_NE(plain_error.find(":150001: "), std::string::npos) << plain_error;
  EXPECT_EQ(threaded_error, plain_error);
  EXPECT_EQ(threaded.calls.size(), 150000u);
  EXPECT_EQ(threaded.calls, plain.calls);
  std::filesystem::remove(path);
}

// A visitor refuses a record with BadRecord (qprof plot: an absurd time): the error names its
// line, from the MEM fast path, the general path, and both readers alike.
TEST(ThreadedReader, ARecordTheVisitorRefusesIsReportedAtItsLine) {
  const std::string path = long_trace_of_every_kind();
  struct RefusesASample : Visitor {
    std::size_t samples = 0;
    void mem(const MemSample&) override {
      if (++samples == 150000) throw BadRecord("the 150000th sample");
    }
  } a, b;
  // Before the 150000th sample's line: 4 header lines, 149 999 samples, 21 429 CHLD lines and 8
  // groups of 13 other lines.
  const std::string line = std::to_string(4 + 149999 + 21429 + 8 * 13 + 1);
  EXPECT_EQ(error_of(parse_file, path, a), path + ":" + line + ": the 150000th sample");
  EXPECT_EQ(error_of(parse_file_threaded, path, b), path + ":" + line + ": the 150000th sample");
  // The MARK of the 10th group (i = 180 000): 4 header lines, 180 001 samples, 25 715 CHLD lines,
  // 9 groups of 13 and the 12 lines of its own group before it.
  struct RefusesAMarker : Visitor {
    void mark(Seconds, std::string_view label) override {
      if (label == "step 180000") throw BadRecord("a marker");
    }
  } c, d;
  const std::string mark_line = std::to_string(4 + 180001 + 25715 + 9 * 13 + 12 + 1);
  EXPECT_EQ(error_of(parse_file, path, c), path + ":" + mark_line + ": a marker");
  EXPECT_EQ(error_of(parse_file_threaded, path, d), path + ":" + mark_line + ": a marker");
  std::filesystem::remove(path);
}

TEST(ThreadedReader, TheVisitorsExceptionStopsTheReadingThread) {
  const std::string path = long_trace_of_every_kind();
  struct Refuses : Visitor {
    std::size_t samples = 0;
    void mem(const MemSample&) override {
      if (++samples == 20000) throw std::runtime_error("enough");
    }
  } refuses;
  const std::size_t before = threads_of_this_process();
  EXPECT_THROW(parse_file_threaded(path, refuses), std::runtime_error);
  EXPECT_EQ(refuses.samples, 20000u);
  EXPECT_TRUE(threads_drop_to(before)) << "the reading thread was left running";
  std::filesystem::remove(path);
}

TEST(ThreadedReader, ASmallFileIsReadOnTheCallersThreadAlone) {
  const std::string path = unit_temp_file("threaded-small.dat");
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    for (int i = 0; i < 1000; ++i) std::fprintf(f, "MEM %.6f %.4f\n", 1.0 + i, 1.0 + i);
    std::fclose(f);
  }
  Log small;
  parse_file_threaded(path, small);
  EXPECT_EQ(small.calls.size(), 1000u);
  EXPECT_EQ(small.threads_at_first_sample, threads_of_this_process());
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace qprof::trace
