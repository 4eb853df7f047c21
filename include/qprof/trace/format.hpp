// SPDX-License-Identifier: Apache-2.0
// The .dat trace format: the contract between `qprof run` and everything that reads a trace.
//
// A trace is UTF-8 text, one record per line, each line "<KIND> <fields…>". The original mprof
// reads the same file: it splits every line once at the first space, keeps the kinds it knows
// (CMDLINE, MEM, CHLD, FUNC) and skips the rest, so qprof never writes a line without a space
// and never writes a blank line (mprof stops at one).
//
//   kind     fields                                          written
//   QPROF    <format> key=value…                             first line: version, interval, host,
//                                                            root_pid, start, metric, page_size,
//                                                            limit, limit_source (the memory limit in force)
//   CMDLINE  <command line, shell-quoted>                    once (mprof)
//   MEM      <MiB %.6f> <t %.4f>                             every sample: the tree's RSS (mprof)
//   CHLD     <pid> <MiB %.6f> <t %.4f>                       --multiprocess: one per member (mprof -M)
//   PROC     <pid> <name…>                                   --multiprocess: a member's name (comm), when it joins
//   MARK     <t> <label…>                                    a checkpoint, after the immediate sample
//   FUNC     <name> <MiB> <t0> <MiB> <t1> 0                  a closed stage, for mprof's brackets
//   PSS      <t> <pss bytes> <uss bytes> [<unreclaimable>]   the tree's PSS/USS (slower schedule, and at
//                                                            new Σ RSS highs); Pss_Anon + Pss_Shmem
//   IO       <t> <read_bytes> <write_bytes> <rchar> <wchar>  cumulative, reaped members included
//   CPU      <t> <cpu seconds>                               cumulative user+system of the tree
//   HWM      <t> <bytes>                                     Σ VmHWM of the tree so far
//   CGROUP   <t> <usage bytes> <peak bytes> [<anon> <file> [<shmem>]]  the tree's cgroup charge
//                                                            (--cgroup), every sample; its parts with
//                                                            the stats and at its rises (shmem: of
//                                                            file, not droppable)
//   CGPEAK   <t> <bytes>                                     at a checkpoint: the kernel's peak of the charge
//                                                            since the previous CGPEAK or the start, then reset
//   GPUDEV   <index> <uuid> <total bytes> <name…>            once per GPU device
//   GPU      <t> <index> <tree bytes> <device used bytes>    per device, per GPU sample
//   TORCH    <t> <device> <allocated bytes> <reserved bytes> torch's CUDA figures, sent with a checkpoint
//   KINDS    <t> <anon> <file> <shmem> <swap>               the tree's RSS by kind and its swap, bytes
//   TASKS    <t> <processes> <threads> <vsz bytes>           the tree's task counts and Σ VmSize
//   GPUUTIL  <t> <index> <busy %> <mem bw %> <tree busy %|-> <pcie rx B/s|-> <pcie tx B/s|->
//                                                            how busy a device was ('-': unknown)
//   PEAK     <name> <bytes>                                  exact figures known at the end
//   DIRDEF   <index> <path…>                                 a directory watched with --watch-dir
//   DIR      <t> <index> <apparent> <allocated> <fs_free>    its size at one walk, bytes
//   NOTE     <text…>                                         a warning qprof gave while recording
//   UNREAD   <processes>                                     members qprof could not read (out of descriptors)
//   OOM      <t> key=value…                                  a member killed by the OOM killer: pid, name, role,
//                                                            source, scope, limit, held, tree, stage (oom_record.cpp)
//   EXIT     <t> key=value…                                  status, signal, timed_out, status_known (0 only: attach)
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
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::trace {

inline constexpr int kFormatVersion = 1;

// The longest line a reader accepts, newline excluded: a longer one is "FILE:LINE: line longer
// than 1 MiB" after reading at most this much of it, so /dev/zero, a FIFO that never sends a
// newline or a huge sparse file cost a reader at most one such line of memory. qprof's own lines
// are under 100 bytes, a marker label at most 4 KiB escaped fourfold.
inline constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
// The most a reader takes from a pipe, FIFO or device (a regular file is bounded by its size):
// a Trace of 1 GiB of lines holds under 1 GiB.
inline constexpr std::uint64_t kMaxStreamBytes = std::uint64_t{1} << 30;

// The names of PEAK lines.
inline constexpr std::string_view kPeakKernelProcess = "kernel_process";  // RUSAGE_CHILDREN ru_maxrss
inline constexpr std::string_view kPeakCgroup = "cgroup";                 // cgroup high-water mark
inline constexpr std::string_view kPeakHwmSum = "hwm_sum";                // Σ VmHWM over the tree
// Σ VmHWM when some process's peak could not be covered (reaped by a parent qprof never reaped): not a bound
inline constexpr std::string_view kPeakHwmSumPartial = "hwm_sum_partial";

class ParseError : public std::runtime_error {
 public:
  ParseError(std::string file, std::size_t line, const std::string& reason);
  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }

 private:
  std::string file_;
  std::size_t line_;
};

