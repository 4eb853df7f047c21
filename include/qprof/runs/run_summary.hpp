// SPDX-License-Identifier: Apache-2.0
// The few lines `qprof run` says on stderr when it is done, formatted from what the run reported
// (record reports, the caller prints).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "qprof/common/speaker.hpp"
#include "qprof/record/session.hpp"

namespace qprof::runs {

// The request to paste for a scheduler (Slurm's --mem=…, with its rule); nullopt without a
// footprint.
std::optional<std::string> request_text(const record::RunReport& report);
// Said where the footprint came out well below the largest single process's own peak
// (ru_maxrss), which no true footprint can be, with the likely reason; nullopt where it agrees.
std::optional<std::string> footprint_below_largest_process(const record::RunReport& report);
// How an attached process's run ended, in words both summaries use: its status where qprof saw it,
// "runs on" where the attach stopped first (--timeout, a signal), unknown where its parent reaped it.
std::string attached_end_words(const record::RunReport& report);
// Every figure of the run (-v), its lines wrapped to `columns` (the terminal's; 80 into a pipe).
std::string format_summary(const record::RunReport& report, std::size_t columns = 80);
// The default: the footprint, the GPU peak, how the command ended, Σ RSS as mprof counts it,
// one line of what to act on, and the trace; at most about 8 lines.
std::string format_short_summary(const record::RunReport& report, std::size_t columns = 80);
// One more line of the summary, said after it ("trend", from the trace read back), formatted and
// wrapped as the summary's own.
std::string summary_line(std::string_view what, std::string_view text, std::size_t columns);
// The summary as `qprof run` says it when the command ran: the short one, every figure with -v,
// nothing with -q.
void say_summary(const record::RunOptions& options, const record::RunReport& report, const Speaker& speaker);

}  // namespace qprof::runs
