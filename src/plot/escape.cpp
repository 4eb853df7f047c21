// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/escape.hpp"

#include <cstdio>
#include <cstdint>

#include "qprof/common/safe_text.hpp"

namespace qprof::plot {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Valid UTF-8 with every control character replaced.
std::string clean(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      out += kReplacement;
      ++i;
    } else if (const std::size_t n = utf8_sequence_length(text, i); n == 0) {
      out += kReplacement;
      ++i;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      out += kReplacement;  // C1 control characters (U+0080–U+009F)
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

// DejaVu Sans advance widths of ' ' … '~' in thousandths of an em.
constexpr unsigned short kAsciiAdvance[95] = {
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361,  318, 337, 636, 636, 636,
    636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632,
    575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635,  611, 732, 684, 989, 685,
    611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352,  635, 634, 278, 278, 579,
    278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592,  525, 636, 337, 636, 838};

}  // namespace

std::string gp_string(std::string_view text) {
  const std::string cleaned = clean(text);
  std::string out;
  out.reserve(cleaned.size() + 2);
  out += '"';
  for (char c : cleaned) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '`':
        out += "\\140";
        break;  // never a backquote in the raw line: no substitution
      case '@':
        out += "\\100";
        break;  // nor an '@': no macro
      default:
        out += c;
    }
  }
  out += '"';
  return out;
}

std::size_t utf8_length(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string_view utf8_prefix(std::string_view text, std::size_t n) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == n) return text.substr(0, i);
      ++seen;
    }
  }
  return text;
}

std::string display_text(std::string_view text, std::size_t max_chars) {
  std::string s = clean(text);
  const std::size_t first = s.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  s = s.substr(first, s.find_last_not_of(' ') - first + 1);
  if (utf8_length(s) <= max_chars) return s;
  if (max_chars == 0) return {};
  std::string cut(utf8_prefix(s, max_chars - 1));
  while (!cut.empty() && cut.back() == ' ') cut.pop_back();
  return cut + "…";
}

double text_width_em(std::string_view text) {
  double w = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F)
      w += kAsciiAdvance[c - 0x20] / 1000.0;
    else if ((c & 0xC0) != 0x80)
      w += 1.0;  // the lead byte of any other code point
  }
  return w;
}

std::string gp_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

}  // namespace qprof::plot
