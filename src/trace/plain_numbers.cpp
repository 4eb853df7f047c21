// The numbers qprof and mprof write, parsed fast: plain decimals, and whole MEM lines without
// splitting fields (most lines of every trace). Anything irregular is left to reader.cpp's
// general path, which also words the errors.
#include "plain_numbers.hpp"

#include <cstdint>
#include <cstring>

namespace qprof::dat::detail {
namespace {

// The digits of up to 8 characters read as one 64-bit word (SWAR): how many of them lead the
// word, and their value. A trace is mostly digits; this takes 8 of them in a few instructions.
constexpr std::uint64_t kZeros = 0x3030303030303030ULL;
[[gnu::always_inline]] inline unsigned leading_digits(std::uint64_t word) {
  const std::uint64_t high = word & 0xF0F0F0F0F0F0F0F0ULL;
  const std::uint64_t plus6 = (word + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL;
  std::uint64_t off = (high ^ kZeros) | (plus6 ^ kZeros);  // a nibble set where a byte is no digit
  off |= off >> 2;
  off |= off >> 1;
  off &= 0x1010101010101010ULL;
  return off == 0 ? 8 : static_cast<unsigned>(__builtin_ctzll(off)) / 8;
}
[[gnu::always_inline]] inline std::uint64_t digits_value(std::uint64_t word, unsigned n) {
  if (n == 0) return 0;
  std::uint64_t x = (word - kZeros) << (8 * (8 - n));  // leading zeros in place of the rest
  x = x * 10 + (x >> 8);
  return (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
          (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
}

// A run of digits at p (at most `max` of them), advancing p past it. `limit` is how far the
// buffer may be read (beyond the line: its newline at least, so the run stops there).
[[gnu::always_inline]] inline std::uint64_t scan_digits(const char*& p, const char* limit, unsigned max, unsigned& count) {
  std::uint64_t value = 0;
  count = 0;
  while (count <= max) {
    if (limit - p >= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      const unsigned n = leading_digits(word);
      static constexpr std::uint64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
      value = value * kPow10[n] + digits_value(word, n);
      p += n;
      count += n;
      if (n < 8) break;
    } else {
      if (p == limit || static_cast<unsigned char>(*p - '0') >= 10) break;
      value = value * 10 + static_cast<unsigned>(*p++ - '0');
      ++count;
    }
  }
  return value;
}

constexpr std::uint64_t kPow10Int[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
constexpr double kPow10Double[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

// whole.fraction (`decimals` digits of it) as the nearest double, the value from_chars (and
// Python's float(), mprof's reader) gives: with at most 15 digits in all, the digits as one
// integer and the power of ten are both exact doubles, and one correctly rounded division of
// them is the correctly rounded decimal. (whole + fraction / 10^d rounds twice and is off by
// an ulp about once in 2000 numbers of 9 decimals.)
[[gnu::always_inline]] inline double exact_decimal(std::uint64_t whole, std::uint64_t fraction, unsigned decimals) {
  return static_cast<double>(whole * kPow10Int[decimals] + fraction) / kPow10Double[decimals];
}

// plain_decimal over a pointer that it advances to the first character after the number: the
// MEM fast path's parser, with no string_view built per field.
[[gnu::always_inline]] inline bool scan_plain_decimal(const char*& p, const char* limit, double& out) {
  unsigned digits = 0;
  const std::uint64_t whole = scan_digits(p, limit, 15, digits);
  if (digits == 0 || digits > 15) return false;  // beyond 15 digits a double is not exact
  if (p == limit || *p != '.') {
    out = static_cast<double>(whole);
    return true;
  }
  ++p;
  unsigned decimals = 0;
  const std::uint64_t fraction = scan_digits(p, limit, 9, decimals);
  if (decimals == 0 || decimals > 9 || digits + decimals > 15) return false;
  out = exact_decimal(whole, fraction, decimals);
  return true;
}

}  // namespace

// Digits, optionally a point and up to 9 more, 15 digits at most: what qprof and mprof write
// (%.6f, %.4f). Parsed here at about twice the speed of from_chars, to the same double, and
// from_chars stays the path for every other form.
bool plain_decimal(std::string_view w, double& out) {
  std::size_t i = 0;
  std::uint64_t whole = 0;
  for (; i < w.size() && w[i] >= '0' && w[i] <= '9'; ++i) {
    if (i == 15) return false;  // beyond what a double holds exactly
    whole = whole * 10 + static_cast<std::uint64_t>(w[i] - '0');
  }
  if (i == 0) return false;
  if (i == w.size()) {
    out = static_cast<double>(whole);
    return true;
  }
  if (w[i] != '.' || w.size() - i - 1 > 9 || w.size() - i - 1 == 0) return false;
  std::uint64_t fraction = 0;
  for (std::size_t k = i + 1; k < w.size(); ++k) {
    if (w[k] < '0' || w[k] > '9') return false;
    fraction = fraction * 10 + static_cast<std::uint64_t>(w[k] - '0');
  }
  if (w.size() - 1 > 15) return false;  // more digits than a double holds exactly: from_chars
  out = exact_decimal(whole, fraction, static_cast<unsigned>(w.size() - i - 1));
  return true;
}

// "MEM <MiB> <time>" as qprof and mprof write it (one space, plain decimals): most lines of
// every trace, parsed without splitting fields. Anything else takes the general path, which
// also words the errors.
// `limit`: the end of the readable buffer around the line (see scan_digits).
bool fast_mem_line(std::string_view line, const char* limit, Visitor& v) {
  if (line.size() < 7 || std::memcmp(line.data(), "MEM ", 4) != 0) return false;
  const char* p = line.data() + 4;
  const char* end = line.data() + line.size();
  if (limit == end) return false;  // nothing after the line to stop a run of digits: general path
  double mib = 0, t = 0;
  if (!scan_plain_decimal(p, limit, mib) || p >= end || *p != ' ') return false;
  ++p;
  if (!scan_plain_decimal(p, limit, t) || p != end) return false;
  MemSample s;
  s.bytes = from_mib(mib);
  s.t = t;
  v.mem(s);
  return true;
}

}  // namespace qprof::dat::detail
