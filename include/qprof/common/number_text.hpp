// SPDX-License-Identifier: Apache-2.0
// Numbers as text for the machine formats (CSV, JSON, YAML): one formatter for every stage,
// exact and bounded at any magnitude, built on std::to_chars with its errors handled.
#pragma once

#include <string>
#include <string_view>

namespace qprof {

// The shortest text that reads back as the same double. Whole numbers below 1e21 in plain digits
// ("961000000", "9223372036854775808": the exact bytes a reader of a size expects, where the
// shortest form is "9.61e+08"); from 1e21 on, and for fractions, the shortest form ("1e+300",
// "0.5", "1e-07"). 1e21 is where JavaScript's Number.prototype.toString switches too. NaN and
// the infinities have no number in CSV or JSON: they are `not_finite` ("" for a CSV cell, "null"
// for JSON), a choice each format makes, never a made-up 0.
std::string number_text(double v, std::string_view not_finite);

// `v` in fixed notation rounded to `decimals` (0..17) places, trailing zeros trimmed but one kept
// after the point, so that YAML reads a float: "1523.4", "0.0", "2.0", and 1e300 as its 301
// digits with ".0" (fixed notation grows with the magnitude: the text is as long as it must be,
// never cut). -0 is "0.0". NaN and the infinities are `not_finite`.
std::string fixed_text(double v, int decimals, std::string_view not_finite);

// A YAML float, for every YAML qprof writes: fixed_text, with YAML's own words for what has no
// digits (".inf", "-.inf", ".nan"). yaml-cpp's own doubles carry 17 digits (1523.4000000000001)
// and write 0.0 as "0", which YAML reads back as an integer.
std::string yaml_float(double v, int decimals);

// One double through a printf format of the caller's ("%.2f s", "%g"), for the words and tables
// people read: the whole text at any magnitude, never cut at a buffer's end. `format` is a
// literal that takes exactly one double.
std::string printf_number(const char* format, double v);

}  // namespace qprof
