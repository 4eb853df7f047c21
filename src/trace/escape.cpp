// Escaping of the text fields of a trace, so that any label a program prints (newlines, invalid
// UTF-8, control characters) fits on one line that mprof's UTF-8 reader can still decode.
#include <cmath>

#include "qprof/trace/format.hpp"

namespace qprof::dat {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if the bytes there are not one.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
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
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

void append_hex_escape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xF];
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string escape_text(std::string_view raw, bool escape_space) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size();) {
    const auto c = static_cast<unsigned char>(raw[i]);
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence_length(raw, i);
      if (len == 0) {
        append_hex_escape(out, c);
        ++i;
      } else {
        out.append(raw.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case ' ':
        if (escape_space) append_hex_escape(out, c);
        else out += ' ';
        break;
      default:
        if (c < 0x20 || c == 0x7F) append_hex_escape(out, c);
        else out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

std::string unescape_text(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    const char c = escaped[i];
    if (c != '\\' || i + 1 == escaped.size()) {
      out += c;
      continue;
    }
    const char e = escaped[i + 1];
    if (e == '\\') { out += '\\'; ++i; }
    else if (e == 'n') { out += '\n'; ++i; }
    else if (e == 'r') { out += '\r'; ++i; }
    else if (e == 't') { out += '\t'; ++i; }
    else if (e == 'x' && i + 3 < escaped.size() && hex_value(escaped[i + 2]) >= 0 &&
             hex_value(escaped[i + 3]) >= 0) {
      out += static_cast<char>(hex_value(escaped[i + 2]) * 16 + hex_value(escaped[i + 3]));
      i += 3;
    } else {
      out += c;  // an unknown escape stays as written
    }
  }
  return out;
}

std::string func_name(std::string_view label) {
  std::string name = escape_text(label);
  for (char& c : name) {
    if (c == ' ') c = '_';
  }
  return name.empty() ? std::string("_") : name;
}

Bytes from_mib(double mib) { return static_cast<Bytes>(std::llround(mib * 1024.0 * 1024.0)); }

}  // namespace qprof::dat
