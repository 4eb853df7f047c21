// SPDX-License-Identifier: Apache-2.0
// Each kind of trace line (docs/trace-format.md) into its record: the fields a kind has, read
// in place (line_fields.hpp), and the checks of its values.
#include "line_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "line_fields.hpp"
#include "oom_record.hpp"
#include "plain_numbers.hpp"
#include "record_range.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::trace::detail {
namespace {

bool is_kind_word(std::string_view kind) {
  if (kind.empty() || kind.front() < 'A' || kind.front() > 'Z') return false;
  for (char c : kind) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// key=value pairs of QPROF and EXIT lines; a refusal names the line's kind, as the fields' do.
template <typename F>
void for_each_pair(Fields& f, F&& on_pair) {
  while (!f.empty()) {
    const std::string_view w = f.word("key=value");
    const std::size_t eq = w.find('=');
    try {
      if (eq == std::string_view::npos || eq == 0) throw LineError{"expected key=value, got " + quoted(w)};
      on_pair(w.substr(0, eq), unescape_text(w.substr(eq + 1)));
    } catch (LineError& e) {
      const std::string kind = std::string(f.kind()) + ": ";
      if (!e.reason.starts_with(kind)) e.reason = kind + e.reason;  // a time's range check names it already
      throw;
    }
  }
}

double to_double(const std::string& key, const std::string& value) {
  double v = 0;
  auto r = std::from_chars(value.data(), value.data() + value.size(), v);
  if (r.ec != std::errc() || r.ptr != value.data() + value.size() || !std::isfinite(v)) {
    throw LineError{key + "=" + quoted(value) + " is not a number"};
  }
  return v;
}

std::int64_t to_int(const std::string& key, const std::string& value) {
  std::int64_t v = 0;
  auto r = std::from_chars(value.data(), value.data() + value.size(), v);
  if (r.ec == std::errc::result_out_of_range) throw LineError{key + "=" + quoted(value) + " is out of range"};
  if (r.ec != std::errc() || r.ptr != value.data() + value.size()) {
    throw LineError{key + "=" + quoted(value) + " is not an integer"};
  }
  return v;
}

void parse_header(Fields& f, Visitor& v) {
  TraceMeta meta;
  meta.format_version = static_cast<int>(f.integer("format version"));
  if (meta.format_version < 1) throw LineError{"QPROF: format version must be at least 1"};
  if (meta.format_version > kFormatVersion) {
    throw LineError{"written in trace format " + std::to_string(meta.format_version) +
                    " by a newer qprof; this qprof reads format " + std::to_string(kFormatVersion)};
  }
  for_each_pair(f, [&](std::string_view key, std::string value) {
    const std::string k(key);
    if (k == "version")
      meta.qprof_version = std::move(value);
    else if (k == "interval")
      meta.interval = to_double(k, value);
    else if (k == "host")
      meta.host = std::move(value);
    else if (k == "root_pid")
      meta.root_pid = to_int(k, value);
    else if (k == "start") {
      meta.start = to_double(k, value);
      if (auto why = time_out_of_range("QPROF", "start", *meta.start)) throw LineError{std::move(*why)};
    } else if (k == "metric")
      meta.metric = std::move(value);
    else if (k == "rank")
      meta.job.rank = to_int(k, value);
    else if (k == "local_rank")
      meta.job.local_rank = to_int(k, value);
    else if (k == "world_size")
      meta.job.world_size = to_int(k, value);
    else if (k == "job")
      meta.job.job_id = std::move(value);
    else if (k == "launcher")
      meta.job.launcher = std::move(value);
    else
      meta.other[k] = std::move(value);
  });
  v.header(meta);
}

// An exit status or signal: what an int holds, not a wider number cast into a negative one
// (status=2147483648 was shown as −2147483648).
int to_small_int(const std::string& key, const std::string& value) {
  const std::int64_t v = to_int(key, value);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    throw LineError{key + "=" + quoted(value) + " is out of range"};
  }
  return static_cast<int>(v);
}

void parse_exit(Fields& f, Visitor& v) {
  ExitInfo e;
  e.t = f.time("time");
  for_each_pair(f, [&](std::string_view key, const std::string& value) {
    const std::string k(key);
    if (k == "status")
      e.status = to_small_int(k, value);
    else if (k == "signal")
      e.signal = to_small_int(k, value);
    else if (k == "timed_out")
      e.timed_out = to_int(k, value) != 0;
    else if (k == "status_known")
      e.status_known = to_int(k, value) != 0;
  });
  v.exit(e);
}

// GPUUTIL: percentages within 0–100 (a little above is rounding), '-' for what the driver did not say.
GpuUtilSample parse_gpu_util(Fields& f) {
  GpuUtilSample s;
  s.t = f.time("time");
  s.device = static_cast<int>(f.integer("device index"));
  const auto percent = [&f](const char* what) {
    const double p = f.non_negative(what);
    if (p > 100.5) throw LineError{std::string("GPUUTIL: ") + what + " is above 100"};
    return p;
  };
  const auto optional = [&f](const char* what, auto&& parse) -> std::optional<double> {
    Fields probe = f;
    if (probe.word(what) == "-") {
      f = probe;
      return std::nullopt;
    }
    return parse(what);
  };
  s.busy_percent = percent("busy %");
  s.mem_bw_percent = percent("memory bandwidth %");
  s.tree_busy_percent = optional("the tree's busy %", percent);
  const auto rate = [&f](const char* what) { return f.non_negative(what); };
  s.pcie_rx_bytes_per_s = optional("PCIe RX bytes/s", rate);
  s.pcie_tx_bytes_per_s = optional("PCIe TX bytes/s", rate);
  return s;
}

// "BYTES_MIB TIME": MEM and CHLD, as mprof writes them.
MemSample mib_at(Fields& f) {
  MemSample s;
  s.bytes = f.mib("memory (MiB)");
  s.t = f.time("time");
  return s;
}

// "TIME BYTES": HWM and CGPEAK.
MemSample bytes_at(Fields& f, const char* what) {
  MemSample s;
  s.t = f.time("time");
  s.bytes = f.bytes(what);
  return s;
}

void parse_func(Fields& f, Visitor& v) {
  const std::string_view name = f.word("name");
  MemSample start, end;
  start.bytes = f.mib("start memory (MiB)");
  start.t = f.time("start time");
  end.bytes = f.mib("end memory (MiB)");
  end.t = f.time("end time");
  if (!f.empty()) f.integer("stack level");
  if (end.t < start.t) throw LineError{"FUNC: the end time is before the start time"};
  v.func(name, start, end);
}

PssSample pss_of(Fields& f) {
  PssSample s;
  s.t = f.time("time");
  s.pss = f.bytes("PSS bytes");
  s.uss = f.bytes("USS bytes");
  if (!f.empty()) s.unreclaimable = f.bytes("unreclaimable bytes");
  return s;
}

IoSample io_of(Fields& f) {
  IoSample s;
  s.t = f.time("time");
  s.read_bytes = f.count("read_bytes");
  s.write_bytes = f.count("write_bytes");
  s.rchar = f.count("rchar");
  s.wchar = f.count("wchar");
  return s;
}

CpuSample cpu_of(Fields& f) {
  CpuSample s;
  s.t = f.time("time");
  s.cpu_seconds = f.non_negative("CPU seconds");
  return s;
}

CgroupSample cgroup_of(Fields& f) {
  CgroupSample s;
  s.t = f.time("time");
  s.usage = f.bytes("usage bytes");
  s.peak = f.bytes("peak bytes");
  if (!f.empty()) {
    s.anon = f.bytes("anon bytes");
    s.file = f.bytes("file bytes");
    if (!f.empty()) s.shmem = f.bytes("shmem bytes");  // traces of older qprofs end at file
  }
  return s;
}

MemKindsSample kinds_of(Fields& f) {
  MemKindsSample s;
  s.t = f.time("time");
  s.anon = f.bytes("anon bytes");
  s.file = f.bytes("file bytes");
  s.shmem = f.bytes("shmem bytes");
  s.swap = f.bytes("swap bytes");
  return s;
}

TasksSample tasks_of(Fields& f) {
  TasksSample s;
  s.t = f.time("time");
  s.processes = f.count("processes");
  s.threads = f.count("threads");
  s.vsz = f.count("vsz bytes");
  return s;
}

GpuDevice gpu_device_of(Fields& f) {
  GpuDevice d;
  d.index = static_cast<int>(f.integer("device index"));
  d.uuid = unescape_text(f.word("uuid"));
  d.total = f.count("total bytes");
  d.name = unescape_text(f.text());
  return d;
}

GpuSample gpu_of(Fields& f) {
  GpuSample s;
  s.t = f.time("time");
  s.device = static_cast<int>(f.integer("device index"));
  s.tree = f.bytes("tree bytes");
  s.used = f.bytes("device used bytes");
  if (!f.empty()) s.tree_age = f.non_negative("tree figure age");
  return s;
}

TorchSample torch_of(Fields& f) {
  TorchSample s;
  s.t = f.time("time");
  s.device = static_cast<int>(f.integer("device index"));
  s.allocated = f.bytes("allocated bytes");
  s.reserved = f.bytes("reserved bytes");
  return s;
}

WatchedDir dir_def_of(Fields& f) {
  WatchedDir d;
  d.index = static_cast<int>(f.integer("directory index"));
  d.path = unescape_text(f.text());
  return d;
}

DirSample dir_of(Fields& f) {
  DirSample s;
  s.t = f.time("time");
  s.dir = static_cast<int>(f.integer("directory index"));
  s.apparent = f.count("apparent bytes");
  s.allocated = f.bytes("allocated bytes");
  s.fs_free = f.count("free bytes");
  return s;
}

// Markers come in the order they happened (a time written to the microsecond, so 1 ms of slack
// is for hand-made traces only).
void check_mark_order(Seconds t, LinesBefore& before) {
  constexpr Seconds kSlack = 1e-3;
  if (before.last_mark && t < *before.last_mark - kSlack) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "MARK: time %.6f is %.3g s before the marker above it (%.6f): markers are written in the order "
                  "they happen",
                  t, *before.last_mark - t, *before.last_mark);
    throw LineError{why};
  }
  before.last_mark = std::max(t, before.last_mark.value_or(t));
}

}  // namespace

