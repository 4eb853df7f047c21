// SPDX-License-Identifier: Apache-2.0
// Memory and time units, one place for every output: parsing sizes ("4GiB"), choosing and
// naming display units, and the short human forms the summaries use.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "qprof/common/types.hpp"

namespace qprof {

// Display units: binary (KiB, MiB, GiB: mprof's MiB) and decimal (KB, MB, GB: Quark's "mb").
enum class Unit { B, KiB, MiB, GiB, KB, MB, GB };

std::optional<Unit> parse_unit(std::string_view name);  // case-sensitive: "MiB", "GB", …
// A unit a user names for output (--unit): parse_unit's names, and K, M, G in either case,
// binary as in sizes ("4G" is 4 GiB). nullopt for anything else.
std::optional<Unit> parse_display_unit(std::string_view name);
std::string_view unit_name(Unit u);
double unit_bytes(Unit u);  // bytes in one unit
inline double in_unit(Bytes b, Unit u) { return static_cast<double>(b) / unit_bytes(u); }
// A byte count held in a double, back as Bytes, rounded and saturated: 0 below 0 (and for NaN),
// 2^64 - 1 from 2^64 on. A trace read from a file may say anything, and the plain cast out of
// range is undefined behaviour.
Bytes bytes_from_double(double v);
// MiB below 10 GiB, GiB from there: what a chart axis of values up to `largest` reads best in.
// With `smallest` KiB (rates, say), values below 1 MiB read in KiB.
Unit auto_unit(Bytes largest, Unit smallest = Unit::MiB);

// "4GiB", "4 GiB", "4G", "4096M", "512MB", "1.5GiB", "512" (MiB, mprof's unit), "4096B". K, M, G,
// T alone are binary (as ulimit, docker and systemd read them). nullopt for anything else, negative or
// overflowing values included. Every option taking a size parses it here.
std::optional<Bytes> parse_size(std::string_view text);
// "10ms", "0.5s", "0.5" (seconds), "1m" and "1min" (a minute), "2h", "7d", "2w", "250us". nullopt
// for anything else, negative values included. Every option taking a duration parses it here.
std::optional<Seconds> parse_duration(std::string_view text);
// The number and the unit a duration was written with ("" for a bare number, "m", "min"…), where
// parse_duration reads it: what it was asked in, for who needs more than the seconds.
std::optional<std::pair<double, std::string>> duration_parts(std::string_view text);
// What the two accept, for the error that refuses a value: "a size: 4G or 4GiB …".
std::string size_forms();
std::string duration_forms();

// "812.3 MiB", "1.52 GiB": binary units, three significant figures or more.
std::string human_bytes(Bytes bytes);
// "12.3 s", "850 ms", "2 min 5 s".
std::string human_seconds(Seconds s);

}  // namespace qprof