// Thrown by a Visitor to refuse the record it was given (a time no chart can hold): the reader
// reports it as ParseError "FILE:LINE: reason" with the line of that record.
class BadRecord : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Receives the records of a trace in file order; the parser never holds more than one line, so a
// visitor can reduce a trace of millions of samples as it streams.
class Visitor {
 public:
  virtual ~Visitor() = default;
  // The line (from 1) of the call being made, set by the reader before each line: what a
  // visitor that passes calls on to another thread (the threaded reader) needs to say where a
  // refused record was. A visitor may throw BadRecord from any call; the reader turns it into
  // a ParseError at this line.
  void at_line(std::size_t line) { line_ = line; }
  std::size_t line() const { return line_; }
  // Kinds a visitor does not read may be left unparsed (a pass over a file that an earlier pass
  // validated: its numbers need not be read again). MEM lines are always given.
  virtual bool skips(std::string_view /*kind*/) const { return false; }
  virtual void header(const TraceMeta&) {}
  virtual void cmdline(std::string_view) {}
  virtual void mem(const MemSample&) {}
  virtual void child(std::int64_t /*pid*/, const MemSample&) {}
  virtual void process_name(std::int64_t /*pid*/, std::string_view /*name*/) {}
  virtual void mark(Seconds /*t*/, std::string_view /*label*/) {}
  virtual void func(std::string_view /*name*/, const MemSample& /*start*/, const MemSample& /*end*/) {}
  virtual void pss(const PssSample&) {}
  virtual void io(const IoSample&) {}
  virtual void cpu(const CpuSample&) {}
  virtual void hwm(const MemSample&) {}
  virtual void cgroup(const CgroupSample&) {}
  virtual void cgroup_window(const MemSample&) {}
  virtual void gpu_device(const GpuDevice&) {}
  virtual void gpu(const GpuSample&) {}
  virtual void torch(const TorchSample&) {}
  virtual void kinds(const MemKindsSample&) {}
  virtual void tasks(const TasksSample&) {}
  virtual void gpu_util(const GpuUtilSample&) {}
  virtual void peak(std::string_view /*name*/, Bytes) {}
  virtual void dir_def(const WatchedDir&) {}
  virtual void dir(const DirSample&) {}
  virtual void note(std::string_view) {}
  virtual void unread(std::uint64_t /*processes*/) {}
  virtual void oom_kill(const OomKill&) {}
  virtual void exit(const ExitInfo&) {}
  // A problem that does not stop the reading, "FILE:LINE: reason" (a truncated last line).
  virtual void warning(const std::string&) {}

 private:
  std::size_t line_ = 0;
};

// Throws ParseError ("FILE:LINE: reason") at the first malformed line, and at a line longer than
// kMaxLineBytes (the buffer is never larger: any input, regular or not, is read in bounded
// memory). A last line without its
// newline that does not parse is the mark of a killed writer: it is reported to warning() and
// skipped. `name` is what errors call the input.
void parse_file(const std::string& path, Visitor& visitor);
// parse_file's reader over an open descriptor (not closed), named `name` in errors; a smaller
// `max_line` lets the fuzzer reach the bound and the buffer's refills with short inputs.
// `max_total` > 0: an error past that many bytes (parse_file: kMaxStreamBytes for what is not a
// regular file). `length` > 0: only that many bytes are read (the part of a growing file that an
// earlier pass read).
void parse_fd(int fd, const std::string& name, Visitor& visitor, std::size_t max_line = kMaxLineBytes,
              std::uint64_t max_total = 0, std::uint64_t length = 0);
// parse_file over the first `length` bytes of a regular file: a later pass of a reader that reads
// a trace more than once sees the records the first pass saw, however the file grew meanwhile.
void parse_file_prefix(const std::string& path, std::uint64_t length, Visitor& visitor);
void parse_text(std::string_view text, const std::string& name, Visitor& visitor);

// Reads a whole trace into memory. Warnings go to `warnings` when given. Throws ParseError, also
// for a trace without a single sample.
Trace read_trace(const std::string& path, std::vector<std::string>* warnings = nullptr);
// A trace read for its peaks alone, in memory flat in its length (a FIFO may feed it for ever):
// of each sampled series only its first and last records and, per value, the highest (the
// earliest of equal ones), counting only samples inside one of `windows` (inclusive) when given;
// of io, cpu, tasks, GPU use and torch figures the latest only; of markers the latest; of
// stages those that may hold a peak (that hold a record kept, or end after the latest), and
// every stage called `stage`; the first 1000 notes. The peaks, bracket, and the stages at a peak
// found in it are those of read_trace's.
Trace read_trace_peaks(const std::string& path, const std::vector<std::pair<Seconds, Seconds>>& windows = {},
                       const std::string& stage = "");