void parse_line(std::string_view line, Visitor& v, LinesBefore& before) {
  const std::size_t sp = line.find(' ');
  const std::string_view kind = line.substr(0, sp);
  // MEM lines are always given (Visitor): the fast path gives them without asking, so a MEM line
  // it leaves here ("MEM 1.5e2 T", a newer writer's extra field) is given too.
  if (kind != "MEM" && v.skips(kind)) return;
  Fields f(kind, sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1));
  // The most frequent kinds first: this is the reader's hot path.
  if (kind == "MEM") {
    v.mem(mib_at(f));
  } else if (kind == "CHLD") {
    const std::int64_t pid = f.integer("pid");  // before the sample's fields
    v.child(pid, mib_at(f));
  } else if (kind == "MARK") {
    // A line's parts in order into locals first: a call's arguments are evaluated in no set order.
    const double t = f.time("time");
    check_mark_order(t, before);
    v.mark(t, unescape_text(f.text()));
  } else if (kind == "PROC") {
    const std::int64_t pid = f.integer("pid");
    v.process_name(pid, unescape_text(f.text()));
  } else if (kind == "PEAK") {
    const std::string name = unescape_text(f.word("name"));
    v.peak(name, f.bytes("bytes"));
  } else if (kind == "FUNC") {
    parse_func(f, v);
  } else if (kind == "CMDLINE") {
    v.cmdline(f.text());
  } else if (kind == "QPROF") {
    parse_header(f, v);
  } else if (kind == "PSS") {
    v.pss(pss_of(f));
  } else if (kind == "IO") {
    v.io(io_of(f));
  } else if (kind == "CPU") {
    v.cpu(cpu_of(f));
  } else if (kind == "HWM") {
    v.hwm(bytes_at(f, "bytes"));
  } else if (kind == "CGROUP") {
    v.cgroup(cgroup_of(f));
  } else if (kind == "CGPEAK") {
    v.cgroup_window(bytes_at(f, "peak bytes"));
  } else if (kind == "GPUDEV") {
    v.gpu_device(gpu_device_of(f));
  } else if (kind == "GPU") {
    v.gpu(gpu_of(f));
  } else if (kind == "TORCH") {
    v.torch(torch_of(f));
  } else if (kind == "KINDS") {
    v.kinds(kinds_of(f));
  } else if (kind == "TASKS") {
    v.tasks(tasks_of(f));
  } else if (kind == "GPUUTIL") {
    v.gpu_util(parse_gpu_util(f));
  } else if (kind == "DIRDEF") {
    v.dir_def(dir_def_of(f));
  } else if (kind == "DIR") {
    v.dir(dir_of(f));
  } else if (kind == "UNREAD") {
    v.unread(f.count("processes"));
  } else if (kind == "NOTE") {
    v.note(unescape_text(f.text()));
  } else if (kind == "OOM") {
    v.oom_kill(parse_oom_record(f.text()));
  } else if (kind == "EXIT") {
    parse_exit(f, v);
  } else if (!is_kind_word(kind)) {
    throw LineError{"not a trace line (it starts with " + quoted(kind) + ")"};
  }
  // Any other all-capitals kind belongs to a newer writer: skipped, as mprof does.
}

}  // namespace qprof::trace::detail
