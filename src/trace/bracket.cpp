// SPDX-License-Identifier: Apache-2.0
#include "qprof/trace/bracket.hpp"

#include <algorithm>

namespace qprof::trace {

PeakBracket make_bracket(const BracketInputs& in) {
  PeakBracket b;
  b.lower = in.kernel_process;
  if (in.hwm_sum) {
    Bytes upper = *in.hwm_sum;
    for (const auto& f : {in.kernel_process, in.sampled_rss, in.sampled_pss}) {
      if (f) upper = std::max(upper, *f);
    }
    b.upper = upper;
  }
  return b;
}

std::vector<std::string> bracket_violations(const PeakBracket& b, const BracketInputs& in) {
  std::vector<std::string> out;
  if (b.lower && b.upper && *b.lower > *b.upper) out.push_back("lower bound above upper bound");
  if (b.upper) {
    if (in.sampled_rss && *in.sampled_rss > *b.upper) out.push_back("sampled RSS peak above upper bound");
    if (in.sampled_pss && *in.sampled_pss > *b.upper) out.push_back("sampled PSS peak above upper bound");
  }
  return out;
}

}  // namespace qprof::trace
