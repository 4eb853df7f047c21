// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/safe_text.hpp"

#include <charconv>
#include <cstdint>

namespace qprof {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The code point of the valid sequence of `n` bytes at s[i].
std::uint32_t code_point(std::string_view s, std::size_t i, std::size_t n) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (n == 1) return b(0);
  std::uint32_t cp = b(0) & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (b(k) & 0x3F);
  return cp;
}

void append_escape(std::string& out, const char* prefix, std::uint32_t v, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  for (int d = digits - 1; d >= 0; --d) out += kHex[(v >> (4 * d)) & 0xF];
}

// Walks `s` as UTF-8: `on_char(i, n, cp)` for each valid sequence, U+FFFD for each invalid byte.
template <typename F>
std::string transform(std::string_view s, F&& on_char) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    on_char(out, s.substr(i, n), code_point(s, i, n));
    i += n;
  }
  return out;
}

bool plain_number(std::string_view s) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the first continuation byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) lo = 0xA0;  // overlong
    if (lead == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) lo = 0x90;  // overlong
    if (lead == 0xF4) hi = 0x8F;  // beyond U+10FFFF
  } else {
    return 0;  // a continuation byte, an overlong lead (C0, C1) or beyond F4
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

std::string valid_utf8(std::string_view s) {
  return transform(s, [](std::string& out, std::string_view seq, std::uint32_t) { out += seq; });
}

std::string terminal_text(std::string_view s) {
  return transform(s, [](std::string& out, std::string_view seq, std::uint32_t cp) {
    if (cp == '\n')
      out += "\\n";
    else if (cp == '\r')
      out += "\\r";
    else if (cp == '\t')
      out += "\\t";
    else if (cp < 0x20 || cp == 0x7F)
      append_escape(out, "\\x", cp, 2);
    else if ((cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) {
      append_escape(out, "\\u", cp, 4);
    } else {
      out += seq;
    }
  });
}

std::string terminal_lines(std::string_view s) {
  std::string out;
  for (;;) {
    const std::size_t nl = s.find('\n');
    out += terminal_text(s.substr(0, nl));
    if (nl == std::string_view::npos) return out;
    out += '\n';
    s.remove_prefix(nl + 1);
  }
}

std::string yaml_text(std::string_view s) {
  return transform(s, [](std::string& out, std::string_view seq, std::uint32_t cp) {
    if (cp == 0x7F || cp == 0xFFFE || cp == 0xFFFF)
      out += kReplacement;
    else
      out += seq;
  });
}

std::string spreadsheet_cell(std::string_view s) {
  std::string out = valid_utf8(s);
  if (!out.empty() && std::string_view("=+-@\t\r\n").find(out.front()) != std::string_view::npos &&
      !plain_number(out)) {
    out.insert(out.begin(), '\'');
  }
  return out;
}

}  // namespace qprof
