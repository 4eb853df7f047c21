// The .dat trace format: the contract between `qprof run` and everything that reads a trace.
//
// A trace is UTF-8 text, one record per line, each line "<KIND> <fields…>". The original mprof
// reads the same file: it splits every line once at the first space, keeps the kinds it knows
// (CMDLINE, MEM, CHLD, FUNC) and skips the rest, so qprof never writes a line without a space
// and never writes a blank line (mprof stops at one).
//
//   kind     fields                                          written
//   QPROF    <format> key=value…                             first line: version, interval, host,
//                                                            root_pid, start, metric, page_size
//   CMDLINE  <command line, shell-quoted>                    once (mprof)
//   MEM      <MiB %.6f> <t %.4f>                             every sample: the tree's RSS (mprof)
//   CHLD     <pid> <MiB %.6f> <t %.4f>                       --multiprocess: one per member (mprof -M)
//   MARK     <t> <label…>                                    a checkpoint, after the immediate sample
//   FUNC     <name> <MiB> <t0> <MiB> <t1> 0                  a closed stage, for mprof's brackets
//   PSS      <t> <pss bytes> <uss bytes>                     the tree's PSS/USS (slower schedule)
//   IO       <t> <read_bytes> <write_bytes> <rchar> <wchar>  cumulative, reaped members included
//   CPU      <t> <cpu seconds>                               cumulative user+system of the tree
//   HWM      <t> <bytes>                                     Σ VmHWM of the tree so far
//   CGROUP   <t> <usage bytes> <peak bytes>                  the tree's cgroup (--cgroup)
//   GPUDEV   <index> <uuid> <total bytes> <name…>            once per GPU device
//   GPU      <t> <index> <tree bytes> <device used bytes>    per device, per GPU sample
//   PEAK     <name> <bytes>                                  exact figures known at the end
//   NOTE     <text…>                                         a warning qprof gave while recording
//   EXIT     <t> key=value…                                  status, signal, timed_out
//
// Times are Unix seconds (qprof's own kinds: 6 decimals). Text fields (label, name, note, the
// values of key=value pairs) escape backslash, control characters and invalid UTF-8 as \\ \n \r
// \t \xHH; values of key=value pairs escape the space as \x20 too.
//
// Compatibility rules: readers skip kinds they do not know (an all-capitals word), and ignore
// fields appended to a known kind whose last field is not text. An incompatible change bumps
// <format>. In a qprof trace, stages come from MARK pairs ("X Start" … "X End"); its FUNC lines
// only mirror them for mprof. In an mprof trace, FUNC lines are the stages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::dat {

inline constexpr int kFormatVersion = 1;

// The names of PEAK lines.
inline constexpr std::string_view kPeakKernelProcess = "kernel_process";  // RUSAGE_CHILDREN ru_maxrss
inline constexpr std::string_view kPeakCgroup = "cgroup";                 // cgroup high-water mark
inline constexpr std::string_view kPeakHwmSum = "hwm_sum";                // Σ VmHWM over the tree

class ParseError : public std::runtime_error {
 public:
  ParseError(std::string file, std::size_t line, const std::string& reason);
  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }

 private:
  std::string file_;
  std::size_t line_;
};

// Receives the records of a trace in file order; the parser never holds more than one line, so a
// visitor can reduce a trace of millions of samples as it streams.
class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void header(const TraceMeta&) {}
  virtual void cmdline(std::string_view) {}
  virtual void mem(const MemSample&) {}
  virtual void child(std::int64_t /*pid*/, const MemSample&) {}
  virtual void mark(Seconds /*t*/, std::string_view /*label*/) {}
  virtual void func(std::string_view /*name*/, const MemSample& /*start*/, const MemSample& /*end*/) {}
  virtual void pss(const PssSample&) {}
  virtual void io(const IoSample&) {}
  virtual void cpu(const CpuSample&) {}
  virtual void hwm(const MemSample&) {}
  virtual void cgroup(const CgroupSample&) {}
  virtual void gpu_device(const GpuDevice&) {}
  virtual void gpu(const GpuSample&) {}
  virtual void peak(std::string_view /*name*/, Bytes) {}
  virtual void note(std::string_view) {}
  virtual void exit(const ExitInfo&) {}
  // A problem that does not stop the reading, "FILE:LINE: reason" (a truncated last line).
  virtual void warning(const std::string&) {}
};

// Throws ParseError ("FILE:LINE: reason") at the first malformed line. A last line without its
// newline that does not parse is the mark of a killed writer: it is reported to warning() and
// skipped. `name` is what errors call the input.
void parse_file(const std::string& path, Visitor& visitor);
void parse_text(std::string_view text, const std::string& name, Visitor& visitor);

// Reads a whole trace into memory. Warnings go to `warnings` when given. Throws ParseError, also
// for a trace without a single sample.
Trace read_trace(const std::string& path, std::vector<std::string>* warnings = nullptr);
Trace read_trace_text(std::string_view text, const std::string& name,
                      std::vector<std::string>* warnings = nullptr);

// Text-field escaping (see the header comment). `escape_space` is for key=value values.
std::string escape_text(std::string_view raw, bool escape_space = false);
std::string unescape_text(std::string_view escaped);
// A stage name as mprof can read it in a FUNC line: one word, valid UTF-8.
std::string func_name(std::string_view label);

// MiB as mprof writes and reads it.
inline double to_mib(Bytes b) { return static_cast<double>(b) / (1024.0 * 1024.0); }
Bytes from_mib(double mib);

// Streams a trace to a file descriptor. Lines are buffered and written whole by flush(), so a
// reader (or a crash) never sees half a line that qprof meant to finish; the caller decides when
// to flush. Steady-state calls (mem, child, io, cpu, …) never allocate.
class Writer {
 public:
  // Creates (truncates) `path`; throws std::system_error on failure.
  explicit Writer(const std::string& path);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void header(const TraceMeta& meta);
  void cmdline(std::string_view command_line);
  void mem(Seconds t, Bytes bytes);
  void child(std::int64_t pid, Seconds t, Bytes bytes);
  void mark(Seconds t, std::string_view label);
  void func(std::string_view label, const MemSample& start, const MemSample& end);
  void pss(const PssSample& s);
  void io(const IoSample& s);
  void cpu(const CpuSample& s);
  void hwm(Seconds t, Bytes bytes);
  void cgroup(const CgroupSample& s);
  void gpu_device(const GpuDevice& d);
  void gpu(const GpuSample& s);
  void peak(std::string_view name, Bytes bytes);
  void note(std::string_view text);
  void exit(const ExitInfo& e);

  // Writes the buffered lines. Returns false once a write failed (disk full…); error() says why.
  bool flush();
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

 private:
  class Line;
  void reserve(std::size_t n);
  void append(std::string_view s);

  std::string path_;
  int fd_ = -1;
  std::vector<char> buf_;
  std::size_t used_ = 0;
  std::string error_;
};

}  // namespace qprof::dat
