// SPDX-License-Identifier: Apache-2.0
// One pass of Σ PSS over the tree, put together from each member's smaps_rollup and its resident
// sizes by kind (/proc/PID/status: RssAnon, RssFile, RssShmem) read just before the pass's first
// rollup and just after its last.
//
// A pass reads one process after another. A page whose sharing changes meanwhile (a worker maps
// a shared buffer its parent filled, or drops it) is counted at its old share in a process read
// before the change and at its new one in a process read after: the sum overshoots, up to 175 MiB
// for 100 MiB shared by four processes that map it while the pass runs. The truth at every
// moment is the pages once. What such a change can add is bounded by what the members' resident
// sizes moved during the pass, in pages they share: half a page per page mapped or dropped. Only
// a member read after another can overshoot by mapping, only one read before another by dropping;
// a member's new anonymous pages are its own and add nothing. A pass that moved more than a
// little is read again (what it added or left out), and the reading that moved least is kept, its
// bound taken off.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "qprof/common/proc_parse.hpp"
#include "qprof/common/units.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::record {

// What /proc/PID/status says a process holds, by kind.
struct ResidentKinds {
  Bytes anon = 0, file = 0, shmem = 0;
  Bytes total() const { return anon + file + shmem; }
};

// One member's reading in a pass.
struct PssReading {
  proc::Rollup rollup;
  std::optional<ResidentKinds> before;  // before the pass's first rollup; nullopt: not read
  std::optional<ResidentKinds> after;   // after its last: nullopt or nothing held once it left
  // Right after its own rollup; nullopt: not read (what it left out then counts over the whole
  // pass).
  std::optional<ResidentKinds> at = std::nullopt;
  // Forked during the pass, after the members read before it (found among their children once
  // they were read): it was read after them all. Its parent read before the fork counted the
  // pages they now share whole; read after, at the new share. Either way the most it can have
  // added is its share of the pages it shares (Pss − USS), which is taken off, and the pass is
  // read again with it from the start.
  bool joined = false;
};

struct PssPass {
  trace::PssSample sum;  // the bound taken off; `t` is the caller's
  // The most a change of sharing during the pass can have added to the members' Σ PSS, and of it
  // to their anonymous and shared memory (the unreclaimable part).
  Bytes bound = 0, unreclaimable_bound = 0;
  // The most a change of sharing during the pass can have left out of the sum: a member that
  // dropped pages before its own rollup (members read before it counted them shared with it) or
  // mapped pages after it (members read after it count them shared with it), of file pages and
  // shared memory, at most what those members share. Not added back: it says how far the
  // reading is from a still one.
  Bytes missed = 0;
  // Anonymous pages are shared only between processes that forked one another, all of them in the
  // tree: read at one moment, the members' Σ Pss_Anon counts each of their anonymous pages once,
  // and is never below one member's anonymous memory. How far it fell short: a sharer was not
  // read (forked or gone during the pass). Not part of `missed`: the floor below holds the sum up,
  // and the sampler reads such a pass again once, its children looked for on every thread.
  Bytes anon_gap = 0;
  // Shared memory (MAP_SHARED, /dev/shm, SysV) may also be shared with processes outside the tree
  // (another job's segment): no floor. But where the members' Σ Pss_Shmem is below one member's
  // RssShmem (beyond their KiB roundings), a sharer was not read: in the tree, a worker just
  // forked that maps its parent's buffer (its parent's and siblings' shares fall, and neither
  // moved), which the sampler looks for once; else one outside.
  Bytes shmem_gap = 0;
  std::size_t counted = 0;  // members whose reading is in the sum
  // How far the reading is from a still one, either way.
  Bytes motion() const { return bound + missed; }
  // How far it is short of what one member holds: an unread sharer.
  Bytes gap() const { return anon_gap + shmem_gap; }
  // Moved enough to be read again: a motion over 1 MiB and over 1 % of the sum (the step of a new
  // Σ RSS high).
  bool moved() const;
};

// What the sampler knows of the tree beyond the readings.
struct PassTree {
  // The tree began with an exec (qprof run), so every process that shares its anonymous pages is
  // in it, and the sum is never below one member's anonymous memory; an attached tree's root may
  // share them with a parent outside it (a forked worker), and gets no such floor.
  bool own = true;
  // A member read by the reading before could not be read now: exiting, it still unmaps its pages,
  // and the shares of shared memory it held are the tree's, so a gap there is no sign of a sharer
  // outside it.
  bool member_left = false;
};

// The readings in the order they were taken. A member that left during the pass is left out but
// for the last one read (its share went to members read before it, whose figures stand); the sum
// is then the tree after it left.
PssPass assemble_pss_pass(std::span<const PssReading> readings, PassTree tree = {});

}  // namespace qprof::record
