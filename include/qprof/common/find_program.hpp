// SPDX-License-Identifier: Apache-2.0
// Where a program is, as a shell finds it: the one search used to start the profiled command,
// gnuplot and the GPU tools. Boost.Process's search_path does the search.
#pragma once

#include <string>

namespace qprof {

// `name` itself when it holds a '/' and is an executable file; otherwise the first executable
// regular file `name` in the colon-separated folders `dirs` (PATH when empty; the shells' default
// folders when PATH is unset), an empty entry meaning the current folder. "" when there is none.
std::string find_program(const std::string& name, const std::string& dirs = "");

}  // namespace qprof