// A regular file read in two passes, in memory flat in its length: whole small records (header,
// markers, stages, notes, OOM kills, PEAK and CGPEAK lines, exit), and of each sampled series only
// what its figures over the run and inside each stage are read from: the first and the latest
// record, of each value the highest (the earliest of equal ones) over the run and inside each
// stage's window (its times widened by `slack`), the latest record at or before each stage's
// start and end (+ `slack`); of children only their first, latest and highest; of I/O, CPU, torch
// and GPU use the first and the latest. Peaks, stage peaks and values at the stages, footprints,
// directory growths and totals read from it are read_trace's; `reduced` says how many samples
// and bytes the file had.
// nullopt for what is not a regular file (a pipe cannot be read twice), for a trace whose
// records go back in time (a window could have missed some) and for one of more than 64 GPU
// devices (its GPU figure is kept as every device's snapshot): read those whole.
std::optional<Trace> read_trace_reduced(const std::string& path, Seconds slack,
                                        std::vector<std::string>* warnings = nullptr);
// The same from an open regular file's descriptor (read from its start; not closed), named
// `name` in errors.
Trace read_trace_fd(int fd, const std::string& name, std::vector<std::string>* warnings = nullptr);
Trace read_trace_text(std::string_view text, const std::string& name, std::vector<std::string>* warnings = nullptr);

// Text-field escaping (see the header comment). `escape_space` is for key=value values.
std::string escape_text(std::string_view raw, bool escape_space = false);
std::string unescape_text(std::string_view escaped);
// A stage name as mprof can read it in a FUNC line: one word, valid UTF-8.
std::string func_name(std::string_view label);

// MiB as mprof writes and reads it.
inline double to_mib(Bytes b) { return static_cast<double>(b) / (1024.0 * 1024.0); }
Bytes from_mib(double mib);

// The longest command line a trace stores: a data job's shard list (45 000 paths, 1.3 MB) made a
// CMDLINE line past kMaxLineBytes, a trace neither qprof nor mprof could read. A longer one keeps
// its first half and last quarter of this, and says in between how many bytes of how many it left.
inline constexpr std::size_t kMaxCommandBytes = std::size_t{64} << 10;
std::string bounded_command(std::string_view command);

// Streams a trace to a file descriptor. Lines are buffered and written whole by flush(), so a
// reader (or a crash) never sees half a line that qprof meant to finish; the caller decides when
// to flush. Steady-state calls (mem, child, io, cpu, …) never allocate.
class Writer {
 public:
  // Creates (truncates) `path`; throws std::system_error on failure.
  explicit Writer(const std::string& path);
  // Writes to `fd`, which it owns from now on (closes it); `name` is what messages call it.
  Writer(int fd, std::string name);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void header(const TraceMeta& meta);
  // Longer than kMaxCommandBytes: elided in the middle (bounded_command).
  void cmdline(std::string_view command_line);
  void mem(Seconds t, Bytes bytes);
  void child(std::int64_t pid, Seconds t, Bytes bytes);
  // A member's name (its /proc comm), once, when it joins (with -M): PROC <pid> <name…>.
  void process_name(std::int64_t pid, std::string_view name);
  void mark(Seconds t, std::string_view label);
  void func(std::string_view label, const MemSample& start, const MemSample& end);
  void pss(const PssSample& s);
  void io(const IoSample& s);
  void cpu(const CpuSample& s);
  void hwm(Seconds t, Bytes bytes);
  void cgroup(const CgroupSample& s);
  void cgroup_window(Seconds t, Bytes peak);
  void gpu_device(const GpuDevice& d);
  void gpu(const GpuSample& s);
  void torch(const TorchSample& s);
  void kinds(const MemKindsSample& s);
  void tasks(const TasksSample& s);
  void gpu_util(const GpuUtilSample& s);
  void peak(std::string_view name, Bytes bytes);
  void dir_def(const WatchedDir& d);
  void dir(const DirSample& s);
  void note(std::string_view text);
  void unread(std::uint64_t processes);
  void oom_kill(const OomKill& k);
  void exit(const ExitInfo& e);

  // Writes the buffered lines. Returns false once a write failed (disk full…); error() says why.
  // After the first failure nothing more is written: lines are dropped, memory stays bounded.
  bool flush();
  // Writes what is buffered and closes the file. False when either failed: close(2) is where NFS
  // and some FUSE filesystems report a write that did not reach the server. Lines written after
  // it are dropped.
  bool close();
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  // From now on every number in the shortest form that reads back as the same double, not the
  // recorder's fixed decimals: a trace qprof writes to read again itself (compare's job row),
  // whose figures must be those of the Trace it was written from.
  void exact_numbers() { exact_ = true; }

 private:
  class Line;
  void reserve(std::size_t n);
  void append(std::string_view s);

  std::string path_;
  int fd_ = -1;
  std::vector<char> buf_;
  std::size_t used_ = 0;
  std::string error_;
  bool exact_ = false;
  std::size_t partial_ = 0;  // bytes written after the last '\n': a line not yet whole on disk
  void cut_to_whole_line();
};

// A whole in-memory trace as lines, in time order (samples, markers, stages as their Start/End
// markers), then its PEAK lines and its EXIT: a Trace made by analysis (a job's sum) becomes a
// file every reader takes.
void write_trace(const Trace& trace, Writer& out);

}  // namespace qprof::trace
