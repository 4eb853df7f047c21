// SPDX-License-Identifier: Apache-2.0
// The YAML report in the layout of AMD Quark's quark_profile.yaml (shared/reference/
// quark_profile.sample.yaml), written with yaml-cpp:
//
//   memory_usage:             Start (first sample), one record per marker (its immediate
//     - step: "Start"         sample), End (last sample): timestamp, relative_time_secs,
//       …                     cpu_memory_mb, gpu_memory_mb, disk_read_mb, disk_write_mb
//   total_quantization_time_seconds, peak_memory_mb, gpu_peak_memory_mb,
//   total_disk_read_mb, total_disk_write_mb
//   missing: [...]            Quark keys written as 0.0 because the trace has no such series
//   qprof: {...}              everything else: peaks of every metric, stages, run facts
//
// "_mb" is MiB (2^20 bytes), as Quark's profiler and mprof compute it from psutil's RSS.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::report {

struct QuarkYamlOptions {
  // A run still going on (--yaml-stream): no End record yet, and `qprof: in_progress: true`.
  bool in_progress = false;
};

std::string quark_yaml(const trace::Trace& trace, const QuarkYamlOptions& options = {});

// --yaml-stream: keeps the YAML of a run current while it goes on. checkpoint() is called on the
// sampler thread after each checkpoint is flushed to the trace; it only wakes a thread of this
// object's own, which reads the trace back and rewrites the YAML. A rewrite costs a read of the
// whole trace, so the thread spends at most a tenth of its time on them: checkpoints that arrive
// during a rewrite or the pause after it are folded into the next one.
class QuarkYamlStream {
 public:
  QuarkYamlStream(std::string trace_path, std::string yaml_path);
  ~QuarkYamlStream();
  QuarkYamlStream(const QuarkYamlStream&) = delete;
  QuarkYamlStream& operator=(const QuarkYamlStream&) = delete;

  void checkpoint();  // cheap: a lock held for a flag, and a notify
  // Waits until every checkpoint asked so far is written, then stops the thread.
  void finish();
  // The trace became incomplete: no rewrite reads it from now on (one under way ends first).
  void abandon();
  std::size_t rewrites() const;
  std::vector<std::string> errors() const;  // why a rewrite failed (each reason once)

 private:
  void loop();

  std::string trace_path_;
  // The trace opened as it is named when the stream starts (before the command does): every
  // rewrite reads that file, wherever it is moved and whatever replaces its path meanwhile.
  int trace_fd_ = -1;
  std::string yaml_path_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;
  bool stop_ = false;
  std::size_t rewrites_ = 0;
  std::vector<std::string> errors_;
  std::thread thread_;
};

}  // namespace qprof::report
