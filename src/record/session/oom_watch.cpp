// SPDX-License-Identifier: Apache-2.0
#include "oom_watch.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "qprof/common/proc_file.hpp"
#include "qprof/trace/oom.hpp"

namespace qprof::record::session {
namespace {

// Polls a victim may take to die after its kill is counted (the OOM reaper frees its memory
// first): a kill still unnamed after them is said without a process.
constexpr int kPollsToDie = 20;
// A limit this large is "none" (v1 writes PAGE_COUNTER_MAX in bytes, 2^63 less a page).
constexpr Bytes kNoLimit = Bytes{1} << 62;

std::optional<Bytes> limit_in(const std::string& file) {
  std::string text;
  if (!read_small_file(file, text, 64)) return std::nullopt;
  Bytes v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || v >= kNoLimit) return std::nullopt;  // v2 "max" fails to parse: none
  return v;
}

// Dead or a zombie: the candidate of a kill counted but not named.
bool is_dead(pid_t pid) {
  std::string stat;
  if (!read_small_file("/proc/" + std::to_string(pid) + "/stat", stat, 512)) return true;
  const std::size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z' || stat[close + 2] == 'X';
}

std::string comm_of(const Member& m) {
  if (m.comm[0] != '\0') return std::string(m.comm, strnlen(m.comm, sizeof m.comm));
  std::string comm;
  if (read_small_file("/proc/" + std::to_string(m.pid) + "/comm", comm, 64) && !comm.empty() && comm.back() == '\n') {
    comm.pop_back();
  }
  return comm;
}

}  // namespace

std::optional<Bytes> memcg_limit(const std::string& path, const std::string& cgroup_root) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  const std::string rel = path == "/" ? "" : path;
  if (auto v = limit_in(cgroup_root + "/memory" + rel + "/memory.limit_in_bytes")) return v;
  if (auto v = limit_in(cgroup_root + rel + "/memory.max")) return v;
  return limit_in(cgroup_root + "/unified" + rel + "/memory.max");
}

void OomWatch::open(const TreeCgroup* tree_cgroup, const std::optional<MemoryCgroupDir>& own, Notices& notices) {
  std::string why_not;
  if (!log_.open(why_not)) {
    // Not a warning: most users may not read it, and the counts below still say a kill happened.
    notices.note_quietly("the kernel log cannot be read (" + why_not +
                         "): an OOM kill is known from the cgroup's oom_kill count and the wait status");
  }
  if (tree_cgroup && tree_cgroup->has_memory()) {
    counters_.push_back({tree_cgroup->path(), tree_cgroup->is_v1(), true,
                         oom_kills_in(tree_cgroup->path(), tree_cgroup->is_v1()).value_or(0)});
  } else if (own) {
    counters_.push_back({own->dir, own->v1, false, own->oom_kills});
  }
}

void OomWatch::killed_member(pid_t pid, Bytes maxrss) { reaped_.push_back({pid, maxrss}); }

bool OomWatch::in_tree(const Now& now, pid_t pid) const {
  if (pid == now.command) return true;
  const auto& members = now.tree.members();
  if (std::any_of(members.begin(), members.end(), [pid](const Member& m) { return m.pid == pid; })) return true;
  // A victim pruned before its log line was read.
  if (now.tree.departed_member(pid)) return true;
  return std::any_of(reaped_.begin(), reaped_.end(), [pid](const Reaped& r) { return r.pid == pid; });
}

bool OomWatch::said(pid_t pid) const {
  return std::any_of(kills_.begin(), kills_.end(), [pid](const trace::OomKill& k) { return k.pid == pid; });
}

void OomWatch::poll(const Now& now, trace::Writer& out, Notices& notices, bool last) {
  // The kernel logs every kill it makes: where qprof reads the log, the counts are only held
  // against it at the end (a kill whose line never came).
  if (log_.is_open()) from_kernel_log(now, out, notices);
  if (!log_.is_open() || last) from_counters(now, out, notices, last);
  if (unnamed_ == 0) departed_mark_ = now.tree.departed_seq();
  last_poll_ns_ = now.mono_ns;
}

void OomWatch::from_kernel_log(const Now& now, trace::Writer& out, Notices& notices) {
  log_.drain([&](const KernelOomLine& line) {
    if (line.is_constraint) {
      constraints_.push_back(line);
      if (constraints_.size() > 64) constraints_.erase(constraints_.begin());
      return;
    }
    const pid_t pid = static_cast<pid_t>(line.pid);
    if (!in_tree(now, pid)) return;  // another process of the machine or of the job's cgroup
    trace::OomKill kill;
    kill.t = now.clock.unix_at(line.usec * 1000);
    kill.pid = pid;
    kill.name = line.name;
    kill.source = "kernel-log";
    kill.held = line.rss;
    const auto c = std::find_if(constraints_.rbegin(), constraints_.rend(),
                                [&](const KernelOomLine& k) { return k.pid == line.pid; });
    if (c != constraints_.rend()) {
      kill.scope = c->constraint == "CONSTRAINT_MEMCG" ? c->oom_memcg : "machine";
      if (c->constraint == "CONSTRAINT_MEMCG") kill.limit = memcg_limit(c->oom_memcg);
    }
    ++named_by_log_;
    add(std::move(kill), now, out, notices);
  });
}

