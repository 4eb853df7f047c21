// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/charset.hpp"

#include <langinfo.h>

#include <clocale>
#include <cstring>
#include <utility>

namespace qprof {

bool locale_is_utf8() {
  static const bool utf8 = [] {
    const char* current = std::setlocale(LC_CTYPE, nullptr);
    const std::string saved = current ? current : "C";
    if (!std::setlocale(LC_CTYPE, "")) return false;  // an unknown locale: C, which is ASCII
    const char* codeset = nl_langinfo(CODESET);
    const bool yes = codeset && (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
    std::setlocale(LC_CTYPE, saved.c_str());
    return yes;
  }();
  return utf8;
}

std::string locale_text(std::string_view text, bool utf8) {
  if (utf8) return std::string(text);
  static const std::pair<std::string_view, std::string_view> kMarks[] = {
      {"\u03a3", "sum"}, {"\u2013", "-"}, {"\u2014", "-"}, {"\u2265", ">="}, {"\u2264", "<="},
      {"\u2026", "..."}, {"\u00d7", "x"}, {"\u00b5", "u"}, {"\u2248", "~"},
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    for (const auto& [mark, ascii] : kMarks) {
      if (text.compare(i, mark.size(), mark) == 0) {
        out += ascii;
        i += mark.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

}  // namespace qprof
