// The few lines `qprof run` prints on stderr when it is done.
#pragma once

#include <string>

#include "qprof/run_session.hpp"

namespace qprof {

std::string format_summary(const RunReport& report);

// "812.3 MiB", "1.52 GiB": binary units with three significant figures or more.
std::string human_bytes(Bytes bytes);
// "12.3 s", "850 ms", "2 min 5 s".
std::string human_seconds(Seconds s);

}  // namespace qprof
