// SPDX-License-Identifier: Apache-2.0
// Text in the charset of the user's locale: qprof's own marks (Σ, –, ≥, …) are UTF-8, which a
// terminal in another charset shows as mojibake ("Σ" as "M-NM-#"). Where the locale's charset
// (LC_CTYPE from the environment) is not UTF-8 they are spelt in ASCII.
#pragma once

#include <string>
#include <string_view>

namespace qprof {

// Whether the environment's LC_CTYPE charset is UTF-8: nl_langinfo(CODESET) under
// setlocale(LC_CTYPE, ""), the process's own locale restored after. Asked once, then remembered.
bool locale_is_utf8();

// `text` as is under UTF-8; else with qprof's marks in ASCII (Σ → "sum", – → "-", ≥ → ">=",
// ≤ → "<=", … → "...", × → "x", µ → "u"). Other text (a command line) is left as it is.
std::string locale_text(std::string_view text, bool utf8);
inline std::string locale_text(std::string_view text) { return locale_text(text, locale_is_utf8()); }

}  // namespace qprof