void OomWatch::count_kills(const Now& now) {
  for (Counter& c : counters_) {
    const auto count = oom_kills_in(c.dir, c.v1);
    if (!count || *count <= c.last) continue;
    if (unnamed_ == 0) counted_after_ns_ = last_poll_ns_ > 0 ? last_poll_ns_ : now.mono_ns;
    std::uint64_t fresh = *count - c.last;
    c.last = *count;
    // The log's kills of the tree are in these counts too.
    const std::uint64_t met = std::min(fresh, named_by_log_);
    fresh -= met;
    named_by_log_ -= met;
    if (fresh == 0) continue;
    if (unnamed_ == 0) unnamed_tree_only_ = false;
    unnamed_ += fresh;
    unnamed_tree_only_ = unnamed_tree_only_ || c.tree_only;
    unnamed_scope_ = c.dir;
  }
}

bool OomWatch::take_victim(const Now& now, trace::OomKill& kill) {
  // A member qprof reaped, dead of a SIGKILL it did not send: that one.
  const auto r = std::find_if(reaped_.begin(), reaped_.end(), [](const Reaped& x) { return !x.said; });
  if (r != reaped_.end()) {
    r->said = true;
    kill.pid = r->pid;
    kill.held = r->maxrss;
    kill.source = "exit";
    return true;
  }
  // Else the largest member now dead, or gone since the kills were counted, that its parent in
  // the tree reaped (one qprof reaped would be above if a SIGKILL ended it).
  const Member* victim = nullptr;
  for (const Member& m : now.tree.members()) {
    if (m.pid == now.command || m.reaped_by_qprof || said(m.pid) || !is_dead(m.pid)) continue;
    if (!victim || m.hwm > victim->hwm) victim = &m;
  }
  const ProcTree::Departed* gone = nullptr;
  now.tree.for_each_departed_since(departed_mark_, [&](const ProcTree::Departed& d) {
    if (d.pid == now.command || d.reaped_by_qprof || d.peak == 0 || said(d.pid)) return;
    if (!gone || d.peak > gone->peak) gone = &d;
  });
  if (gone && (!victim || gone->peak > victim->hwm)) {
    kill.pid = gone->pid;
    kill.name = std::string(gone->comm, strnlen(gone->comm, sizeof gone->comm));
    kill.held = gone->peak;
    return true;
  }
  if (!victim) return false;
  kill.pid = victim->pid;
  kill.name = comm_of(*victim);
  kill.held = std::max(victim->rss, victim->hwm);  // a zombie's RSS reads 0
  return true;
}

void OomWatch::from_counters(const Now& now, trace::Writer& out, Notices& notices, bool last) {
  count_kills(now);
  while (unnamed_ > 0) {
    trace::OomKill kill;
    // Counted since the poll before: the kill came after it.
    kill.t = now.clock.unix_at(counted_after_ns_);
    kill.source = "cgroup";
    kill.scope = unnamed_scope_;
    if (!take_victim(now, kill)) {
      // The victim may not be dead yet: wait a few polls (none after the last).
      if (!last && ++unnamed_polls_ < kPollsToDie) return;
      if (!unnamed_tree_only_) {
        unnamed_ = 0;  // qprof's cgroup holds other processes: not said to be the tree's
        return;
      }
    }
    unnamed_polls_ = 0;
    --unnamed_;
    add(std::move(kill), now, out, notices);
  }
}

void OomWatch::add(trace::OomKill kill, const Now& now, trace::Writer& out, Notices& notices) {
  const Seconds at_poll = now.clock.unix_at(now.mono_ns);
  kill.t = std::min(kill.t, at_poll);
  if (kill.pid > 0) kill.role = kill.pid == now.command ? "command" : "worker";
  if (kill.name.empty()) {
    for (const Member& m : now.tree.members()) {
      if (m.pid == kill.pid) kill.name = comm_of(m);
    }
  }
  if (!kill.held) {
    for (const Member& m : now.tree.members()) {
      if (m.pid == kill.pid) kill.held = m.rss;
    }
    if (const ProcTree::Departed* d = kill.held ? nullptr : now.tree.departed_member(kill.pid); d && d->peak > 0) {
      kill.held = d->peak;
    }
  }
  // The tightest limit in force where the log did not name the cgroup (the counts' kills).
  if (!kill.limit && kill.scope != "machine") kill.limit = now.limit;
  kill.tree = now.tree_figure;
  kill.stage = now.stage_at ? now.stage_at(kill.t) : std::string();
  out.oom_kill(kill);
  notices.warn(trace::describe_oom_kill(kill, std::nullopt));
  kills_.push_back(std::move(kill));
}

}  // namespace qprof::record::session
