// SPDX-License-Identifier: Apache-2.0
// The numbers qprof and mprof write, parsed fast: plain decimals, and whole MEM lines without
// splitting fields (most lines of every trace). Anything irregular is left to reader.cpp's
// general path, which also words the errors.
#include "plain_numbers.hpp"
#include "record_range.hpp"

#include <array>
#include <cstdint>
#include <iterator>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace qprof::trace::detail {
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
          (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
         32;
}

constexpr std::uint64_t kPow10Int[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
constexpr double kPow10Double[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

// A run of digits at p (at most `max` of them), advancing p past it. `limit` is how far the
// buffer may be read (beyond the line: its newline at least, so the run stops there).
[[gnu::always_inline]] inline std::uint64_t scan_digits(const char*& p, const char* limit, unsigned max,
                                                        unsigned& count) {
  std::uint64_t value = 0;
  count = 0;
  while (count <= max) {
    if (limit - p >= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      const unsigned n = leading_digits(word);
      value = value * kPow10Int[n] + digits_value(word, n);
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

// A plain decimal as its digits and how many of them follow the point: 1234.567890 is
// 1234567890 and 6. At most 15 digits (a double holds them exactly) and 9 decimals.
struct Decimal {
  std::uint64_t digits;
  unsigned decimals;
};

// The nearest double, the value from_chars (and Python's float(), mprof's reader) gives: with
// at most 15 digits in all, the digits as one integer and the power of ten are both exact
// doubles, and one correctly rounded division of them is the correctly rounded decimal.
// (whole + fraction / 10^d rounds twice and is off by an ulp about once in 2000 numbers of 9
// decimals.)
[[gnu::always_inline]] inline double to_double(Decimal d) {
  return static_cast<double>(d.digits) / kPow10Double[d.decimals];
}

// plain_decimal over a pointer that it advances to the first character after the number: the
// MEM fast path's parser, with no string_view built per field.
[[gnu::always_inline]] inline bool scan_plain_decimal(const char*& p, const char* limit, Decimal& out) {
  unsigned digits = 0;
  const std::uint64_t whole = scan_digits(p, limit, 15, digits);
  if (digits == 0 || digits > 15) return false;  // beyond 15 digits a double is not exact
  if (p == limit || *p != '.') {
    out = {whole, 0};
    return true;
  }
  ++p;
  unsigned decimals = 0;
  const std::uint64_t fraction = scan_digits(p, limit, 9, decimals);
  if (decimals == 0 || decimals > 9 || digits + decimals > 15) return false;
  out = {whole * kPow10Int[decimals] + fraction, decimals};
  return true;
}

// 5^d, and the largest byte count below which the integer rounding in mib_bytes is the one
// from_mib's double arithmetic gives (see there): 2^52 / 5^d.
constexpr std::uint64_t kPow5[] = {1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125};
constexpr auto kExactBelow = [] {
  std::array<std::uint64_t, std::size(kPow5)> below{};
  for (std::size_t d = 0; d < below.size(); ++d) below[d] = (std::uint64_t{1} << 52) / kPow5[d];
  return below;
}();

// q / 5^d and its remainder, by a constant divisor in each case (a multiplication, where a
// division by a table entry would cost as much as the floating-point path it replaces).
[[gnu::always_inline]] inline std::uint64_t div_pow5(std::uint64_t q, unsigned d, std::uint64_t& rem) {
  std::uint64_t r = 0;
  switch (d) {
    case 0:
      r = q;
      break;
    case 1:
      r = q / 5;
      break;
    case 2:
      r = q / 25;
      break;
    case 3:
      r = q / 125;
      break;
    case 4:
      r = q / 625;
      break;
    case 5:
      r = q / 3125;
      break;
    case 6:
      r = q / 15625;
      break;
    case 7:
      r = q / 78125;
      break;
    case 8:
      r = q / 390625;
      break;
    default:
      r = q / 1953125;
      break;
  }
  rem = q - r * kPow5[d];
  return r;
}

// A MiB figure as bytes, equal to from_mib(to_double(m)) (the general path's value) without
// its division and rounding call: the exact quotient digits * 2^20 / 10^d, rounded half away
// from zero. Why they agree: that quotient is digits * 2^(20-d) / 5^d, whose fraction is a
// multiple of 1/5^d and so never nearer a half than 1 / (2 * 5^d) (5^d is odd); the double
// path's value differs from it by at most half an ulp, under that distance while the result is
// below 2^52 / 5^d, so both round to the same integer there. Outside that range: false.
[[gnu::always_inline]] inline bool mib_bytes(Decimal m, std::uint64_t& bytes) {
  const unsigned shift = 20 - m.decimals;  // 2^20 / 10^d = 2^(20-d) / 5^d, d <= 9
  if ((m.digits >> (63 - shift)) != 0) return false;
  std::uint64_t rem = 0;
  const std::uint64_t whole = div_pow5(m.digits << shift, m.decimals, rem);
  if (whole >= kExactBelow[m.decimals]) return false;
  bytes = whole + (2 * rem > kPow5[m.decimals] ? 1 : 0);
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
  const unsigned decimals = static_cast<unsigned>(w.size() - i - 1);
  out = to_double(Decimal{whole * kPow10Int[decimals] + fraction, decimals});
  return true;
}

namespace {

#if defined(__SSE2__)
// Bit i set where byte i of the 48 at p is a digit (three SSE2 compares, no branch). A record
// of the fast form ends by its 39th byte (see mask_decimal), and a run of digits too long for
// it is seen to be so within the 48.
[[gnu::always_inline]] inline std::uint64_t digit_mask(const char* p) {
  const __m128i below = _mm_set1_epi8('0' - 1);
  const __m128i above = _mm_set1_epi8('9' + 1);
  const auto digits16 = [&](const char* q) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(c, below), _mm_cmpgt_epi8(above, c));
    return static_cast<std::uint64_t>(static_cast<std::uint16_t>(_mm_movemask_epi8(digit)));
  };
  return digits16(p) | digits16(p + 16) << 16 | digits16(p + 32) << 32;
}

// The value of the n (1..16) digits at q; reads 16 bytes from q.
[[gnu::always_inline]] inline std::uint64_t digits_at(const char* q, unsigned n) {
  std::uint64_t first, second;
  std::memcpy(&first, q, 8);
  std::memcpy(&second, q + 8, 8);
  if (n <= 8) return digits_value(first, n);
  return digits_value(first, 8) * kPow10Int[n - 8] + digits_value(second, n - 8);
}

// A plain decimal at offset o of the record (see scan_plain_decimal for the forms), its end in
// `o`. Where the digits are comes from the mask alone, so the two fields' conversions do not
// wait on each other (the scanning path reads a word, then finds where the next one starts).
// o stays below 4 + 16 + 1 + 16, so every read is inside the 64-byte window.
[[gnu::always_inline]] inline bool mask_decimal(const char* rec, std::uint64_t digit, std::size_t& o, Decimal& out) {
  // Shifted, then inverted: the bits brought in past the window read as no digit, so that the
  // count of trailing zeros is never taken of zero.
  const unsigned whole = static_cast<unsigned>(__builtin_ctzll(~(digit >> o)));
  if (whole == 0 || whole > 15) return false;
  if (rec[o + whole] != '.') {
    out = {digits_at(rec + o, whole), 0};
    o += whole;
    return true;
  }
  const unsigned decimals = static_cast<unsigned>(__builtin_ctzll(~(digit >> (o + whole + 1))));
  if (decimals == 0 || decimals > 9 || whole + decimals > 15) return false;
  out = {digits_at(rec + o, whole) * kPow10Int[decimals] + digits_at(rec + o + whole + 1, decimals), decimals};
  o += whole + 1 + decimals;
  return true;
}
#endif

[[noreturn, gnu::cold]] void refuse_mem(const MemSample& s) {
  if (auto why = time_out_of_range("MEM", "time", s.t)) throw BadRecord(*why);
  throw BadRecord(bytes_out_of_range("MEM", "memory (MiB)", s.bytes).value_or("MEM: out of range"));
}

// A record out of record_range.hpp's range is refused here, in the general path's words (the
// caller adds the line): one comparison each, on figures already made.
[[gnu::always_inline]] inline void emit_mem(Decimal mib, Decimal t, Visitor& v) {
  MemSample s;
  if (!mib_bytes(mib, s.bytes)) s.bytes = from_mib(to_double(mib));
  s.t = to_double(t);
  if (s.t >= kLatestTime || s.bytes > kMostBytes) [[unlikely]] {
    refuse_mem(s);
  }
  v.mem(s);
}

#if defined(__SSE2__)
// The form qprof and mprof both write, "MEM %.6f %.4f\n" with a Unix time of 10 digits:
// "MEM <1 to 8 digits>.<6> <10>.<4>\n". Only the MiB figure's whole part varies in length;
// everything after it is at a fixed place, checked against the mask at once and converted
// without looking for where each part ends (about 180 instructions a line against 300 through
// mask_decimal, callgrind). Its length, or 0 for any other record (then mask_decimal's).
[[gnu::always_inline]] inline std::size_t own_form_record(const char* rec, std::uint64_t digit, Visitor& v) {
  const unsigned whole = static_cast<unsigned>(__builtin_ctzll(~(digit >> 4)));
  if (whole == 0 || whole > 8) return 0;
  const std::size_t point = 4 + whole;  // the MiB figure's point; the record ends at point + 23
  // From the point on, 24 bytes: point, 6 digits, space, 10 digits, point, 4 digits, newline.
  constexpr std::uint64_t kShape = 0b0'1111'0'1111111111'0'111111'0;
  if (((digit >> point) & 0xFFFFFF) != kShape || rec[point] != '.' || rec[point + 7] != ' ' || rec[point + 18] != '.' ||
      rec[point + 23] != '\n') {
    return 0;
  }
  std::uint64_t word;
  std::memcpy(&word, rec + 4, 8);
  const std::uint64_t mib_whole = digits_value(word, whole);
  std::memcpy(&word, rec + point + 1, 8);
  const std::uint64_t mib_fraction = digits_value(word, 6);  // the 2 bytes after it shifted out
  const char* time = rec + point + 8;
  std::memcpy(&word, time, 8);
  const std::uint64_t time_high = digits_value(word, 8);
  // The time's last 2 digits of the whole and its 4 decimals, the point dropped before the
  // digits are taken (its byte less '0' would borrow from the digit after it).
  std::memcpy(&word, time + 8, 8);
  word = (word & 0xFFFF) | ((word >> 8) & 0x0000FFFFFFFF0000ULL);
  const std::uint64_t time_low = digits_value(word, 6);
  emit_mem(Decimal{mib_whole * 1000000 + mib_fraction, 6}, Decimal{time_high * 1000000 + time_low, 4}, v);
  return point + 24;
}
#endif

}  // namespace

// "MEM <MiB> <time>" as qprof and mprof write it (one space, plain decimals): most lines of
// every trace, parsed without splitting fields. Anything else takes the general path, which
// also words the errors.
// `limit`: the end of the readable buffer around the line (see scan_digits).
bool fast_mem_line(std::string_view line, const char* limit, Visitor& v) {
  if (line.size() < 7 || std::memcmp(line.data(), "MEM ", 4) != 0) return false;
  const char* p = line.data() + 4;
  const char* end = line.data() + line.size();
  if (limit == end) return false;  // nothing after the line to stop a run of digits: general path
  Decimal mib{}, t{};
  if (!scan_plain_decimal(p, limit, mib) || p >= end || *p != ' ') return false;
  ++p;
  if (!scan_plain_decimal(p, limit, t) || p != end) return false;
  emit_mem(mib, t, v);
  return true;
}

namespace {

// The common record whole, from its first byte to its newline, found without looking for the
// newline first: "MEM <MiB> <time>\n" in the fast forms, with 64 bytes readable at `rec`. Its
// length with the newline, or 0 (nothing done) for any other record.
[[gnu::always_inline]] inline std::size_t fast_mem_record(const char* rec, Visitor& v) {
#if defined(__SSE2__)
  if (std::memcmp(rec, "MEM ", 4) != 0) return 0;
  // Every offset looked at stays inside the window: a field's run is refused beyond 15 digits.
  const std::uint64_t digit = digit_mask(rec);
  if (const std::size_t used = own_form_record(rec, digit, v)) return used;
  Decimal mib{}, t{};
  std::size_t o = 4;
  if (!mask_decimal(rec, digit, o, mib) || rec[o] != ' ') return 0;
  ++o;
  if (!mask_decimal(rec, digit, o, t)) return 0;
  if (rec[o] == '\r') ++o;  // what the line reader takes off a CRLF line
  if (rec[o] != '\n') return 0;
  emit_mem(mib, t, v);
  return o + 1;
#else
  (void)rec;
  (void)v;
  return 0;
#endif
}

}  // namespace

// One call for a run of records (most of a trace), so that the parser is inlined in its loop
// rather than called, and saves and restores its registers, per line.
std::size_t fast_mem_records(const char* data, std::size_t size, Visitor& v, std::size_t& line) {
  std::size_t pos = 0;
  while (size - pos >= kMemRecordWindow) {
    v.at_line(line + 1);
    const std::size_t used = fast_mem_record(data + pos, v);
    if (used == 0) break;
    ++line;
    pos += used;
  }
  return pos;
}

}  // namespace qprof::trace::detail
