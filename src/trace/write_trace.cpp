// SPDX-License-Identifier: Apache-2.0
// An in-memory Trace back into lines, so that a trace made by analysis (a job's ranks summed)
// is read by the plot and every other reader as any recorded one. Every series a Trace holds is
// written: reading the result gives the same Trace back (tests/unit/write_trace_test.cpp).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "qprof/trace/format.hpp"

namespace qprof::trace {
namespace {

// Which vector of the Trace a line comes from; within one time, lines go in this order: the
// tree's MEM first and its CHLD lines right after it (readers subtract them from the MEM line of
// the same time), the other samples, then markers, which take the latest values above them as
// their checkpoint, and a stage's End after its Start.
enum class Kind : std::uint8_t {
  mem,
  child,
  pss,
  gpu,
  torch,
  io,
  cpu,
  hwm,
  cgroup,
  cgroup_window,
  kinds,
  tasks,
  gpu_util,
  dir,
  mark,
  stage_start,
  stage_end
};

struct Line {
  Seconds t;
  Kind kind;
  std::uint32_t series;  // the child's index (child lines)
  std::size_t index;     // in its vector
};

int order_at_one_time(Kind k) {
  switch (k) {
    case Kind::mem:
      return 0;
    case Kind::child:
      return 1;
    case Kind::mark:
    case Kind::stage_start:
      return 3;
    case Kind::stage_end:
      return 4;
    default:
      return 2;
  }
}

void write_line(const Trace& tr, const Line& l, Writer& out) {
  switch (l.kind) {
    case Kind::mem:
      out.mem(tr.mem[l.index].t, tr.mem[l.index].bytes);
      break;
    case Kind::child: {
      const ChildSeries& c = tr.children[l.series];
      out.child(c.pid, c.samples[l.index].t, c.samples[l.index].bytes);
      break;
    }
    case Kind::pss:
      out.pss(tr.pss[l.index]);
      break;
    case Kind::gpu:
      out.gpu(tr.gpu[l.index]);
      break;
    case Kind::torch:
      out.torch(tr.torch[l.index]);
      break;
    case Kind::io:
      out.io(tr.io[l.index]);
      break;
    case Kind::cpu:
      out.cpu(tr.cpu[l.index]);
      break;
    case Kind::hwm:
      out.hwm(tr.hwm[l.index].t, tr.hwm[l.index].bytes);
      break;
    case Kind::cgroup:
      out.cgroup(tr.cgroup[l.index]);
      break;
    case Kind::cgroup_window:
      out.cgroup_window(tr.cgroup_windows[l.index].t, tr.cgroup_windows[l.index].bytes);
      break;
    case Kind::kinds:
      out.kinds(tr.kinds[l.index]);
      break;
    case Kind::tasks:
      out.tasks(tr.tasks[l.index]);
      break;
    case Kind::gpu_util:
      out.gpu_util(tr.gpu_util[l.index]);
      break;
    case Kind::dir:
      out.dir(tr.dir_samples[l.index]);
      break;
    case Kind::mark:
      out.mark(tr.markers[l.index].t, tr.markers[l.index].label);
      break;
    case Kind::stage_start:
      out.mark(tr.stages[l.index].t_start, tr.stages[l.index].name + " Start");
      break;
    case Kind::stage_end:
      out.mark(tr.stages[l.index].t_end, tr.stages[l.index].name + " End");
      break;
  }
}

template <class Sample>
void add_all(std::vector<Line>& lines, const std::vector<Sample>& v, Kind kind) {
  for (std::size_t i = 0; i < v.size(); ++i) lines.push_back({v[i].t, kind, 0, i});
}

}  // namespace

void write_trace(const Trace& trace, Writer& out) {
  out.header(trace.meta);
  out.cmdline(trace.cmdline);
  for (const GpuDevice& d : trace.gpu_devices) out.gpu_device(d);
  for (const WatchedDir& d : trace.dirs) out.dir_def(d);
  std::vector<Line> lines;
  add_all(lines, trace.mem, Kind::mem);
  for (std::size_t c = 0; c < trace.children.size(); ++c) {
    const auto& samples = trace.children[c].samples;
    for (std::size_t i = 0; i < samples.size(); ++i)
      lines.push_back({samples[i].t, Kind::child, static_cast<std::uint32_t>(c), i});
  }
  add_all(lines, trace.pss, Kind::pss);
  add_all(lines, trace.gpu, Kind::gpu);
  add_all(lines, trace.torch, Kind::torch);
  add_all(lines, trace.io, Kind::io);
  add_all(lines, trace.cpu, Kind::cpu);
  add_all(lines, trace.hwm, Kind::hwm);
  add_all(lines, trace.cgroup, Kind::cgroup);
  add_all(lines, trace.cgroup_windows, Kind::cgroup_window);
  add_all(lines, trace.kinds, Kind::kinds);
  add_all(lines, trace.tasks, Kind::tasks);
  add_all(lines, trace.gpu_util, Kind::gpu_util);
  add_all(lines, trace.dir_samples, Kind::dir);
  if (!trace.markers.empty()) {
    add_all(lines, trace.markers, Kind::mark);
  } else {
    // A trace without markers but with stages (a job's stages across ranks): their markers.
    for (std::size_t i = 0; i < trace.stages.size(); ++i) {
      lines.push_back({trace.stages[i].t_start, Kind::stage_start, 0, i});
      if (trace.stages[i].closed) lines.push_back({trace.stages[i].t_end, Kind::stage_end, 0, i});
    }
  }
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return a.t < b.t || (a.t == b.t && order_at_one_time(a.kind) < order_at_one_time(b.kind));
  });
  for (const Line& l : lines) write_line(trace, l, out);
  for (const auto& [name, bytes] : trace.peaks) out.peak(name, bytes);
  for (const std::string& n : trace.notes) out.note(n);
  for (const OomKill& k : trace.oom_kills) out.oom_kill(k);
  if (trace.exit) out.exit(*trace.exit);
  out.flush();
}

}  // namespace qprof::trace
