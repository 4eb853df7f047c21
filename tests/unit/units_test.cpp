// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/units.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace qprof {
namespace {

TEST(Units, ParseSize) {
  EXPECT_EQ(parse_size("4GiB"), 4ull << 30);
  EXPECT_EQ(parse_size("4 GiB"), 4ull << 30);
  EXPECT_EQ(parse_size("1.5GiB"), 3ull << 29);
  EXPECT_EQ(parse_size("512MB"), 512000000ull);
  EXPECT_EQ(parse_size("64KiB"), 65536ull);
  EXPECT_EQ(parse_size("2KB"), 2000ull);
  EXPECT_EQ(parse_size("1048576B"), 1048576ull);
  EXPECT_EQ(parse_size("0"), 0ull);
  for (const char* bad : {"", "GiB", "-1GiB", "4 gigs", "4gib", "1e400", "nan", "4GiB extra", "99999999999GB"}) {
    EXPECT_EQ(parse_size(bad), std::nullopt) << bad;
  }
}

// mprof's unit: a bare number is MiB, whole or not ("--max-peak 50" is 50 MiB, never 50 bytes).
TEST(Units, ParseSizeBareNumberIsMiB) {
  EXPECT_EQ(parse_size("50"), 50ull << 20);
  EXPECT_EQ(parse_size("1.5"), 3ull << 19);
  EXPECT_EQ(parse_size(" 512 "), 512ull << 20);
  EXPECT_EQ(parse_size("17592186044416"), std::nullopt) << "2^44 MiB overflows 64 bits";
}

// The display units' one-letter forms, read as the sizes' are: binary.
TEST(Units, ParseDisplayUnit) {
  EXPECT_EQ(parse_display_unit("G"), Unit::GiB);
  EXPECT_EQ(parse_display_unit("m"), Unit::MiB);
  EXPECT_EQ(parse_display_unit("K"), Unit::KiB);
  EXPECT_EQ(parse_display_unit("GB"), Unit::GB);
  EXPECT_EQ(parse_display_unit("MiB"), Unit::MiB);
  for (const char* bad : {"", "T", "GG", "gib", "X"}) EXPECT_EQ(parse_display_unit(bad), std::nullopt) << bad;
}

// ulimit's, docker's and systemd's habits: K, M, G, T alone are binary, in either case.
TEST(Units, ParseSizeOneLetterUnits) {
  EXPECT_EQ(parse_size("4G"), 4ull << 30);
  EXPECT_EQ(parse_size("4g"), 4ull << 30);
  EXPECT_EQ(parse_size("4096M"), 4ull << 30);
  EXPECT_EQ(parse_size("512k"), 512ull << 10);
  EXPECT_EQ(parse_size("1T"), 1ull << 40);
  EXPECT_EQ(parse_size("1TiB"), 1ull << 40);
  EXPECT_EQ(parse_size("2TB"), 2000000000000ull);
  EXPECT_EQ(parse_size("1.5G"), 3ull << 29);
  for (const char* bad : {"4X", "4GG", "G", "-4G", "4 G B"}) EXPECT_EQ(parse_size(bad), std::nullopt) << bad;
}

TEST(Units, ParseDuration) {
  EXPECT_DOUBLE_EQ(*parse_duration("10ms"), 0.01);
  // Exactly the double a user compares with: -i's floor of 0.0001 s accepts 100us as it does 0.1ms.
  EXPECT_EQ(*parse_duration("100us"), 0.0001);
  EXPECT_EQ(*parse_duration("0.1ms"), 0.0001);
  EXPECT_DOUBLE_EQ(*parse_duration("0.5s"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_duration("0.5"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_duration("1m"), 60);
  EXPECT_DOUBLE_EQ(*parse_duration("1min"), 60);
  EXPECT_DOUBLE_EQ(*parse_duration("2h"), 7200);
  EXPECT_DOUBLE_EQ(*parse_duration("7d"), 7 * 86400);
  EXPECT_DOUBLE_EQ(*parse_duration("2w"), 14 * 86400);
  EXPECT_DOUBLE_EQ(*parse_duration("250us"), 250e-6);
  EXPECT_DOUBLE_EQ(*parse_duration(" 3 s "), 3);
  for (const char* bad : {"", "ms", "-1s", "10 parsecs", "1e400", "nan", "5ss", "1mo"}) {
    EXPECT_EQ(parse_duration(bad), std::nullopt) << bad;
  }
}

// The error that refuses a value lists what is accepted: the units themselves.
TEST(Units, FormsNameEveryUnit) {
  for (const char* u : {"4G", "4GiB", "4096M", "K M G T", "KB MB GB TB"})
    EXPECT_NE(size_forms().find(u), std::string::npos) << u;
  for (const char* u : {"10ms", "0.5s", "1m", "us ms s m min h d w"}) {
    EXPECT_NE(duration_forms().find(u), std::string::npos) << u;
  }
}

TEST(Units, NamesAndConversions) {
  EXPECT_EQ(parse_unit("MiB"), Unit::MiB);
  EXPECT_EQ(parse_unit("mib"), std::nullopt);
  EXPECT_EQ(unit_name(Unit::GB), "GB");
  EXPECT_DOUBLE_EQ(in_unit(3ull << 20, Unit::MiB), 3.0);
  EXPECT_DOUBLE_EQ(in_unit(2000000, Unit::MB), 2.0);
  EXPECT_EQ(auto_unit(9ull << 30), Unit::MiB);
  EXPECT_EQ(auto_unit(10ull << 30), Unit::GiB);
  EXPECT_EQ(auto_unit(1000, Unit::KiB), Unit::KiB);
  EXPECT_EQ(auto_unit(1000), Unit::MiB);
  EXPECT_EQ(auto_unit(2ull << 20, Unit::KiB), Unit::MiB);
}

TEST(Units, BytesFromADoubleSaturateInsteadOfOverflowing) {
  EXPECT_EQ(bytes_from_double(1536.4), 1536u);
  EXPECT_EQ(bytes_from_double(-5), 0u);
  EXPECT_EQ(bytes_from_double(std::nan("")), 0u);
  EXPECT_EQ(bytes_from_double(1e30), ~Bytes{0});
  EXPECT_EQ(bytes_from_double(18446744073709551616.0), ~Bytes{0});  // 2^64
  EXPECT_EQ(bytes_from_double(9007199254740992.0), Bytes{1} << 53);
}

TEST(Units, HumanForms) {
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1536 * 1024), "1.50 MiB");
  EXPECT_EQ(human_bytes(812ull << 20), "812.0 MiB");
  EXPECT_EQ(human_bytes(3ull << 30), "3.00 GiB");
  EXPECT_EQ(human_seconds(0.5), "500 ms");
  EXPECT_EQ(human_seconds(12.34), "12.3 s");
  EXPECT_EQ(human_seconds(125), "2 min 5 s");
  EXPECT_EQ(human_seconds(0.0004), "400 µs");
  EXPECT_EQ(human_seconds(0), "0 s") << "the start: a peak at the first sample";
  EXPECT_EQ(human_seconds(4e-7), "0 s");
  EXPECT_EQ(human_seconds(6e-7), "1 µs");
}

// A figure is printed in the unit it rounds to: never "1024.0 KiB" or "1e+03 ms".
TEST(Units, HumanFiguresAtTheEdgeOfTheirUnit) {
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1024), "1.00 KiB");
  EXPECT_EQ(human_bytes(1048470), "1023.9 KiB");
  EXPECT_EQ(human_bytes(1048540), "1.00 MiB");
  EXPECT_EQ(human_bytes(10483000), "10.0 MiB");
  EXPECT_EQ(human_bytes(10480000), "9.99 MiB");
  EXPECT_EQ(human_bytes((1ull << 40) + (1ull << 39)), "1536.0 GiB") << "GiB is the ladder's top";
  EXPECT_EQ(human_seconds(0.9994), "999 ms");
  EXPECT_EQ(human_seconds(0.9996), "1 s");
  EXPECT_EQ(human_seconds(0.0009994), "999 µs");
  EXPECT_EQ(human_seconds(0.0009996), "1 ms");
}

// Durations read from a trace can be anything: no integer cast overflows (it did past 7.7e12 s).
TEST(Units, HumanSecondsOfAbsurdDurations) {
  EXPECT_EQ(human_seconds(7200), "2 h 0 min");
  EXPECT_EQ(human_seconds(172799), "47 h 59 min") << "hours up to two days: a long training run";
  EXPECT_EQ(human_seconds(172800), "2 d 0 h");
  EXPECT_EQ(human_seconds(7.7e12), "8.91e+07 d");
  EXPECT_EQ(human_seconds(1e300), "1.16e+295 d");
  EXPECT_EQ(human_seconds(-125), "-2 min 5 s");
  EXPECT_EQ(human_seconds(std::numeric_limits<double>::infinity()), "inf d");
  EXPECT_EQ(human_seconds(std::nan("")), "? s");
  EXPECT_EQ(human_seconds(8.9e8), "10300 d 22 h");
}

}  // namespace
}  // namespace qprof
