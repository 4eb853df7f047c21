// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/pss_pass.hpp"

#include <algorithm>
#include <vector>

namespace qprof::record {
namespace {

struct Moved {
  Bytes up = 0, down = 0;
};
Moved moved(Bytes before, Bytes after) { return after > before ? Moved{after - before, 0} : Moved{0, before - after}; }

// The pages of its reading it shares with another process.
Bytes shared_of(const PssReading& r) { return r.rollup.rss > r.rollup.uss ? r.rollup.rss - r.rollup.uss : 0; }

struct Floor {
  Bytes most = 0;  // the most of a kind of memory one member maps
  Bytes gap = 0;   // how far the members' Σ share of that kind is below `most`
};

// The floor is one member's anonymous pages alone, without the others' own pages: read at other
// moments, a member read before a fork counts as its own the pages its child, read after, maps.
Floor anon_floor(const std::vector<const PssReading*>& counted) {
  Floor f;
  Bytes pss_anon = 0;
  bool split = true;
  for (const PssReading* r : counted) {
    f.most = std::max(f.most, r->rollup.anon);
    pss_anon += r->rollup.pss_anon;
    split = split && r->rollup.has_split;
  }
  if (split && pss_anon < f.most) f.gap = f.most - pss_anon;
  return f;
}

// One member's resident shared memory (right after its rollup) against the members' Σ Pss_Shmem,
// past what the kernel's rounding of each to a KiB leaves out. No gap: the members' shares held
// all of that member's shared pages (a sharer outside the tree would have kept some), and the
// tree holds them whole at any moment, however the reading was spread over a worker mapping them.
Floor shmem_floor(const std::vector<const PssReading*>& counted) {
  Floor f;
  Bytes pss_shmem = 0;
  for (const PssReading* r : counted) {
    if (!r->rollup.has_split) return {};
    const std::optional<ResidentKinds>& sizes = r->at ? r->at : r->after;
    if (sizes) f.most = std::max(f.most, sizes->shmem);
    pss_shmem += r->rollup.pss_shmem;
  }
  if (pss_shmem + counted.size() * 1024 < f.most) f.gap = f.most - pss_shmem;
  return f;
}

// Where a member stands in the pass: first or last read, and the pages shared by it, by the
// members read before it and by those read after it.
struct Place {
  bool first, last;
  Bytes shared, shared_before, shared_after;
};

// What a member's mapping or dropping during the pass can have added (bound) or left out
// (missed).
void add_motion(PssPass& p, const PssReading& r, const Place& at) {
  const ResidentKinds before = r.before.value_or(ResidentKinds{}), after = *r.after;
  const Moved file = moved(before.file, after.file), shmem = moved(before.shmem, after.shmem);
  // Pages mapped count against the members read before this one (none for the first); pages
  // dropped against those read after it (none for the last). New anonymous pages are private;
  // anonymous pages dropped may have been shared since a fork.
  const bool first = at.first, last = at.last;
  const Bytes shared = at.shared, shared_before = at.shared_before, shared_after = at.shared_after;
  const Bytes anon_down = before.anon > r.after->anon ? before.anon - r.after->anon : 0;
  const Bytes up = first ? 0 : file.up + shmem.up, up_unreclaimable = first ? 0 : shmem.up;
  const Bytes down = last ? 0 : file.down + shmem.down + anon_down;
  const Bytes down_unreclaimable = last ? 0 : shmem.down + anon_down;
  // Of the pages it shares only: half a page each.
  p.bound += std::min(up + down, shared) / 2;
  p.unreclaimable_bound += std::min(up_unreclaimable + down_unreclaimable, shared) / 2;
  // What it left out: pages it mapped after its own rollup count against those read after it
  // (none for the last), pages it dropped before against those read before (none for the
  // first), each of the pages those members share only. Where the sizes right after its
  // rollup are unknown, the whole pass counts. Anonymous pages are left out: shared only
  // since a fork, while a heap that gives memory back would move every reading.
  const bool at_known = r.at && r.at->total() > 0;
  const ResidentKinds& mapped_from = at_known ? *r.at : before;
  const ResidentKinds& dropped_by = at_known ? *r.at : after;
  const Bytes mapped_after =
      last ? 0 : moved(mapped_from.file, after.file).up + moved(mapped_from.shmem, after.shmem).up;
  const Bytes dropped_before =
      first ? 0 : moved(before.file, dropped_by.file).down + moved(before.shmem, dropped_by.shmem).down;
  p.missed += (std::min(mapped_after, shared_after) + std::min(dropped_before, shared_before)) / 2;
}

}  // namespace

bool PssPass::moved() const {
  constexpr Bytes kFloor = Bytes{1} << 20;
  return motion() > kFloor && motion() * 100 > sum.pss;
}

PssPass assemble_pss_pass(std::span<const PssReading> readings, PassTree tree) {
  PssPass p;
  Bytes raw = 0, raw_unreclaimable = 0;
  bool split = false;
  // The members counted: one that exits during the pass hands its share of the pages it shared
  // to the others, and those read after it count that share again (workers that end one by one
  // made the footprint 14 MiB above the truth); left out, each share is at most what it is.
  std::vector<const PssReading*> counted;
  for (std::size_t i = 0; i < readings.size(); ++i) {
    const PssReading& r = readings[i];
    const bool left = !r.after || r.after->total() == 0;
    if (left && i + 1 < readings.size()) continue;
    counted.push_back(&r);
  }
  // What the members read before each one, and after it, share: the most a page it mapped or
  // dropped can have been counted at a wrong share in their readings.
  Bytes shared_total = 0;
  for (const PssReading* r : counted) shared_total += shared_of(*r);
  Bytes shared_so_far = 0;
  for (std::size_t k = 0; k < counted.size(); ++k) {
    const PssReading& r = *counted[k];
    const Bytes shared = shared_of(r);
    const Bytes shared_before = shared_so_far, shared_after = shared_total - shared_so_far - shared;
    shared_so_far += shared;
    raw += r.rollup.pss;
    p.sum.uss += r.rollup.uss;
    if (r.rollup.has_split) {
      split = true;
      raw_unreclaimable += r.rollup.pss_unreclaimable;
    }
    if (r.joined) {
      // Read after every other member, and sharing with them only since its fork: none read
      // after it, none read before it undercounted by its mapping.
      const Bytes share = r.rollup.pss > r.rollup.uss ? r.rollup.pss - r.rollup.uss : 0;
      p.bound += share;
      p.unreclaimable_bound += std::min(r.rollup.pss_unreclaimable, share);
      continue;
    }
    if (!r.after || r.after->total() == 0) continue;  // the last one read left: no member after it
    add_motion(p, r, {k == 0, k + 1 == counted.size(), shared, shared_before, shared_after});
  }
  p.counted = counted.size();
  const Floor anon = tree.own ? anon_floor(counted) : Floor{};
  const Floor shmem = shmem_floor(counted);
  p.anon_gap = anon.gap;
  p.shmem_gap = shmem.gap;
  // Never below what the members hold alone (their own pages count whole at any moment), nor
  // below one member's anonymous pages (every sharer of those is a member) and one member's
  // shared memory where no sharer outside the tree shows: the tree holds each of them whole. The
  // two are pages of different kinds: both at once. (The bound, the most a pass can have added,
  // takes more off where a worker maps pages shared by more than two.)
  // Exiting members (read the moment before and not now, or left during this reading) still unmap
  // their pages: a gap of shared memory then is theirs, not a sharer outside the tree.
  const bool shmem_held = shmem.gap == 0 || tree.member_left || counted.size() < readings.size();
  const Bytes held = anon.most + (shmem_held ? shmem.most : 0);
  p.sum.pss = std::max({raw > p.bound ? raw - p.bound : 0, p.sum.uss, held});
  if (split) {
    // Its overshoot is part of Σ PSS's: no more is taken off it than was taken off the sum.
    const Bytes off = std::min(p.unreclaimable_bound, raw > p.sum.pss ? raw - p.sum.pss : 0);
    p.sum.unreclaimable = std::min(std::max(raw_unreclaimable > off ? raw_unreclaimable - off : 0, held), p.sum.pss);
  }
  return p;
}

}  // namespace qprof::record
