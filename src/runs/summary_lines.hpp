// SPDX-License-Identifier: Apache-2.0
// The lines of a run's summary: "qprof:   <what, padded>  <text>", each text wrapped under
// itself to the width of the terminal it is read in. The short summary, -v's whole block and the
// run's trend line are written with it, so that all of them wrap alike.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qprof::runs {

class SummaryLines {
 public:
  // `columns`: the terminal's (80 into a pipe or a file). Below 40 the text column leaves too
  // little room to read, so lines wrap at 40 there.
  explicit SummaryLines(std::size_t columns);

  // The first line: "qprof: COMMAND", cut with "..." to one line.
  void command(std::string_view command_utf8);
  // One figure: its name padded to a column, its text wrapped at spaces under itself; a number
  // and its unit ("3.22 MiB", "51 %") stay on one line, a word wider than a line (a long path)
  // stays whole.
  void line(std::string_view what_utf8, std::string_view text_utf8);
  const std::string& text() const { return out_; }

 private:
  std::size_t columns_;
  std::string out_;
};

}  // namespace qprof::runs
