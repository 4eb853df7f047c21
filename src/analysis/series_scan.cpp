// SPDX-License-Identifier: Apache-2.0
// A reduced trace's file read again for the figures that need every sample of a series.
#include "series_scan.hpp"

#include <algorithm>

#include "qprof/analysis/dirs.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/trace/piece_reader.hpp"
#include "series.hpp"

namespace qprof::analysis::detail {
using trace::CgroupSample;
using trace::DirSample;
using trace::GpuSample;
using trace::MemKindsSample;
using trace::MemSample;
using trace::PssSample;
using trace::Trace;

namespace {

// Feeds `each` the samples of one metric's series in file order, as series_as_written makes them
// from a whole trace: its row's picks, line by line.
class SeriesVisitor : public trace::Visitor {
 public:
  SeriesVisitor(const Trace& t, Metric m, const SampleSink& each)
      : picks_(metric_row(m.kind).picks), context_(pick_context(t, m)), each_(each) {}

  void mem(const MemSample& s) override { give(s, picks_.mem); }
  void hwm(const MemSample& s) override { give(s, picks_.hwm); }
  void pss(const PssSample& s) override { give(s, picks_.pss); }
  void cgroup(const CgroupSample& s) override { give(s, picks_.cgroup); }
  void kinds(const MemKindsSample& s) override { give(s, picks_.kinds); }
  void dir(const DirSample& s) override { give(s, picks_.dir); }
  void gpu(const GpuSample& s) override {
    if (picks_.gpu) gpu_.add(s, each_);
  }
  void finish() { gpu_.finish(each_); }

 private:
  template <class Sample>
  void give(const Sample& s, Pick<Sample> pick) {
    if (!pick) return;
    if (const auto v = pick(s, context_)) each_({s.t, *v});
  }

  SamplePicks picks_;
  PickContext context_;
  const SampleSink& each_;
  GpuTotals gpu_;
};

// The records, to each metric's visitor in turn.
class FanOut : public trace::Visitor {
 public:
  FanOut(std::vector<SeriesVisitor>& to, const std::vector<Metric>& metrics) : to_(to) {
    for (Metric m : metrics) lines_read(metric_row(m.kind), [this](std::string_view kind) { reads_.push_back(kind); });
  }
  // The file was read whole once already: lines of other kinds need not be parsed again (MEM
  // lines are given whatever this says).
  bool skips(std::string_view kind) const override {
    return std::find(reads_.begin(), reads_.end(), kind) == reads_.end();
  }
  void mem(const MemSample& s) override {
    for (auto& v : to_) v.mem(s);
  }
  void hwm(const MemSample& s) override {
    for (auto& v : to_) v.hwm(s);
  }
  void pss(const PssSample& s) override {
    for (auto& v : to_) v.pss(s);
  }
  void cgroup(const CgroupSample& s) override {
    for (auto& v : to_) v.cgroup(s);
  }
  void kinds(const MemKindsSample& s) override {
    for (auto& v : to_) v.kinds(s);
  }
  void dir(const DirSample& s) override {
    for (auto& v : to_) v.dir(s);
  }
  void gpu(const GpuSample& s) override {
    for (auto& v : to_) v.gpu(s);
  }

 private:
  std::vector<SeriesVisitor>& to_;
  std::vector<std::string_view> reads_;  // the kinds its metrics read
};

}  // namespace

void scan_records(const Trace& t, trace::Visitor& visitor) {
  trace::parse_file_prefix(t.reduced ? t.reduced->file : t.source, t.reduced ? t.reduced->bytes : 0, visitor);
}

void scan_series(const Trace& t, const std::vector<Metric>& metrics, const IndexedSink& each) {
  if (!t.reduced) {
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      for (const MemSample& s : metric_series(t, metrics[i])) each(i, s);
    }
    return;
  }
  std::vector<SampleSink> sinks;
  for (std::size_t i = 0; i < metrics.size(); ++i) sinks.push_back([&each, i](const MemSample& s) { each(i, s); });
  std::vector<SeriesVisitor> series;
  series.reserve(metrics.size());
  for (std::size_t i = 0; i < metrics.size(); ++i) series.emplace_back(t, metrics[i], sinks[i]);
  FanOut all(series, metrics);
  scan_records(t, all);
  for (SeriesVisitor& v : series) v.finish();
}

struct SeriesPieces::Parts {
  Parts(const Trace& t, Metric m, SampleSink sink)
      : each(std::move(sink)),
        series{SeriesVisitor(t, m, each)},
        all(series, {m}),
        reader(t.reduced->file, t.reduced->bytes, all) {}
  SampleSink each;  // before the visitor that holds a reference to it
  std::vector<SeriesVisitor> series;
  FanOut all;
  trace::PieceReader reader;
  bool ended = false;
};

SeriesPieces::SeriesPieces(const Trace& t, Metric m, SampleSink each)
    : parts_(std::make_unique<Parts>(t, m, std::move(each))) {}

SeriesPieces::~SeriesPieces() = default;

bool SeriesPieces::next() {
  if (parts_->ended) return false;
  if (parts_->reader.next()) return true;
  parts_->series.front().finish();
  parts_->ended = true;
  return false;
}

}  // namespace qprof::analysis::detail
