// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a trace through everything that reads one, gnuplot aside: the report in
// every format, the Quark YAML (read back by yaml-cpp: it must parse), the JSON (read back by
// nlohmann::json), and the chart with its gnuplot script (built, never run), whose raw text must
// never hold a backquote or an '@' (gnuplot's shell substitution and macros).
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "qprof/plot/chart.hpp"
#include "qprof/plot/reduce.hpp"
#include "qprof/plot/script.hpp"
#include "qprof/report/quark_yaml.hpp"
#include "qprof/report/report.hpp"
#include "qprof/trace/format.hpp"

namespace {

void report_formats(const qprof::trace::Trace& t) {
  using qprof::report::Format;
  for (qprof::analysis::Metric m : qprof::analysis::available_metrics(t)) {
    // As the command line allows (a stage table needs samples).
    if (!qprof::analysis::metric_info(m).windowed) continue;
    const qprof::report::Document doc = qprof::report::trace_report(t, m);
    for (Format f : {Format::text, Format::markdown, Format::csv}) {
      for (unsigned char c : qprof::report::render(doc, f)) {
        if (f != Format::csv && ((c < 0x20 && c != '\n') || c == 0x7F)) __builtin_trap();  // terminal-safe
      }
    }
    (void)nlohmann::json::parse(qprof::report::render(doc, Format::json));  // throws (a finding) if invalid
  }
  (void)YAML::Load(qprof::report::quark_yaml(t, {}));
  (void)YAML::Load(qprof::report::quark_yaml(t, {.in_progress = true}));
}

void chart(std::string_view text) {
  qprof::plot::ReduceOptions ro;
  ro.columns = 200;
  qprof::Result<qprof::plot::TraceData> d = qprof::plot::reduce_text(text, "fuzz.dat", ro, {});
  if (!d) return;
  std::vector<qprof::plot::TraceInput> inputs{{&*d, "fuzz"}};
  qprof::plot::PlotOptions o;
  o.children = true;
  const qprof::Result<qprof::plot::Chart> built =
      qprof::plot::build_chart(inputs, o, qprof::plot::Format::png, 640, 480);
  if (!built) return;
  const qprof::plot::Chart& c = *built;
  const std::vector<qprof::plot::StyleSource> styles{{"fuzz", "set style line 1 lc rgb 'red'\n"}};
  for (auto target : {qprof::plot::OutputTarget::fd3, qprof::plot::OutputTarget::named}) {
    const std::string script = qprof::plot::write_script(c, styles, target, "out.png").commands();
    if (script.find_first_of("`@") != std::string::npos) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    report_formats(qprof::trace::read_trace_text(text, "fuzz.dat"));
  } catch (const qprof::trace::ParseError&) {
  }
  chart(text);
  return 0;
}
