// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/probes.hpp"

#include <algorithm>

#include "qprof/common/proc_parse.hpp"

namespace qprof::record {

void read_rss(Member& m, Bytes page_size) {
  char buf[128];
  const ssize_t n = m.statm.read(buf, sizeof buf);
  if (n <= 0) {
    m.gone = true;
    m.rss = 0;
    return;
  }
  const auto pages = proc::parse_statm_resident_pages(std::string_view(buf, static_cast<std::size_t>(n)));
  m.rss = pages ? *pages * page_size : 0;
  m.hwm = std::max(m.hwm, m.rss);  // Σ HWM must stay above every sampled sum
}

}  // namespace qprof::record
