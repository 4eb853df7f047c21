// SPDX-License-Identifier: Apache-2.0
// Escaping of the text fields of a trace, so that any label a program prints (newlines, invalid
// UTF-8, control characters) fits on one line that mprof's UTF-8 reader can still decode.
#include <cmath>

#include "qprof/common/safe_text.hpp"
#include "qprof/common/units.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::trace {
namespace {

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
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case ' ':
        if (escape_space)
          append_hex_escape(out, c);
        else
          out += ' ';
        break;
      default:
        if (c < 0x20 || c == 0x7F)
          append_hex_escape(out, c);
        else
          out += static_cast<char>(c);
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
    if (e == '\\') {
      out += '\\';
      ++i;
    } else if (e == 'n') {
      out += '\n';
      ++i;
    } else if (e == 'r') {
      out += '\r';
      ++i;
    } else if (e == 't') {
      out += '\t';
      ++i;
    } else if (e == 'x' && i + 3 < escaped.size() && hex_value(escaped[i + 2]) >= 0 && hex_value(escaped[i + 3]) >= 0) {
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

Bytes from_mib(double mib) { return bytes_from_double(mib * 1024.0 * 1024.0); }

}  // namespace qprof::trace
